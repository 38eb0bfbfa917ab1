//! Our limiter allocates nothing on the permit and rejection paths, through `try_acquire` and
//! through `call`, on the default clock and on the manual clock.

use std::hint::black_box;

use fixed_window::{Clock, ManualClock, RateLimiter, SystemClock};
use fixed_window_benches::configs;

use crate::checker::{CALLS, allocations};

fn permits_through_try_acquire<C: Clock>(limiter: &RateLimiter<C>) -> u64 {
    allocations(|| {
        for _ in 0..CALLS {
            assert!(black_box(limiter.try_acquire()).is_ok());
        }
    })
}

fn rejections_through_try_acquire<C: Clock>(limiter: &RateLimiter<C>) -> u64 {
    allocations(|| {
        for _ in 0..CALLS {
            assert!(black_box(limiter.try_acquire()).is_err());
        }
    })
}

fn permits_through_call<C: Clock>(limiter: &RateLimiter<C>) -> u64 {
    allocations(|| {
        for i in 0..CALLS {
            assert_eq!(black_box(limiter.call(|| i)), Ok(i));
        }
    })
}

fn rejections_through_call<C: Clock>(limiter: &RateLimiter<C>) -> u64 {
    allocations(|| {
        for _ in 0..CALLS {
            assert!(black_box(limiter.call(|| unreachable!("rejected calls never run"))).is_err());
        }
    })
}

#[test]
fn the_permit_path_allocates_nothing_on_the_system_clock() {
    let limiter = configs::ours_open(SystemClock);
    assert_eq!(permits_through_try_acquire(&limiter), 0);
    assert_eq!(permits_through_call(&limiter), 0);
}

#[test]
fn the_permit_path_allocates_nothing_on_the_manual_clock() {
    let limiter = configs::ours_open(ManualClock::new());
    assert_eq!(permits_through_try_acquire(&limiter), 0);
    assert_eq!(permits_through_call(&limiter), 0);
}

#[test]
fn the_rejection_path_allocates_nothing_on_the_system_clock() {
    let limiter = configs::ours_full(SystemClock);
    assert_eq!(rejections_through_try_acquire(&limiter), 0);
    assert_eq!(rejections_through_call(&limiter), 0);
}

#[test]
fn the_rejection_path_allocates_nothing_on_the_manual_clock() {
    let limiter = configs::ours_full(ManualClock::new());
    assert_eq!(rejections_through_try_acquire(&limiter), 0);
    assert_eq!(rejections_through_call(&limiter), 0);
}

#[test]
fn opening_new_windows_allocates_nothing() {
    let clock = ManualClock::new();
    let limiter = RateLimiter::of(configs::NAME, 1, core::time::Duration::from_millis(1))
        .expect("a valid configuration")
        .with_clock(clock.clone());
    let count = allocations(|| {
        for _ in 0..CALLS {
            assert!(limiter.try_acquire().is_ok());
            assert!(limiter.try_acquire().is_err());
            clock.advance(limiter.period());
        }
    });
    assert_eq!(count, 0);
}
