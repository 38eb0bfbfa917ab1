//! Numbers formatted for people: thousands separated, measured values to a few significant
//! digits, rates with an SI prefix, nanoseconds in a readable unit, instants in UTC.
//!
//! A measurement is good to two or three digits at best; printing `54748.50709677523` claims
//! fourteen, and makes the reader count them.

use std::time::{Duration, SystemTime};

/// Significant digits of every measured figure on the page.
pub const DIGITS: u32 = 3;

/// An integer with thousands separators.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::numbers::grouped;
///
/// assert_eq!(grouped(1_234_567_u64), "1,234,567");
/// assert_eq!(grouped(999_u32), "999");
/// ```
pub fn grouped(n: impl Into<u128>) -> String {
    group_digits(&n.into().to_string())
}

/// `n` things, grouped, the noun in the plural unless there is one: `1 scenario`,
/// `10,000 scenarios`.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::numbers::counted;
///
/// assert_eq!(counted(1_u32, "scenario"), "1 scenario");
/// assert_eq!(counted(10_000_u32, "scenario"), "10,000 scenarios");
/// ```
pub fn counted(n: impl Into<u128>, noun: &str) -> String {
    let n = n.into();
    format!("{} {noun}{}", grouped(n), if n == 1 { "" } else { "s" })
}

/// Commas between groups of three in a string of ASCII digits.
fn group_digits(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `value` rounded to `digits` significant digits (never rounding away digits before the
/// decimal point), with thousands separators; `–` if it is not a finite number.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::numbers::significant;
///
/// assert_eq!(significant(54_748.507_096_775_23, 3), "54,749");
/// assert_eq!(significant(15.391, 3), "15.4");
/// assert_eq!(significant(0.084_31, 3), "0.0843");
/// assert_eq!(significant(9.996, 3), "10.0");
/// assert_eq!(significant(f64::NAN, 3), "–");
/// ```
pub fn significant(value: f64, digits: u32) -> String {
    if !value.is_finite() {
        return "–".to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let mut decimals = decimals_for(value, digits);
    let mut text = format!("{value:.decimals$}");
    // Rounding may carry into a new leading digit (9.996 → 10.00): one decimal fewer then.
    let rounded: f64 = text.parse().unwrap_or(value);
    if decimals > 0 && decimals_for(rounded, digits) < decimals {
        decimals -= 1;
        text = format!("{value:.decimals$}");
    }
    let (sign, unsigned) = text
        .strip_prefix('-')
        .map_or(("", text.as_str()), |rest| ("-", rest));
    let (whole, fraction) = unsigned
        .split_once('.')
        .map_or((unsigned, None), |(w, f)| (w, Some(f)));
    let mut out = format!("{sign}{}", group_digits(whole));
    if let Some(fraction) = fraction {
        out.push('.');
        out.push_str(fraction);
    }
    out
}

/// Decimals that leave `digits` significant digits of a finite, non-zero `value`.
fn decimals_for(value: f64, digits: u32) -> usize {
    // A finite f64's decimal exponent lies within ±324: no truncation.
    #[allow(clippy::cast_possible_truncation)]
    let whole_digits = value.abs().log10().floor() as i64 + 1;
    usize::try_from(i64::from(digits) - whole_digits).unwrap_or(0)
}

/// `value` to [`DIGITS`] significant digits with an SI prefix (k, M, G), as rates are read.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::numbers::si;
///
/// assert_eq!(si(5_703_000.0), "5.70 M");
/// assert_eq!(si(54_748.507), "54.7 k");
/// assert_eq!(si(999_999.0), "1.00 M");
/// assert_eq!(si(950.0), "950");
/// ```
pub fn si(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_owned();
    }
    // Pick the prefix by the value as shown: 999,999 shows as 1.00 M, not 1,000 k.
    let rounded = if value == 0.0 {
        0.0
    } else {
        let scale = 10_f64.powf(value.abs().log10().floor() + 1.0 - f64::from(DIGITS));
        (value / scale).round() * scale
    };
    for (scale, prefix) in [(1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if rounded.abs() >= scale {
            return format!("{} {prefix}", significant(value / scale, DIGITS));
        }
    }
    significant(value, DIGITS)
}

/// A ratio to [`DIGITS`] significant digits, with its sign: `1.28×`.
///
/// # Examples
///
/// ```
/// assert_eq!(fixed_window_reports::numbers::ratio(1.2834), "1.28×");
/// ```
pub fn ratio(value: f64) -> String {
    format!("{}×", significant(value, DIGITS))
}

/// A span of nanoseconds in the unit that reads best, to [`DIGITS`] significant digits.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::numbers::nanoseconds;
///
/// assert_eq!(nanoseconds(15.391), "15.4 ns");
/// assert_eq!(nanoseconds(43_512_000.0), "43.5 ms");
/// assert_eq!(nanoseconds(450_000_000.0), "450 ms");
/// assert_eq!(nanoseconds(3.0e18), "95.1 years");
/// ```
pub fn nanoseconds(ns: f64) -> String {
    const UNITS: [(f64, &str); 8] = [
        (365.25 * 86_400e9, "years"),
        (86_400e9, "days"),
        (3_600e9, "h"),
        (60e9, "min"),
        (1e9, "s"),
        (1e6, "ms"),
        (1e3, "µs"),
        (1.0, "ns"),
    ];
    for (scale, unit) in UNITS {
        if ns.abs() >= scale {
            return format!("{} {unit}", significant(ns / scale, DIGITS));
        }
    }
    format!("{} ns", significant(ns, DIGITS))
}

/// An instant given as seconds since the Unix epoch, in UTC to the second (past the year
/// 9999, which no calendar formatter takes, in seconds).
///
/// # Examples
///
/// ```
/// use fixed_window_reports::numbers::utc;
///
/// assert_eq!(utc(1_700_000_000), "2023-11-14 22:13:20 UTC");
/// assert_eq!(utc(u64::MAX), "18,446,744,073,709,551,615 s after 1970-01-01 UTC");
/// ```
pub fn utc(unix_seconds: u64) -> String {
    /// The last second of the year 9999.
    const LAST: u64 = 253_402_300_799;
    if unix_seconds > LAST {
        return format!("{} s after 1970-01-01 UTC", grouped(unix_seconds));
    }
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(unix_seconds);
    humantime::format_rfc3339_seconds(at)
        .to_string()
        .replacen('T', " ", 1)
        .replace('Z', " UTC")
}

/// Seconds since the Unix epoch now, as the producers of the report's inputs record it.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}
