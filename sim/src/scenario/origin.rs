//! The origin a scenario's limiter aligns its windows to: mostly its creation (the clock's
//! reading at virtual time 0), one scenario in five a drawn instant (`Origin::At`), and of the
//! rest one in ten whole periods of Unix time (`Origin::UnixEpoch`), with the Unix time the
//! clock's first reading stands for (the virtual clock's
//! [`unix_time`](fixed_window::Clock::unix_time)).
//!
//! That Unix time also sets the process's age against the grid: the clock's timeline starts
//! its first reading before the build, so the boundary before the build lies `unix mod period`
//! before it, before the timeline's start in a process younger than that. Half the Unix times
//! are drawn for it: a timeline starting on a boundary, a nanosecond before or after one, or
//! anywhere within the period before the first one (a young process), besides old ones.
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
/// An instant: whole periods before or after `start` (the grid extends back from an origin
/// after it), somewhere within a period of it (a grid shifted from the arrivals', its first
/// window begun before the timeline if `start` is younger than a period), near
/// `Instant::MAX`, or anywhere. A Unix time: of this century, a process's age against the
/// grid drawn for it (see the module's comment), a whole number of periods, or anywhere.
///
/// The last answer says whether the limiter is built at its clock's first reading (a process
/// of age zero): the scenario then moves its clock's readings back to start at zero.
pub(super) fn draw(seed: u64, start: u64, period: u64) -> (Origin, u64, bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(ORIGIN_STREAM);
    if !rng.random_bool(0.2) {
        if !rng.random_bool(0.1) {
            return (Origin::Creation, 0, false);
        }
        let age_zero = rng.random_bool(0.15);
        let start = if age_zero { 0 } else { start };
        // 2001 to 2099.
        let century = |rng: &mut ChaCha8Rng| {
            rng.random_range(1_000_000_000..4_100_000_000_u64) * 1_000_000_000
                + rng.random_range(0..1_000_000_000)
        };
        let unix = match rng.random_range(0..100) {
            0..50 => {
                // The process's age against the grid: how far into its period the Unix time
                // at the build is, against the clock's first reading `start`.
                let into = match rng.random_range(0..4) {
                    // The timeline starts on a boundary.
                    0 => start,
                    // A nanosecond after one: the boundary before the build is 1 ns before
                    // the timeline.
                    1 => start.saturating_add(1),
                    // A nanosecond before one.
                    2 => start.saturating_sub(1),
                    // Anywhere after the boundary: a young process.
                    _ => start.saturating_add(rng.random_range(1..=period.max(1))),
                };
                // Below a period, or the age cannot be had: an old process then.
                let into = if into < period {
                    into
                } else {
                    start % period.max(1)
                };
                let base = century(&mut rng);
                (base - base % period.max(1)).saturating_add(into)
            }
            50..80 => century(&mut rng),
            80..90 => {
                let periods = rng.random_range(0..=u64::MAX / period.max(1));
                periods.saturating_mul(period)
            }
            _ => rng.random(),
        };
        return (Origin::UnixEpoch, unix, age_zero);
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
    (Origin::At(Instant::from_nanos(at)), 0, false)
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
                (Origin::UnixEpoch, unix, _) => Some(unix),
                (_, unix, _) => {
                    assert_eq!(unix, 0);
                    None
                }
            })
            .collect();
        assert!((100..230).contains(&unix.len()), "{}", unix.len());
        assert!(unix.iter().any(|&unix| unix % 1_000 == 0));
        assert!(unix.iter().any(|&unix| unix % 1_000 != 0));
    }

    #[test]
    fn unix_times_place_young_processes_on_and_beside_boundaries() {
        // Clocks starting 300 ns before the build, periods of 1,000: how far into the period
        // the build is, against the 300 ns of the process's life.
        let mut young = 0;
        let mut on_boundary = 0;
        let mut age_zero = 0;
        for seed in 0..4_000 {
            if let (Origin::UnixEpoch, unix, zero) = draw(seed, 300, 1_000) {
                let into = unix % 1_000;
                let start = if zero { 0 } else { 300 };
                age_zero += usize::from(zero);
                on_boundary += usize::from(into == start);
                young += usize::from(into > start);
            }
        }
        assert!(young > 60, "{young}");
        assert!(on_boundary > 15, "{on_boundary}");
        assert!(age_zero > 15, "{age_zero}");
    }
}
