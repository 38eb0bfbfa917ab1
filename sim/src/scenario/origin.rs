//! The origin a scenario's limiter aligns its windows to: mostly its creation (the clock's
//! reading at virtual time 0), one scenario in five a drawn instant (`Origin::At`).
//!
//! Drawn from a stream of the seed's own, so every other draw of the seed is unchanged.
//! `Origin::UnixEpoch` is not drawn: the limiter matches it with the system's wall clock
//! (`SystemTime::now()`), not with the clock it is given, so no run of it could be replayed.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The stream of the seed's generator that the origin is drawn from.
const ORIGIN_STREAM: u64 = 4;

/// The instant the limiter of the scenario of `seed` aligns its windows to, if not its
/// creation at the clock's reading `start`: whole periods before or after `start` (readings
/// before an origin belong to the first window), somewhere within a period of it (a grid
/// shifted from the arrivals'), near `Instant::MAX`, or anywhere.
pub(super) fn draw(seed: u64, start: u64, period: u64) -> Option<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(ORIGIN_STREAM);
    if !rng.random_bool(0.2) {
        return None;
    }
    let periods = |rng: &mut ChaCha8Rng| period.saturating_mul(rng.random_range(1..=5));
    Some(match rng.random_range(0..100) {
        0..30 => start.saturating_sub(periods(&mut rng)),
        30..50 => start.saturating_add(periods(&mut rng)),
        50..70 => {
            let offset = rng.random_range(0..period.max(1));
            if rng.random_bool(0.5) {
                start.saturating_sub(offset)
            } else {
                start.saturating_add(offset)
            }
        }
        70..85 => u64::MAX - rng.random_range(0..=period.min(1 << 40).saturating_mul(3)),
        _ => rng.random(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_scenario_in_five_draws_an_instant_and_some_fall_near_the_end_of_time() {
        let drawn: Vec<u64> = (0..1_000)
            .filter_map(|seed| draw(seed, 1_000_000, 1_000))
            .collect();
        assert!((150..250).contains(&drawn.len()), "{}", drawn.len());
        assert!(drawn.iter().any(|&at| at < 1_000_000));
        assert!(drawn.iter().any(|&at| at > 1_000_000 && at < 1_010_000));
        assert!(drawn.iter().any(|&at| at >= u64::MAX - 3_000));
    }
}
