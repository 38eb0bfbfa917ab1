//! Weighted claims and drains racing under shuttle: every permit's units come from one stretch
//! of its window's count that no other permit took, no window gives more units than its limit,
//! and a drain leaves its window full.

use std::sync::Arc;
use std::time::Duration;

use fixed_window::{ManualClock, RateLimiter};

use crate::explore::{Budget, explore};

const LIMIT: u32 = 7;

/// What one thread saw: each permit's units as the stretch `[used before, used after)` of the
/// window's count, and whether it drained.
type Seen = (Vec<(u32, u32)>, bool);

#[test]
fn weighted_claims_and_a_drain_never_overlap_or_pass_the_limit() {
    let schedules = explore(Budget::from_env(), || {
        let limiter = Arc::new(
            RateLimiter::of("weighted", LIMIT, Duration::from_secs(1))
                .expect("valid settings")
                .with_clock(ManualClock::new()),
        );
        // Three claimers of 1, 2 and 3 units, twice each, and one thread that claims 2 then
        // drains: all in one window (the manual clock stands still).
        let threads: Vec<_> = (1..=4_u32)
            .map(|thread| {
                let limiter = Arc::clone(&limiter);
                shuttle::thread::spawn(move || -> Seen {
                    let weight = if thread == 4 { 2 } else { thread };
                    let mut stretches = Vec::new();
                    for _ in 0..2 {
                        if let Ok(permit) = limiter.try_acquire_n(weight) {
                            let after = LIMIT - permit.remaining();
                            stretches.push((after - weight, after));
                        }
                        if thread == 4 {
                            limiter.drain();
                            return (stretches, true);
                        }
                    }
                    (stretches, false)
                })
            })
            .collect();
        let mut stretches = Vec::new();
        let mut drained = false;
        for thread in threads {
            let (seen, drains) = thread.join().expect("no thread panics");
            stretches.extend(seen);
            drained |= drains;
        }
        stretches.sort_unstable();
        for pair in stretches.windows(2) {
            assert!(
                pair[0].1 <= pair[1].0,
                "two permits took the same units: {stretches:?}"
            );
        }
        assert!(
            stretches.last().is_none_or(|&(_, end)| end <= LIMIT),
            "{stretches:?}"
        );
        assert!(drained);
        // Drained: nothing is left, not even one unit.
        assert!(
            limiter.try_acquire_n(1).is_err(),
            "a drained window granted a permit"
        );
        assert_eq!(
            limiter
                .try_acquire_n(0)
                .map(|permit| permit.remaining())
                .ok(),
            Some(0)
        );
    });
    eprintln!("shuttle: {schedules} schedules");
    assert!(schedules > 0);
}
