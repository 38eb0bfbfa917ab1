//! Many threads on the system clock: exactly `limit` permits, the rest rejected.

use core::time::Duration;
use std::sync::Arc;

use fixed_window::{Backoff, Clock, ManualClock, RateLimiter};

fn hammer<C: Clock + 'static>(limiter: &Arc<RateLimiter<C>>, threads: u32, tries: u32) -> u32 {
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let limiter = Arc::clone(limiter);
            std::thread::spawn(move || {
                (0..tries)
                    .map(|_| u32::from(limiter.try_acquire().is_ok()))
                    .sum::<u32>()
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|handle| handle.join().unwrap())
        .sum()
}

#[test]
fn racing_threads_get_exactly_limit_permits() {
    // An hour-long window: the run never crosses a boundary.
    let limiter = Arc::new(RateLimiter::of("race", 1_000, Duration::from_secs(3_600)).unwrap());
    assert_eq!(hammer(&limiter, 8, 1_000), 1_000);
}

#[test]
fn racing_threads_that_yield_at_once_get_exactly_limit_permits() {
    let limiter = Arc::new(
        RateLimiter::of("race", 777, Duration::from_secs(3_600))
            .unwrap()
            .with_backoff(Backoff::new(0)),
    );
    assert_eq!(hammer(&limiter, 8, 500), 777);
}

#[test]
fn racing_threads_on_the_wide_word_get_exactly_limit_permits() {
    // A one-nanosecond period numbers every instant, so the state needs the 128-bit word; the
    // manual clock holds still, so every thread races for the same window.
    let limiter = Arc::new(
        RateLimiter::of("race", 3_000, Duration::from_nanos(1))
            .unwrap()
            .with_clock(ManualClock::new()),
    );
    assert!(format!("{limiter:?}").contains("wide u128"));
    assert_eq!(hammer(&limiter, 8, 1_000), 3_000);
}

#[cfg(feature = "stats")]
#[test]
fn lost_races_are_counted_and_still_grant_exactly_limit() {
    // Whether two threads collide between the load and the compare-and-set is up to the
    // scheduler; over rounds of 8 threads × 20,000 attempts some always do, on one core
    // (preemption) as on many (parallelism).
    for round in 0..20 {
        let limiter =
            Arc::new(RateLimiter::of("race", 100_000, Duration::from_secs(3_600)).unwrap());
        assert_eq!(hammer(&limiter, 8, 20_000), 100_000);
        if limiter.cas_retries() > 0 {
            return;
        }
        eprintln!("round {round}: no race lost yet");
    }
    panic!("eight threads never lost a compare-and-set race in 20 rounds");
}
