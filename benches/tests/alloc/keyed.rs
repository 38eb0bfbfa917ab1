//! The keyed limiter allocates nothing on the permit and rejection paths of a key it already
//! holds, and its memory after many keys have passed stays within twice that of the live keys
//! alone; the same memory check fails on governor's keyed limiter, which keeps every key until
//! `retain_recent` is called.

use core::num::NonZeroU32;
use core::time::Duration;
use std::hint::black_box;

use allocation_counter::measure;
use fixed_window::{Clock, KeyedRateLimiter, ManualClock, SystemClock};
use fixed_window_benches::keyed_configs;
use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};

use crate::checker::{CALLS, allocations};

const KEYS: u64 = 1_000;

fn permits<C: Clock>(limiter: &KeyedRateLimiter<u64, C>) -> u64 {
    allocations(|| {
        for call in 0..u64::from(CALLS) {
            assert!(black_box(limiter.try_acquire(&(call % KEYS))).is_ok());
        }
    })
}

fn rejections<C: Clock>(limiter: &KeyedRateLimiter<u64, C>) -> u64 {
    allocations(|| {
        for call in 0..u64::from(CALLS) {
            assert!(black_box(limiter.try_acquire(&(call % KEYS))).is_err());
        }
    })
}

#[test]
fn the_permit_path_of_a_held_key_allocates_nothing() {
    assert_eq!(permits(&keyed_configs::ours_open(SystemClock, KEYS)), 0);
    assert_eq!(
        permits(&keyed_configs::ours_open(ManualClock::new(), KEYS)),
        0
    );
}

#[test]
fn the_rejection_path_of_a_held_key_allocates_nothing() {
    assert_eq!(rejections(&keyed_configs::ours_full(SystemClock, KEYS)), 0);
    assert_eq!(
        rejections(&keyed_configs::ours_full(ManualClock::new(), KEYS)),
        0
    );
}

#[test]
fn the_checker_catches_allocation_on_a_new_keys_path() {
    // Adding a key allocates its entry: the counter sees it.
    let limiter = keyed_configs::ours_open(SystemClock, 0);
    let count = allocations(|| {
        for key in 0..u64::from(CALLS) {
            assert!(limiter.try_acquire(&key).is_ok());
        }
    });
    assert!(count >= u64::from(CALLS), "{count} allocations counted");
}

const PERIOD: Duration = Duration::from_secs(1);
const WINDOWS: u64 = 200;

/// Net bytes `run` leaves allocated while the limiter it returns is alive.
fn held<L>(run: impl FnOnce() -> L) -> i64 {
    let mut limiter = None;
    let info = measure(|| limiter = Some(run()));
    drop(limiter);
    info.bytes_current
}

/// Our limiter after `windows` windows of `KEYS` fresh keys each.
fn ours_after(windows: u64) -> i64 {
    held(|| {
        let clock = ManualClock::new();
        let limiter = KeyedRateLimiter::of("memory", 10, PERIOD)
            .unwrap()
            .with_clock(clock.clone());
        for window in 0..windows {
            for key in window * KEYS..(window + 1) * KEYS {
                assert!(limiter.try_acquire(&key).is_ok());
            }
            clock.advance(PERIOD);
        }
        limiter
    })
}

/// governor's keyed limiter after `windows` windows of `KEYS` fresh keys each, never retained.
fn governor_after(windows: u64) -> i64 {
    held(|| {
        let clock = FakeRelativeClock::default();
        let quota = Quota::with_period(PERIOD / 10)
            .unwrap()
            .allow_burst(NonZeroU32::new(10).unwrap());
        let limiter = RateLimiter::dashmap_with_clock(quota, clock.clone());
        for window in 0..windows {
            for key in window * KEYS..(window + 1) * KEYS {
                assert!(limiter.check_key(&key).is_ok());
            }
            clock.advance(PERIOD);
        }
        limiter
    })
}

/// Whether memory after many windows stays within twice that after one.
fn bounded(after: impl Fn(u64) -> i64) -> bool {
    let (live, passed) = (after(1), after(WINDOWS));
    eprintln!("one window: {live} bytes; {WINDOWS} windows: {passed} bytes");
    passed <= 2 * live
}

#[test]
fn memory_after_many_windows_stays_within_twice_the_live_keys() {
    assert!(bounded(ours_after));
}

#[test]
fn the_memory_check_fails_on_a_limiter_that_keeps_every_key() {
    assert!(!bounded(governor_after));
}
