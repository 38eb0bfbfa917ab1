//! Numbers formatted for people, on their own and on the rendered page.

use fixed_window_reports::numbers::{grouped, nanoseconds, ratio, si, significant, utc};
use fixed_window_reports::{Inputs, render};

use crate::fixtures;

#[test]
fn integers_are_grouped_in_thousands() {
    assert_eq!(grouped(0_u32), "0");
    assert_eq!(grouped(1_000_u32), "1,000");
    assert_eq!(grouped(247_948_u64), "247,948");
    assert_eq!(
        grouped(u128::MAX),
        "340,282,366,920,938,463,463,374,607,431,768,211,455"
    );
}

#[test]
fn measured_values_keep_a_few_significant_digits() {
    assert_eq!(significant(54_748.507_096_775_23, 3), "54,749");
    assert_eq!(significant(104.1, 3), "104");
    assert_eq!(significant(15.39, 3), "15.4");
    assert_eq!(significant(9.48, 3), "9.48");
    assert_eq!(significant(0.035_999, 3), "0.0360");
    assert_eq!(significant(-1_234.6, 2), "-1,235");
    assert_eq!(significant(0.0, 3), "0");
    assert_eq!(significant(f64::INFINITY, 3), "–");
}

#[test]
fn rates_take_an_si_prefix_and_spans_a_unit() {
    assert_eq!(si(6_580_123.4), "6.58 M");
    assert_eq!(si(11_612_000_000.0), "11.6 G");
    assert_eq!(si(999.6), "1.00 k");
    assert_eq!(ratio(0.357_919), "0.358×");
    assert_eq!(nanoseconds(0.5), "0.500 ns");
    assert_eq!(nanoseconds(2_500.0), "2.50 µs");
    assert_eq!(nanoseconds(90e9), "1.50 min");
    assert_eq!(nanoseconds(123_456_789_012.0), "2.06 min");
}

#[test]
fn instants_are_shown_in_utc() {
    assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
    assert_eq!(utc(1_750_000_000), "2025-06-15 15:06:40 UTC");
}

/// The most significant digits of any decimal fraction in `text` (`0.00400` has three):
/// counts, thousands separated, are exact and not counted.
fn most_significant_digits(text: &str) -> usize {
    let mut most = 0;
    for (i, _) in text.match_indices('.') {
        let before = text[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect::<Vec<_>>();
        let after: Vec<char> = text[i + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if before.is_empty() || after.is_empty() {
            continue;
        }
        let digits: String = before.iter().rev().chain(&after).collect();
        most = most.max(digits.trim_start_matches('0').len());
    }
    most
}

#[test]
fn the_page_shows_no_figure_with_more_digits_than_it_measured() {
    let report = render(&Inputs::gather(&fixtures::complete()));
    // The charts' SVG coordinates are for the browser, not the reader: leave them out.
    let mut text = report.html.clone();
    for (_, svg) in &report.charts {
        text = text.replace(svg.as_str(), "");
    }
    assert!(most_significant_digits(&text) <= 4, "{text}");
    // The fixture summary's 1500.1644006789 calls per second and 0.7999123456 s.
    assert!(text.contains("<td>1.50 k calls/s</td>"), "{text}");
    assert!(text.contains("<td>800 ms</td>"), "{text}");
    assert!(text.contains("<td>2.06 min</td>"), "{text}");
    assert!(text.contains("<td>1,200</td>"), "{text}");
    // The seed is an identifier: not grouped.
    assert!(text.contains("<td>seed</td><td>42</td>"), "{text}");
}
