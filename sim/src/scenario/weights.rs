//! The weights and drains a scenario draws over its callers, swarm style: one scenario in three
//! weighs its attempts, one in five drains now and then.
//!
//! They come from a stream of the seed's own, so every draw before them (the configuration, the
//! clock, the arrivals, the callers) is the one the seed drew before weights and drains existed;
//! a scenario that draws neither is unchanged, and one that does differs only in its callers'
//! weights and in which of them drain.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::CallerSpec;
use crate::record::CallKind;

/// The stream of the seed's generator that weights and drains are drawn from.
const WEIGHTS_STREAM: u64 = 3;

/// Draws, for the scenario of `seed` whose limit is `limit`, its callers' weights and which of
/// them drain instead of calling.
pub(crate) fn draw(callers: &mut [CallerSpec], seed: u64, limit: u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(WEIGHTS_STREAM);
    let weighted = rng.random_bool(1.0 / 3.0);
    let drain_share = if rng.random_bool(0.2) {
        rng.random_range(0.01..0.1)
    } else {
        0.0
    };
    if !weighted && drain_share == 0.0 {
        return;
    }
    for caller in callers {
        if drain_share > 0.0 && rng.random_bool(drain_share) {
            *caller = CallerSpec {
                kind: CallKind::Drain,
                weight: 0,
                interrupt_at: None,
                cancel_at: None,
                ..*caller
            };
        } else if weighted && caller.kind.may_weigh() {
            caller.weight = pick_weight(&mut rng, limit);
        }
    }
}

/// Mostly one permit; sometimes none, several up to the whole limit, or one more than the limit
/// (which no window can grant: `TooMany`).
fn pick_weight(rng: &mut ChaCha8Rng, limit: u32) -> u32 {
    match rng.random_range(0..100) {
        0..70 => 1,
        70..78 => 0,
        // A limit of one has no weight between.
        78..95 => rng.random_range(2..=limit.max(2)).min(limit),
        _ => limit.saturating_add(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::OpKind;

    fn callers(kind: CallKind) -> Vec<CallerSpec> {
        vec![
            CallerSpec {
                arrival: 0,
                kind,
                op: OpKind::Succeeds,
                interrupt_at: Some(5),
                cancel_at: None,
                key: 0,
                weight: 1,
            };
            200
        ]
    }

    #[test]
    fn weights_range_from_zero_to_one_past_the_limit() {
        let mut seen = [false; 4];
        for seed in 0..50 {
            let mut drawn = callers(CallKind::TryAcquire);
            draw(&mut drawn, seed, 10);
            for caller in drawn.iter().filter(|caller| caller.kind != CallKind::Drain) {
                match caller.weight {
                    0 => seen[0] = true,
                    1 => seen[1] = true,
                    2..=10 => seen[2] = true,
                    11 => seen[3] = true,
                    other => panic!("weight {other} for a limit of 10"),
                }
            }
        }
        assert_eq!(seen, [true; 4]);
    }

    #[test]
    fn blocking_callers_keep_one_permit_and_drains_neither_wait_nor_weigh() {
        let mut drained = 0;
        for seed in 0..50 {
            let mut drawn = callers(CallKind::CallBlocking);
            draw(&mut drawn, seed, 10);
            for caller in &drawn {
                match caller.kind {
                    CallKind::Drain => {
                        drained += 1;
                        assert_eq!((caller.weight, caller.interrupt_at), (0, None));
                    }
                    // Blocking callers take one permit.
                    _ => assert_eq!(caller.weight, 1),
                }
            }
        }
        assert!(drained > 0);
    }
}
