//! Limiters set up so that every call takes the path a benchmark measures: "open" ones
//! always have a permit, "full" ones never do.
//!
//! Open limiters allow `u32::MAX` permits per hour (governor: a burst of `u32::MAX`,
//! replenished every nanosecond), far more than a benchmark run takes, so every call is
//! permitted. Full limiters allow one permit per hour and have spent it, so every call is
//! rejected for the rest of the hour.

use core::num::NonZeroU32;
use core::time::Duration;

use fixed_window::{Clock, RateLimiter};
use governor::clock::FakeRelativeClock;
use governor::{DefaultDirectRateLimiter, Quota};

use crate::contender::GovernorFake;
use crate::mutex_window::MutexWindow;

/// The period of every benchmark limiter but the window-advance ones.
pub const PERIOD: Duration = Duration::from_secs(3600);

/// The name of every benchmark limiter.
pub const NAME: &str = "bench";

/// Our limiter on `clock`, with a permit for every call.
///
/// # Panics
///
/// Never: the configuration is a valid constant.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::configs::ours_open(fixed_window::ManualClock::new());
/// assert!((0..1000).all(|_| limiter.try_acquire().is_ok()));
/// ```
pub fn ours_open<C: Clock>(clock: C) -> RateLimiter<C> {
    RateLimiter::of(NAME, u32::MAX, PERIOD)
        .expect("a valid configuration")
        .with_clock(clock)
}

/// Our limiter on `clock`, whose window is used up.
///
/// # Panics
///
/// Never: the configuration is a valid constant and its first call is permitted.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::configs::ours_full(fixed_window::ManualClock::new());
/// assert!(limiter.try_acquire().is_err());
/// ```
pub fn ours_full<C: Clock>(clock: C) -> RateLimiter<C> {
    let limiter = RateLimiter::of(NAME, 1, PERIOD)
        .expect("a valid configuration")
        .with_clock(clock);
    limiter.try_acquire().expect("the first permit");
    limiter
}

fn open_quota() -> Quota {
    Quota::with_period(Duration::from_nanos(1))
        .expect("a non-zero period")
        .allow_burst(NonZeroU32::MAX)
}

fn full_quota() -> Quota {
    Quota::with_period(PERIOD)
        .expect("a non-zero period")
        .allow_burst(NonZeroU32::MIN)
}

/// governor's direct limiter on its default clock, with a permit for every call.
///
/// # Panics
///
/// Never: the quota is a valid constant.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::configs::governor_open();
/// assert!((0..1000).all(|_| limiter.check().is_ok()));
/// ```
pub fn governor_open() -> DefaultDirectRateLimiter {
    DefaultDirectRateLimiter::direct(open_quota())
}

/// governor's direct limiter on its fake clock, with a permit for every call.
///
/// # Examples
///
/// ```
/// let clock = governor::clock::FakeRelativeClock::default();
/// let limiter = fixed_window_benches::configs::governor_open_fake(clock);
/// assert!((0..1000).all(|_| limiter.check().is_ok()));
/// ```
pub fn governor_open_fake(clock: FakeRelativeClock) -> GovernorFake {
    GovernorFake::direct_with_clock(open_quota(), clock)
}

/// governor's direct limiter on its default clock, whose one permit per hour is spent.
///
/// # Panics
///
/// Never: the quota is a valid constant and its first call is permitted.
///
/// # Examples
///
/// ```
/// assert!(fixed_window_benches::configs::governor_full().check().is_err());
/// ```
pub fn governor_full() -> DefaultDirectRateLimiter {
    let limiter = DefaultDirectRateLimiter::direct(full_quota());
    limiter.check().expect("the first permit");
    limiter
}

/// governor's direct limiter on its fake clock, whose one permit per hour is spent.
///
/// # Panics
///
/// Never: the quota is a valid constant and its first call is permitted.
///
/// # Examples
///
/// ```
/// let clock = governor::clock::FakeRelativeClock::default();
/// assert!(fixed_window_benches::configs::governor_full_fake(clock).check().is_err());
/// ```
pub fn governor_full_fake(clock: FakeRelativeClock) -> GovernorFake {
    let limiter = GovernorFake::direct_with_clock(full_quota(), clock);
    limiter.check().expect("the first permit");
    limiter
}

/// The mutex peer on `clock`, with a permit for every call.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::configs::mutex_open(fixed_window::ManualClock::new());
/// assert!((0..1000).all(|_| limiter.try_acquire().is_ok()));
/// ```
pub fn mutex_open<C: Clock>(clock: C) -> MutexWindow<C> {
    MutexWindow::new(u32::MAX, PERIOD, clock)
}

/// The mutex peer on `clock`, whose window is used up.
///
/// # Panics
///
/// Never: its first call is permitted.
///
/// # Examples
///
/// ```
/// let limiter = fixed_window_benches::configs::mutex_full(fixed_window::ManualClock::new());
/// assert!(limiter.try_acquire().is_err());
/// ```
pub fn mutex_full<C: Clock>(clock: C) -> MutexWindow<C> {
    let limiter = MutexWindow::new(1, PERIOD, clock);
    limiter.try_acquire().expect("the first permit");
    limiter
}
