//! The checker catches limiters that allocate: ours with a listener that formats each event,
//! and the benchmarks' rejection built into a boxed error.

use fixed_window::{ManualClock, RateLimiterEvent};
use fixed_window_benches::configs;

use crate::checker::{CALLS, allocations};

#[test]
fn a_limiter_whose_listener_allocates_is_caught_on_the_permit_path() {
    let limiter =
        configs::ours_open(ManualClock::new()).with_listener(|event: &RateLimiterEvent| {
            std::hint::black_box(format!("{event:?}"));
        });
    let count = allocations(|| {
        for _ in 0..CALLS {
            assert!(limiter.try_acquire().is_ok());
        }
    });
    assert!(count >= u64::from(CALLS), "{count} allocations counted");
}

#[test]
fn a_limiter_that_boxes_its_rejection_is_caught_on_the_rejection_path() {
    let limiter = configs::ours_full(ManualClock::new());
    let boxed = || limiter.try_acquire().map_err(Box::new);
    let count = allocations(|| {
        for _ in 0..CALLS {
            assert!(boxed().is_err());
        }
    });
    assert_eq!(count, u64::from(CALLS));
}
