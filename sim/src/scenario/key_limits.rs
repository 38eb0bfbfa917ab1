//! The limits of their own a keyed scenario gives some keys: two keyed scenarios in five give
//! up to three keys a limit at build, and change up to three keys' limits while the callers
//! run (lower, higher, taken away, now and then zero or past any ceiling: both refused).
//!
//! Drawn from a stream of the seed's own, so every other draw of the seed is unchanged.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The stream of the seed's generator that keys' own limits are drawn from.
const KEY_LIMITS_STREAM: u64 = 6;

/// The keys a scenario draws its own limits for: the first few, which its callers use most.
const MOST_KEYS: u64 = 8;

/// A `set_key_limit` (or, for `None`, a `clear_key_limit`) the scenario makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyLimitChange {
    /// Virtual time of the change.
    pub at: u64,
    /// The key whose limit changes.
    pub key: u64,
    /// The limit asked for; `None` takes the key's own limit away.
    pub limit: Option<u32>,
}

/// The limits of their own that a keyed scenario gives keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KeyLimits {
    /// Keys given a limit of their own when the limiter is built (`key_limit`), by key.
    pub built: Vec<(u64, u32)>,
    /// The changes made while the callers run, in order of virtual time.
    pub changes: Vec<KeyLimitChange>,
}

impl KeyLimits {
    /// Whether no key has a limit of its own at any time.
    pub fn is_empty(&self) -> bool {
        self.built.is_empty() && self.changes.is_empty()
    }
}

/// The keys' own limits of the keyed scenario of `seed`, configured with `limit`, whose
/// callers use keys below `keys` and arrive within `span` nanoseconds of virtual time.
pub(crate) fn draw(seed: u64, limit: u32, keys: u64, span: u64) -> KeyLimits {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(KEY_LIMITS_STREAM);
    if keys == 0 || !rng.random_bool(0.4) {
        return KeyLimits::default();
    }
    let keys = keys.min(MOST_KEYS);
    let own = |rng: &mut ChaCha8Rng| match rng.random_range(0..100) {
        0..50 => rng.random_range(1..=limit),
        _ => rng.random_range(limit..=limit.saturating_mul(3).max(limit.saturating_add(1))),
    };
    let mut built: Vec<(u64, u32)> = (0..rng.random_range(0..=3))
        .map(|_| (rng.random_range(0..keys), own(&mut rng)))
        .collect();
    // One limit per key, as a map holds them: the last drawn for a key.
    built.reverse();
    built.sort_by_key(|&(key, _)| key);
    built.dedup_by_key(|&mut (key, _)| key);
    let mut changes: Vec<KeyLimitChange> = (0..rng.random_range(0..=3))
        .map(|_| KeyLimitChange {
            at: rng.random_range(0..=span),
            key: rng.random_range(0..keys),
            limit: match rng.random_range(0..100) {
                0..80 => Some(own(&mut rng)),
                80..90 => None,
                90..95 => Some(0),
                _ => Some(u32::MAX),
            },
        })
        .collect();
    changes.sort_by_key(|change| change.at);
    KeyLimits { built, changes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_scenarios_give_keys_limits_at_build_and_change_them_every_way() {
        let drawn: Vec<KeyLimits> = (0..2_000).map(|seed| draw(seed, 10, 4, 1_000)).collect();
        let giving = drawn.iter().filter(|limits| !limits.is_empty()).count();
        assert!((600..1_000).contains(&giving), "{giving}");
        assert!(drawn.iter().any(|limits| !limits.built.is_empty()));
        let changes: Vec<KeyLimitChange> = drawn.iter().flat_map(|l| l.changes.clone()).collect();
        assert!(
            changes
                .iter()
                .any(|c| c.limit.is_some_and(|l| (1..10).contains(&l)))
        );
        assert!(
            changes
                .iter()
                .any(|c| c.limit.is_some_and(|l| l > 10 && l <= 30))
        );
        assert!(changes.iter().any(|c| c.limit.is_none()));
        assert!(changes.iter().any(|c| c.limit == Some(0)));
        assert!(changes.iter().any(|c| c.limit == Some(u32::MAX)));
        assert!(changes.iter().all(|c| c.at <= 1_000 && c.key < 4));
        for limits in &drawn {
            let keys: Vec<u64> = limits.built.iter().map(|&(key, _)| key).collect();
            assert!(keys.windows(2).all(|pair| pair[0] < pair[1]), "{keys:?}");
        }
        assert_eq!(draw(5, 10, 0, 1_000), KeyLimits::default());
    }
}
