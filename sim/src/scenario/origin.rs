//! The origin a scenario's limiter aligns its windows to: mostly its creation (the clock's
//! reading at virtual time 0), one scenario in five a drawn instant (`Origin::At`), and of the
//! rest one in ten whole periods of Unix time (`Origin::UnixEpoch`), with the Unix time the
//! clock's first reading stands for (the virtual clock's
//! [`unix_time`](fixed_window::Clock::unix_time)).
//!
//! Drawn from a stream of the seed's own, so every other draw of the seed is unchanged, and a
//! seed that drew an instant before Unix time was drawn draws the same one.

use fixed_window::{Instant, Origin};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The stream of the seed's generator that the origin is drawn from.
const ORIGIN_STREAM: u64 = 4;

/// Where the limiter of the scenario of `seed` aligns its windows, and the Unix time its
/// clock's first reading `start` stands for (zero unless it aligns them to Unix time).
///
/// An instant: whole periods before or after `start` (readings before an origin belong to the
/// first window), somewhere within a period of it (a grid shifted from the arrivals'), near
/// `Instant::MAX`, or anywhere. A Unix time: of this century, a whole number of periods (the
/// first reading on a boundary), or anywhere.
pub(super) fn draw(seed: u64, start: u64, period: u64) -> (Origin, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(ORIGIN_STREAM);
    if !rng.random_bool(0.2) {
        if !rng.random_bool(0.1) {
            return (Origin::Creation, 0);
        }
        let unix = match rng.random_range(0..100) {
            // 2001 to 2099.
            0..60 => {
                rng.random_range(1_000_000_000..4_100_000_000_u64) * 1_000_000_000
                    + rng.random_range(0..1_000_000_000)
            }
            60..80 => {
                let periods = rng.random_range(0..=u64::MAX / period.max(1));
                periods.saturating_mul(period)
            }
            _ => rng.random(),
        };
        return (Origin::UnixEpoch, unix);
    }
    let periods = |rng: &mut ChaCha8Rng| period.saturating_mul(rng.random_range(1..=5));
    let at = match rng.random_range(0..100) {
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
    };
    (Origin::At(Instant::from_nanos(at)), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_scenario_in_five_draws_an_instant_and_some_fall_near_the_end_of_time() {
        let drawn: Vec<u64> = (0..1_000)
            .filter_map(|seed| match draw(seed, 1_000_000, 1_000).0 {
                Origin::At(at) => Some(at.as_nanos()),
                _ => None,
            })
            .collect();
        assert!((150..250).contains(&drawn.len()), "{}", drawn.len());
        assert!(drawn.iter().any(|&at| at < 1_000_000));
        assert!(drawn.iter().any(|&at| at > 1_000_000 && at < 1_010_000));
        assert!(drawn.iter().any(|&at| at >= u64::MAX - 3_000));
    }

    #[test]
    fn one_in_twelve_aligns_to_unix_time_some_on_a_boundary() {
        let unix: Vec<u64> = (0..2_000)
            .filter_map(|seed| match draw(seed, 1_000_000, 1_000) {
                (Origin::UnixEpoch, unix) => Some(unix),
                (_, unix) => {
                    assert_eq!(unix, 0);
                    None
                }
            })
            .collect();
        assert!((100..230).contains(&unix.len()), "{}", unix.len());
        assert!(unix.iter().any(|&unix| unix % 1_000 == 0));
        assert!(unix.iter().any(|&unix| unix % 1_000 != 0));
    }
}
