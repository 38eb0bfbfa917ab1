//! The flood: a rare scenario whose limit is above 65,535 and whose tens of thousands of
//! callers all arrive in one window, so that a window grants more permits than a `u16` counts
//! (no other pattern draws more than a few hundred callers).
//!
//! Whether a seed floods is decided on a stream of its own, so that every other seed draws the
//! very scenario it drew before floods existed.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One seed in this many floods in a plain sweep: some twenty floods in CI's sweep of 200,000
/// scenarios, each worth a few hundred ordinary scenarios (a few per cent of the sweep's
/// time), and never none (the chance is about `e^-20`).
pub(crate) const PLAIN_ONE_IN: u64 = 10_000;

/// One seed in this many floods in a keyed sweep: some ten floods in CI's keyed sweep of
/// 5,000 scenarios. A multiple of it floods in both sweeps ([`PLAIN_ONE_IN`] is one).
pub(crate) const KEYED_ONE_IN: u64 = 500;

/// The random stream (of the scenario's seed) that decides and draws a flood.
const FLOOD_STREAM: u64 = 2;

/// The least limit of a flood: one above `u16::MAX`.
const LEAST_LIMIT: u32 = 65_536;

/// A flood a seed drew: its limit, and the generator its arrivals are drawn from.
#[derive(Debug, Clone)]
pub(super) struct Flood {
    /// The limit, above 65,535.
    pub(super) limit: u32,
    rng: ChaCha8Rng,
}

impl Flood {
    /// The flood of `seed`, if it floods when one seed in `one_in` does.
    pub(super) fn draw(seed: u64, one_in: u64) -> Option<Flood> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(FLOOD_STREAM);
        // One draw for every rate: a seed that floods one in 10,000 floods one in 500 too.
        if !rng.random::<u64>().is_multiple_of(one_in.max(1)) {
            return None;
        }
        let limit = rng.random_range(LEAST_LIMIT..=80_000);
        Some(Flood { limit, rng })
    }

    /// The arrivals, in order: somewhat more callers than the limit (well under 100,000), all
    /// in the first half of one of the first few windows of `period` nanoseconds, so that the
    /// window fills, and its last permits are past the 65,535th.
    pub(super) fn arrivals(mut self, period: u64) -> Vec<u64> {
        let calls = self.limit + self.rng.random_range(16..=4_096);
        let start = period.saturating_mul(self.rng.random_range(0..=3));
        let spread = period / 2;
        let mut arrivals: Vec<u64> = (0..calls)
            .map(|_| start.saturating_add(self.rng.random_range(0..=spread)))
            .collect();
        arrivals.sort_unstable();
        arrivals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_rare_and_a_plain_flood_floods_a_keyed_sweep_too() {
        let plain: Vec<u64> = (0..200_000)
            .filter(|&seed| Flood::draw(seed, PLAIN_ONE_IN).is_some())
            .collect();
        assert!((5..=40).contains(&plain.len()), "{} floods", plain.len());
        assert!(
            plain
                .iter()
                .all(|&seed| Flood::draw(seed, KEYED_ONE_IN).is_some())
        );
    }

    #[test]
    fn a_flood_fills_one_window_past_u16() {
        let seed = (0..100_000)
            .find(|&seed| Flood::draw(seed, KEYED_ONE_IN).is_some())
            .unwrap();
        let flood = Flood::draw(seed, KEYED_ONE_IN).unwrap();
        let limit = flood.limit;
        assert!(limit > u32::from(u16::MAX));
        let arrivals = flood.arrivals(1_000);
        assert!(arrivals.len() > limit as usize && arrivals.len() < 100_000);
        let window = arrivals[0] / 1_000;
        assert!(arrivals.iter().all(|&at| at / 1_000 == window));
        assert!(arrivals.is_sorted());
    }
}
