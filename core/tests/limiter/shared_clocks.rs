//! A clock shared by reference or behind an `Arc` behaves as the clock itself, waits included.

use core::time::Duration;
use std::sync::Arc;

use fixed_window::{Clock, Interrupt, ManualClock, RateLimiter};

use crate::support::at;

#[test]
fn a_limiter_on_an_arc_clock_reads_and_sleeps_through_it() {
    let clock = Arc::new(ManualClock::starting_at(at(5)));
    let limiter = RateLimiter::of("arc", 1, Duration::from_nanos(100))
        .unwrap()
        .with_max_wait(Duration::from_nanos(100))
        .with_clock(Arc::clone(&clock));
    assert_eq!(limiter.acquire().unwrap().at(), at(5));
    assert_eq!(limiter.acquire().unwrap().at(), at(105));
    assert_eq!(clock.now(), at(105));
    let async_permit = futures::executor::block_on(limiter.acquire_async()).unwrap();
    assert_eq!(async_permit.at(), at(205));
}

#[test]
fn a_limiter_on_a_borrowed_clock_reads_and_sleeps_through_it() {
    let clock = ManualClock::starting_at(at(5));
    let limiter = RateLimiter::of("borrowed", 1, Duration::from_nanos(100))
        .unwrap()
        .with_max_wait(Duration::from_nanos(100))
        .with_clock(&clock);
    assert_eq!(limiter.acquire().unwrap().at(), at(5));
    assert_eq!(limiter.acquire().unwrap().at(), at(105));
    let async_permit = futures::executor::block_on(limiter.acquire_async()).unwrap();
    assert_eq!(async_permit.at(), at(205));
    let interrupt = Interrupt::new();
    interrupt.interrupt();
    assert!(Clock::sleep(&&clock, Duration::from_nanos(1), &interrupt).is_err());
    assert!(
        Arc::new(clock.clone())
            .sleep(Duration::from_nanos(1), &interrupt)
            .is_err()
    );
}
