//! The resolution of a simulated clock: most clocks read exact nanoseconds, the rest tick
//! coarsely, as real ones do (1 µs, 1 ms, the 15.625 ms tick of a default Windows timer, or a
//! virtual machine's coarse clock, up to a quarter of the period). One rule for the plain and
//! keyed scenarios' clock and for each shared process's: the ranges drawn, and how a reading
//! is rounded to the tick.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The stream of a plain scenario's seed that its clock's resolution is drawn from.
const RESOLUTION_STREAM: u64 = 7;

/// The tick, in nanoseconds, of the clock of the plain or keyed scenario of `seed` whose
/// period is `period` nanoseconds: drawn by [`pick`] from a stream of the seed's own, so every
/// other draw of the seed is unchanged.
pub(crate) fn draw(seed: u64, period: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(RESOLUTION_STREAM);
    pick(&mut rng, period)
}

/// A clock's tick, in nanoseconds, for a period of `period` nanoseconds: 1 (exact) seven
/// times in ten, else 1 µs (8 %), 1 ms (8 %), 15.625 ms (7 %) or from 1 ns to a quarter of
/// the period (7 %).
pub(crate) fn pick(rng: &mut ChaCha8Rng, period: u64) -> u64 {
    match rng.random_range(0..100) {
        0..70 => 1,
        70..78 => 1_000,
        78..86 => 1_000_000,
        86..93 => 15_625_000,
        _ => rng.random_range(1..=(period / 4).max(1)),
    }
}

/// The reading a clock of `tick` nanoseconds shows when the exact time is `exact`: rounded
/// down to a whole tick, so it never runs ahead of the exact one (a `tick` of 0 or 1 reads
/// exact nanoseconds).
pub(crate) fn round_down(exact: u64, tick: u64) -> u64 {
    exact - exact % tick.max(1)
}

/// The first reading at or after `target` of a clock of `tick` nanoseconds (`u64::MAX` past
/// the last): where a wait or a timer for `target` ends on that clock.
pub(crate) fn first_reading_from(target: u64, tick: u64) -> u64 {
    target
        .checked_next_multiple_of(tick.max(1))
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::{draw, first_reading_from, round_down};

    #[test]
    fn most_clocks_are_exact_and_every_kind_of_tick_is_drawn() {
        let ticks: Vec<u64> = (0..1_000).map(|seed| draw(seed, 4_000_000_000)).collect();
        let exact = ticks.iter().filter(|&&tick| tick == 1).count();
        assert!((600..800).contains(&exact), "{exact}");
        for tick in [1_000, 1_000_000, 15_625_000] {
            assert!(ticks.contains(&tick), "{tick}");
        }
        assert!(ticks.iter().any(|&tick| tick > 1 && tick % 1_000 != 0));
        assert!(ticks.iter().all(|&tick| tick <= 1_000_000_000));
    }

    #[test]
    fn readings_round_down_and_a_target_is_first_read_at_the_tick_at_or_after_it() {
        assert_eq!(round_down(2_500, 1_000), 2_000);
        assert_eq!(round_down(2_500, 1), 2_500);
        assert_eq!(round_down(2_500, 0), 2_500);
        assert_eq!(first_reading_from(2_001, 1_000), 3_000);
        assert_eq!(first_reading_from(2_000, 1_000), 2_000);
        assert_eq!(first_reading_from(u64::MAX - 1, 1_000), u64::MAX);
        assert_eq!(first_reading_from(7, 0), 7);
    }
}
