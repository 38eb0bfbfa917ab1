//! The header fields a limited HTTP response carries: `Retry-After` (RFC 9110) and the IETF
//! httpapi draft's `RateLimit-Policy` and `RateLimit`, as revision 10 of the draft
//! (draft-ietf-httpapi-ratelimit-headers-10, the newest) defines them: each a structured-field
//! list (RFC 9651) of items, the item a policy's name as a String with Integer parameters,
//! `q` (quota) and `w` (window, seconds) in `RateLimit-Policy`, `r` (remaining) and `t`
//! (seconds to reset) in `RateLimit`. The optional `qu` (quota unit, "requests" by default)
//! and `pk` (partition key) are not sent: the unit is requests (or the weights a caller
//! chose), and the key is the client's to know.

use core::fmt::Write as _;
use core::time::Duration;

use http::HeaderValue;
use http::header::HeaderName;

/// `RateLimit-Policy`: the quota policies a server applies, `"name";q=limit;w=seconds`.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// `RateLimit`: the state of each policy for this request, `"name";r=remaining;t=seconds`.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// What the `RateLimit-Policy` and `RateLimit` fields say of one limiter: its name (the
/// policy's name), its limit (the quota, `q`) and its period (the window, `w`).
///
/// The draft counts in whole seconds, so the window and the time to reset are rounded up: a
/// client that waits the advertised seconds never arrives early. A 500 ms period is advertised
/// as `w=1`. A structured-field Integer has at most 15 digits, so a longer window or reset
/// (over 31 million years) is advertised as [`MAX_SECONDS`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::http::RateLimitFields;
///
/// let fields = RateLimitFields::new("api", 100, Duration::from_secs(60));
/// assert_eq!(fields.policy(), "\"api\";q=100;w=60");
/// assert_eq!(fields.rate_limit(42, Duration::from_millis(12_300)), "\"api\";r=42;t=13");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateLimitFields {
    name: &'static str,
    limit: u32,
    period: Duration,
}

impl RateLimitFields {
    /// The fields of a limiter named `name` allowing `limit` calls per `period`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::http::RateLimitFields;
    ///
    /// assert_eq!(RateLimitFields::new("api", 1, Duration::from_secs(1)).name(), "api");
    /// ```
    pub fn new(name: &'static str, limit: u32, period: Duration) -> RateLimitFields {
        RateLimitFields {
            name,
            limit,
            period,
        }
    }

    /// The policy's name: the limiter's.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::http::RateLimitFields;
    ///
    /// assert_eq!(RateLimitFields::new("search", 1, Duration::from_secs(1)).name(), "search");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The `RateLimit-Policy` item: `"name";q=limit;w=seconds`.
    ///
    /// # Examples
    ///
    /// A window shorter than a second is advertised as one second.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::http::RateLimitFields;
    ///
    /// let fields = RateLimitFields::new("burst", 5, Duration::from_millis(200));
    /// assert_eq!(fields.policy(), "\"burst\";q=5;w=1");
    /// ```
    pub fn policy(&self) -> HeaderValue {
        let mut item = self.item();
        // Infallible: writing to a String.
        let _ = write!(item, ";q={};w={}", self.limit, integer_seconds(self.period));
        header_value(item)
    }

    /// The `RateLimit` item for a request that leaves `remaining` permits in a window
    /// ending `reset` from now: `"name";r=remaining;t=seconds`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::http::RateLimitFields;
    ///
    /// let fields = RateLimitFields::new("api", 10, Duration::from_secs(10));
    /// assert_eq!(fields.rate_limit(0, Duration::from_secs(4)), "\"api\";r=0;t=4");
    /// ```
    pub fn rate_limit(&self, remaining: u32, reset: Duration) -> HeaderValue {
        let mut item = self.item();
        // Infallible: writing to a String.
        let _ = write!(item, ";r={remaining};t={}", integer_seconds(reset));
        header_value(item)
    }

    /// The policy's name as a structured-field string (RFC 9651 §3.3.3): quoted, with `"`
    /// and `\` escaped. A name is `&'static str` chosen by the program; a character a header
    /// cannot carry (outside printable ASCII) is written as `?` rather than failing the
    /// response.
    fn item(&self) -> String {
        let mut item = String::with_capacity(self.name.len() + 24);
        item.push('"');
        for c in self.name.chars() {
            match c {
                '"' | '\\' => {
                    item.push('\\');
                    item.push(c);
                }
                ' '..='~' => item.push(c),
                _ => item.push('?'),
            }
        }
        item.push('"');
        item
    }
}

/// `Retry-After` for a wait of `wait`: whole seconds, rounded up (RFC 9110 §10.2.3 counts
/// delay-seconds as a non-negative integer).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::http::retry_after;
///
/// assert_eq!(retry_after(Duration::from_millis(1)), "1");
/// assert_eq!(retry_after(Duration::from_secs(30)), "30");
/// assert_eq!(retry_after(Duration::ZERO), "0");
/// ```
pub fn retry_after(wait: Duration) -> HeaderValue {
    HeaderValue::from(seconds_up(wait))
}

/// The largest structured-field Integer (RFC 9651 §3.3.1: at most 15 digits), the most seconds
/// `w` and `t` advertise.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::http::{MAX_SECONDS, RateLimitFields};
///
/// let fields = RateLimitFields::new("forever", 1, Duration::MAX);
/// assert_eq!(fields.policy(), format!("\"forever\";q=1;w={MAX_SECONDS}").as_str());
/// ```
pub const MAX_SECONDS: u64 = 999_999_999_999_999;

/// `duration` in whole seconds, rounded up, as a structured-field Integer: at most
/// [`MAX_SECONDS`].
fn integer_seconds(duration: Duration) -> u64 {
    seconds_up(duration).min(MAX_SECONDS)
}

/// `duration` in whole seconds, rounded up; `Duration::MAX` is `u64::MAX` seconds.
pub(crate) fn seconds_up(duration: Duration) -> u64 {
    let seconds = duration.as_secs();
    if duration.subsec_nanos() == 0 {
        seconds
    } else {
        seconds.saturating_add(1)
    }
}

/// `text`, which holds only printable ASCII by construction.
fn header_value(text: String) -> HeaderValue {
    HeaderValue::try_from(text).unwrap_or_else(|_| HeaderValue::from_static("\"?\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_up_and_saturate() {
        assert_eq!(seconds_up(Duration::ZERO), 0);
        assert_eq!(seconds_up(Duration::from_nanos(1)), 1);
        assert_eq!(seconds_up(Duration::from_secs(2)), 2);
        assert_eq!(seconds_up(Duration::from_nanos(2_000_000_001)), 3);
        assert_eq!(seconds_up(Duration::MAX), u64::MAX);
    }

    #[test]
    fn names_are_escaped_as_structured_field_strings() {
        let fields = RateLimitFields::new("a\"b\\c", 1, Duration::from_secs(1));
        assert_eq!(fields.policy(), "\"a\\\"b\\\\c\";q=1;w=1");
        let odd = RateLimitFields::new("naïve\n", 1, Duration::from_secs(1));
        assert_eq!(odd.policy(), "\"na?ve?\";q=1;w=1");
    }

    #[test]
    fn windows_and_resets_stay_within_fifteen_digits() {
        let fields = RateLimitFields::new("api", 1, Duration::from_secs(MAX_SECONDS + 1));
        assert_eq!(fields.policy(), "\"api\";q=1;w=999999999999999");
        let exact = RateLimitFields::new("api", 1, Duration::from_secs(MAX_SECONDS));
        assert_eq!(exact.policy(), "\"api\";q=1;w=999999999999999");
        assert_eq!(
            fields.rate_limit(0, Duration::MAX),
            "\"api\";r=0;t=999999999999999"
        );
    }

    #[test]
    fn an_endless_wait_is_the_largest_number() {
        assert_eq!(retry_after(Duration::MAX), u64::MAX.to_string().as_str());
    }
}
