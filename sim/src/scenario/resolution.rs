//! The resolution of a scenario's clock: most clocks read exact nanoseconds, the rest tick
//! coarsely, as real ones do (1 µs, 1 ms, the 15.625 ms tick of a default Windows timer, or a
//! virtual machine's coarse clock, up to a quarter of the period).
//!
//! Drawn from a stream of the seed's own, so every other draw of the seed is unchanged.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The stream of the seed's generator that the resolution is drawn from.
const RESOLUTION_STREAM: u64 = 7;

/// The tick, in nanoseconds, of the clock of the scenario of `seed` whose period is `period`
/// nanoseconds: 1 (exact) for seven scenarios in ten.
pub(super) fn draw(seed: u64, period: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(RESOLUTION_STREAM);
    match rng.random_range(0..100) {
        0..70 => 1,
        70..78 => 1_000,
        78..86 => 1_000_000,
        86..93 => 15_625_000,
        _ => rng.random_range(1..=(period / 4).max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::draw;

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
}
