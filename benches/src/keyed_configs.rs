//! Keyed limiters holding a population of keys, set up so that every call takes the path a
//! benchmark measures: "open" ones always have a permit for every key, "full" ones never do.
//!
//! As in [`configs`](crate::configs): open limiters allow `u32::MAX` permits per key per hour
//! (governor: a burst of `u32::MAX`, replenished every nanosecond); full ones allow one per
//! hour and have spent it for every key. Every key of `0..keys` has been called once, so the
//! benchmarks measure keys already in the table.

use core::num::NonZeroU32;
use core::time::Duration;

use fixed_window::{Clock, KeyedRateLimiter};
use governor::{DefaultKeyedRateLimiter, Quota};

use crate::configs::{NAME, PERIOD};
use crate::mutex_keyed_window::MutexKeyedWindow;

fn limiter<C: Clock>(clock: C, limit: u32) -> KeyedRateLimiter<u64, C> {
    KeyedRateLimiter::builder(NAME, limit, PERIOD)
        .expect("a valid configuration")
        .clock(clock)
        .build()
}

/// Our keyed limiter on `clock` holding keys `0..keys`, with a permit for every call.
///
/// # Panics
///
/// Never: the configuration is a valid constant and every first call is permitted.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::keyed_configs::ours_open(fixed_window::ManualClock::new(), 100);
/// assert_eq!(limiter.len(), 100);
/// assert!((0..1000).all(|key| limiter.try_acquire(&(key % 100)).is_ok()));
/// ```
pub fn ours_open<C: Clock>(clock: C, keys: u64) -> KeyedRateLimiter<u64, C> {
    let limiter = limiter(clock, u32::MAX);
    for key in 0..keys {
        limiter.try_acquire(&key).expect("the first permit");
    }
    limiter
}

/// Our keyed limiter on `clock` holding keys `0..keys`, each of whose window is used up.
///
/// # Panics
///
/// Never: the configuration is a valid constant and every first call is permitted.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::keyed_configs::ours_full(fixed_window::ManualClock::new(), 100);
/// assert!((0..100).all(|key| limiter.try_acquire(&key).is_err()));
/// ```
pub fn ours_full<C: Clock>(clock: C, keys: u64) -> KeyedRateLimiter<u64, C> {
    let limiter = limiter(clock, 1);
    for key in 0..keys {
        limiter.try_acquire(&key).expect("the first permit");
    }
    limiter
}

/// governor's keyed limiter (`DashMap` state, default clock) holding keys `0..keys`, with a
/// permit for every call.
///
/// # Panics
///
/// Never: the quota is a valid constant and every first call is permitted.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::keyed_configs::governor_open(100);
/// assert!((0..1000).all(|key| limiter.check_key(&(key % 100)).is_ok()));
/// ```
pub fn governor_open(keys: u64) -> DefaultKeyedRateLimiter<u64> {
    let quota = Quota::with_period(Duration::from_nanos(1))
        .expect("a non-zero period")
        .allow_burst(NonZeroU32::MAX);
    let limiter = DefaultKeyedRateLimiter::keyed(quota);
    for key in 0..keys {
        limiter.check_key(&key).expect("the first permit");
    }
    limiter
}

/// governor's keyed limiter holding keys `0..keys`, each of whose one permit per hour is spent.
///
/// # Panics
///
/// Never: the quota is a valid constant and every first call is permitted.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::keyed_configs::governor_full(100);
/// assert!((0..100).all(|key| limiter.check_key(&key).is_err()));
/// ```
pub fn governor_full(keys: u64) -> DefaultKeyedRateLimiter<u64> {
    let quota = Quota::with_period(PERIOD)
        .expect("a non-zero period")
        .allow_burst(NonZeroU32::MIN);
    let limiter = DefaultKeyedRateLimiter::keyed(quota);
    for key in 0..keys {
        limiter.check_key(&key).expect("the first permit");
    }
    limiter
}

/// The mutex peer on `clock` holding keys `0..keys`, with a permit for every call.
///
/// # Panics
///
/// Never: every first call is permitted.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::keyed_configs::mutex_open(fixed_window::ManualClock::new(), 100);
/// assert!((0..1000).all(|key| limiter.try_acquire(&(key % 100)).is_ok()));
/// ```
pub fn mutex_open<C: Clock>(clock: C, keys: u64) -> MutexKeyedWindow<u64, C> {
    let limiter = MutexKeyedWindow::new(u32::MAX, PERIOD, clock);
    for key in 0..keys {
        limiter.try_acquire(&key).expect("the first permit");
    }
    limiter
}

/// The mutex peer on `clock` holding keys `0..keys`, each of whose window is used up.
///
/// # Panics
///
/// Never: every first call is permitted.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::keyed_configs::mutex_full(fixed_window::ManualClock::new(), 100);
/// assert!((0..100).all(|key| limiter.try_acquire(&key).is_err()));
/// ```
pub fn mutex_full<C: Clock>(clock: C, keys: u64) -> MutexKeyedWindow<u64, C> {
    let limiter = MutexKeyedWindow::new(1, PERIOD, clock);
    for key in 0..keys {
        limiter.try_acquire(&key).expect("the first permit");
    }
    limiter
}
