//! The draws that reach as far as users go, in a share of scenarios each: limits up to
//! `u32::MAX`, periods of hours, days and up to the longest the shared limiter accepts
//! ([`MAX_PERIOD`]), and keys up to [`MAX_KEY_LEN`] bytes of any text the key check lets
//! through (hash-tag braces, separators, spaces, control characters, multi-byte characters).
//!
//! Drawn from a generator of their own, so every other draw of a seed stays what it was; a
//! scenario drawn wide keeps its callers' count, so a long period makes a run of few calls
//! over a long span, not a long run.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fixed_window_redis::{MAX_KEY_LEN, MAX_ORIGIN_MICROS, MAX_PERIOD};

use crate::shared::server::SERVER_EPOCH_NS;

/// The share of scenarios whose limit is drawn large.
const WIDE_LIMIT_SHARE: f64 = 0.08;

/// The share of scenarios whose period is drawn long.
const WIDE_PERIOD_SHARE: f64 = 0.08;

/// The share of scenarios whose keys are drawn long or unusual.
const WIDE_KEYS_SHARE: f64 = 0.08;

/// The longest period the shared limiter accepts, in microseconds.
pub(crate) const MAX_PERIOD_US: u64 = MAX_PERIOD.as_secs() * 1_000_000;

/// An hour and a day, in microseconds.
const HOUR_US: u64 = 3_600_000_000;
const DAY_US: u64 = 24 * HOUR_US;

/// Pieces of the unusual keys: a hash tag's braces (whole, empty, unbalanced), separators,
/// a space, control characters, a Lua pattern's magic characters, multi-byte characters.
const PIECES: [&str; 14] = [
    "{", "}", "{}", "{tag}", ":", " ", "\n", "\t", "\0", "%", ".*", "é", "鍵", "🔑",
];

/// What the scenario of `seed` draws wide: each `None` where it keeps its ordinary draw.
#[derive(Debug)]
pub(crate) struct Wide {
    rng: ChaCha8Rng,
}

impl Wide {
    pub(crate) fn of(seed: u64) -> Wide {
        Wide {
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x0077_1DE0_0000),
        }
    }

    /// A large limit, in some scenarios: up to a few below `u32::MAX`, or anywhere from a
    /// hundred thousand up.
    pub(crate) fn limit(&mut self) -> Option<u32> {
        let rng = &mut self.rng;
        if !rng.random_bool(WIDE_LIMIT_SHARE) {
            return None;
        }
        Some(match rng.random_range(0..3) {
            0 => u32::MAX - rng.random_range(0..=3),
            1 => rng.random_range(1 << 31..=u32::MAX),
            _ => rng.random_range(100_000..1 << 31),
        })
    }

    /// A long period, in microseconds, in some scenarios: hours, days, or up to the longest
    /// the shared limiter accepts.
    pub(crate) fn period_us(&mut self) -> Option<u64> {
        let rng = &mut self.rng;
        if !rng.random_bool(WIDE_PERIOD_SHARE) {
            return None;
        }
        Some(match rng.random_range(0..4) {
            0 => rng.random_range(HOUR_US..=DAY_US),
            1 => rng.random_range(DAY_US..=366 * DAY_US),
            2 => MAX_PERIOD_US - rng.random_range(0..=DAY_US),
            _ => rng.random_range(366 * DAY_US..=MAX_PERIOD_US),
        })
    }

    /// In half the scenarios with a long period and no fixed origin, a fixed origin (server
    /// microseconds) that puts a boundary of the window of `period_us` within the traffic's
    /// first `span_ns` (an ordinary origin puts it a period after the first registration).
    pub(crate) fn origin_within(&mut self, period_us: u64, span_ns: u64) -> Option<u64> {
        let rng = &mut self.rng;
        if !rng.random_bool(0.5) {
            return None;
        }
        let start_us = SERVER_EPOCH_NS / 1_000;
        let boundary = start_us + rng.random_range(0..=span_ns / 1_000);
        Some(boundary.saturating_sub(period_us).min(MAX_ORIGIN_MICROS))
    }

    /// `count` keys, in some scenarios, each distinct: up to [`MAX_KEY_LEN`] bytes, of
    /// unusual pieces, plain text and its index.
    pub(crate) fn keys(&mut self, count: usize) -> Option<Vec<String>> {
        let rng = &mut self.rng;
        if !rng.random_bool(WIDE_KEYS_SHARE) {
            return None;
        }
        let long = rng.random_bool(0.5);
        Some(
            (0..count)
                .map(|k| {
                    let mut key = String::new();
                    for _ in 0..rng.random_range(1..=4) {
                        key.push_str(PIECES[rng.random_range(0..PIECES.len())]);
                    }
                    // Its index keeps it distinct.
                    let index = format!("#{k}");
                    let length = if long {
                        rng.random_range(MAX_KEY_LEN / 2..=MAX_KEY_LEN)
                    } else {
                        rng.random_range(1..=32)
                    };
                    while key.len() + index.len() < length {
                        key.push(char::from(b'a' + rng.random_range(0..26_u8)));
                    }
                    key.push_str(&index);
                    key
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use fixed_window_redis::check_key;

    use crate::scenario::ScenarioId;
    use crate::shared::scenario::SharedScenario;

    use super::*;

    #[test]
    fn some_scenarios_draw_limits_periods_and_keys_as_wide_as_the_limiter_accepts() {
        let scenarios: Vec<SharedScenario> = (0..2_000)
            .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
            .collect();
        let near_max = scenarios.iter().filter(|s| s.limit >= u32::MAX - 3).count();
        let large = scenarios.iter().filter(|s| s.limit >= 100_000).count();
        let days = scenarios.iter().filter(|s| s.period_us >= DAY_US).count();
        let centuries = scenarios
            .iter()
            .filter(|s| s.period_us >= MAX_PERIOD_US - DAY_US)
            .count();
        let long_keys = scenarios
            .iter()
            .filter(|s| s.keys.iter().any(|k| k.len() > MAX_KEY_LEN / 2))
            .count();
        let braces = scenarios
            .iter()
            .filter(|s| s.keys.iter().any(|k| k.contains('{')))
            .count();
        assert!(near_max > 10 && large > 100, "{near_max} {large}");
        assert!(days > 50 && centuries > 10, "{days} {centuries}");
        assert!(long_keys > 30 && braces > 30, "{long_keys} {braces}");
        for scenario in &scenarios {
            assert!((1..=MAX_PERIOD_US).contains(&scenario.period_us));
            assert!(scenario.limit >= 1);
            for key in &scenario.keys {
                assert_eq!(check_key(key), Ok(()), "{key:?}");
            }
            let distinct: std::collections::HashSet<&String> = scenario.keys.iter().collect();
            assert_eq!(distinct.len(), scenario.keys.len());
        }
    }
}
