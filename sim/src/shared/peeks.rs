//! Which callers of a shared scenario peek before their call, swarm style: one scenario in
//! four, a share of its callers from 5 % to 30 %.
//!
//! Drawn from a generator of the seed's own, so every other draw of a seed is what it was
//! before peeks existed; and decided per caller by a hash of what the caller is (its arrival,
//! process and key), not of its index, so that cutting callers (shrinking) keeps each kept
//! caller's peek.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::scenario::{self, mix};
use crate::shared::scenario::SharedCaller;

/// Mixed into the seed for the generator the peeks are drawn from.
const PEEKS_SEED: u64 = 0x0BEE_C0FF_EE57;

/// The callers of one shared scenario that peek before their call: the plain simulator's
/// rule, from a generator of its own and by what each caller is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peeks(scenario::Peeks);

impl Peeks {
    /// The peeking callers of the shared scenario of `seed`.
    pub(crate) fn draw(seed: u64) -> Peeks {
        Peeks(scenario::Peeks::of(&mut ChaCha8Rng::seed_from_u64(
            seed ^ PEEKS_SEED,
        )))
    }

    /// Whether any caller of the scenario peeks.
    #[cfg(test)]
    pub(crate) fn any(self) -> bool {
        self.0.any()
    }

    /// Whether `caller` peeks before its call.
    pub(crate) fn before(self, caller: &SharedCaller) -> bool {
        let who =
            mix(caller.arrival ^ mix(u64::from(caller.process) << 16 | u64::from(caller.key)));
        self.0.picks(who)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::scenario::Weight;

    #[test]
    fn about_a_quarter_of_scenarios_peek_at_a_share_of_their_callers() {
        let peeking = (0..400).filter(|&seed| Peeks::draw(seed).0.any()).count();
        assert!((60..140).contains(&peeking), "{peeking} of 400");
        let peeks = (0..400)
            .map(Peeks::draw)
            .find(|peeks| peeks.0.any())
            .expect("some scenario peeks");
        let callers = (0..10_000_u64)
            .filter(|&arrival| {
                peeks.before(&SharedCaller {
                    arrival: arrival * 7_919,
                    process: 0,
                    key: 0,
                    waits: false,
                    weight: Weight::One,
                })
            })
            .count();
        assert!((400..3_100).contains(&callers), "{callers} of 10,000");
    }
}
