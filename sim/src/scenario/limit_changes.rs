//! The limit changes a scenario makes while its callers run (`set_limit`): one scenario in five
//! changes the limit one to three times, mostly lower or higher, now and then to zero or past
//! any limiter's ceiling (both refused, the limit unchanged).
//!
//! Drawn from a stream of the seed's own, so every other draw of the seed is unchanged.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The stream of the seed's generator that limit changes are drawn from.
const LIMIT_STREAM: u64 = 5;

/// A `set_limit` the scenario makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LimitChange {
    /// Virtual time of the change.
    pub at: u64,
    /// The limit asked for.
    pub limit: u32,
}

/// The limit changes of the scenario of `seed`, configured with `limit`, whose callers arrive
/// within `span` nanoseconds of virtual time: in order of time.
pub(super) fn draw(seed: u64, limit: u32, span: u64) -> Vec<LimitChange> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(LIMIT_STREAM);
    if !rng.random_bool(0.2) {
        return Vec::new();
    }
    let mut changes: Vec<LimitChange> = (0..rng.random_range(1..=3))
        .map(|_| LimitChange {
            at: rng.random_range(0..=span),
            limit: match rng.random_range(0..100) {
                0..45 => rng.random_range(1..=limit),
                45..90 => {
                    rng.random_range(limit..=limit.saturating_mul(2).max(limit.saturating_add(1)))
                }
                90..95 => 0,
                _ => u32::MAX,
            },
        })
        .collect();
    changes.sort_by_key(|change| change.at);
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_scenario_in_five_changes_its_limit_both_ways_and_refused_ones_too() {
        let drawn: Vec<Vec<LimitChange>> = (0..2_000).map(|seed| draw(seed, 10, 1_000)).collect();
        let changing = drawn.iter().filter(|changes| !changes.is_empty()).count();
        assert!((300..500).contains(&changing), "{changing}");
        let all: Vec<LimitChange> = drawn.into_iter().flatten().collect();
        assert!(all.iter().any(|change| (1..10).contains(&change.limit)));
        assert!(
            all.iter()
                .any(|change| change.limit > 10 && change.limit <= 20)
        );
        assert!(all.iter().any(|change| change.limit == 0));
        assert!(all.iter().any(|change| change.limit == u32::MAX));
        assert!(all.iter().all(|change| change.at <= 1_000));
    }
}
