//! Which callers peek before their call, swarm style: one scenario in four, a share of its
//! callers from 5 % to 30 % (of every kind but drains).
//!
//! Drawn from a stream of the seed's own, and decided per caller by a hash of the caller's
//! index, so every other draw of a seed is what it was before peeks existed, and cutting
//! callers (shrinking) keeps each kept caller's peek.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The stream of the seed's generator that the share of peeking callers is drawn from.
const PEEKS_STREAM: u64 = 6;

/// The callers of one scenario that peek before their call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peeks {
    /// Peeking callers per 2^32: none in most scenarios.
    share: u64,
    /// Mixed with a caller's index to decide it.
    salt: u64,
}

impl Peeks {
    /// The peeking callers of the scenario of `seed`.
    pub(crate) fn draw(seed: u64) -> Peeks {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(PEEKS_STREAM);
        Peeks::of(&mut rng)
    }

    /// The share of peeking callers and the salt, drawn from `rng`: no peek in three
    /// scenarios of four, else 5 % to 30 % of the callers.
    pub(crate) fn of(rng: &mut ChaCha8Rng) -> Peeks {
        let share = if rng.random_bool(0.25) {
            rng.random_range((1u64 << 32) / 20..(1u64 << 32) * 3 / 10)
        } else {
            0
        };
        Peeks {
            share,
            salt: rng.random(),
        }
    }

    /// Whether any caller peeks.
    #[cfg(test)]
    pub(crate) fn any(self) -> bool {
        self.share > 0
    }

    /// Whether the caller whose identity hashes to `who` peeks.
    pub(crate) fn picks(self, who: u64) -> bool {
        self.share > 0 && mix(self.salt ^ who) >> 32 < self.share
    }

    /// Whether caller `caller` peeks before its call.
    pub(crate) fn before(self, caller: u32) -> bool {
        self.picks(u64::from(caller))
    }
}

/// The finaliser of `SplitMix64`: every bit of the input reaches every bit of the output.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_a_quarter_of_scenarios_peek_at_a_share_of_their_callers() {
        let peeking = (0..400).filter(|&seed| Peeks::draw(seed).share > 0).count();
        assert!((60..140).contains(&peeking), "{peeking} of 400");
        let peeks = (0..400)
            .map(Peeks::draw)
            .find(|peeks| peeks.share > 0)
            .expect("some scenario peeks");
        let callers = (0..10_000).filter(|&caller| peeks.before(caller)).count();
        assert!((400..3_100).contains(&callers), "{callers} of 10,000");
    }
}
