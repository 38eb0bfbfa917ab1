//! Values near the end of time: nothing overflows, nothing panics.

use core::time::Duration;

use fixed_window::{Clock, Instant, ManualClock, RateLimiter};

use crate::support::{at, grant_count, limiter};

const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

#[test]
fn windows_near_the_maximum_instant_advance_and_the_last_one_never_ends() {
    let start = u64::MAX - 250;
    let (limiter, clock) = limiter(1, 100, start);
    let limiter = limiter.with_max_wait(Duration::MAX);
    assert!(limiter.acquire().is_ok());
    // Waits into [MAX - 150, MAX - 50).
    assert_eq!(limiter.acquire().unwrap().at(), at(u64::MAX - 150));
    // Waits into the last window, [MAX - 50, MAX], whose successor would start past the end.
    assert_eq!(limiter.acquire().unwrap().at(), at(u64::MAX - 50));
    let err = limiter.acquire().unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::MAX));
    assert_eq!(clock.now(), at(u64::MAX - 50));
}

#[test]
fn a_clock_reading_the_maximum_instant_is_an_ordinary_reading() {
    let (limiter, clock) = limiter(3, 1_000_000_000, 0);
    clock.set(Instant::MAX);
    assert_eq!(grant_count(&limiter, 5), 3);
    assert_eq!(
        limiter.try_acquire().unwrap_err().retry_after(),
        Duration::MAX
    );
}

#[test]
fn a_clock_that_starts_at_the_maximum_instant_has_one_window() {
    let (limiter, _) = limiter(2, 1, u64::MAX);
    let limiter = limiter.with_max_wait(Duration::MAX);
    assert_eq!(grant_count(&limiter, 3), 2);
    assert_eq!(
        limiter.acquire().unwrap_err().retry_after(),
        Some(Duration::MAX)
    );
}

#[test]
fn one_nanosecond_periods_over_centuries_keep_exact_windows() {
    let (limiter, clock) = limiter(1, 1, 3);
    assert!(limiter.try_acquire().is_ok());
    assert!(limiter.try_acquire().is_err());
    for _ in 0..5 {
        clock.advance(CENTURY);
        assert!(limiter.try_acquire().is_ok());
        assert_eq!(
            limiter.try_acquire().unwrap_err().retry_after(),
            Duration::from_nanos(1)
        );
        clock.advance(Duration::from_nanos(1));
        assert!(limiter.try_acquire().is_ok());
    }
}

#[test]
fn a_period_longer_than_the_timeline_is_a_single_window() {
    let (limiter, clock) = limiter(1, 1, 0);
    let limiter = limiter.with_period(Duration::MAX).unwrap();
    assert!(limiter.try_acquire().is_ok());
    clock.set(Instant::MAX);
    assert_eq!(
        limiter.try_acquire().unwrap_err().retry_after(),
        Duration::MAX
    );
    assert_eq!(limiter.period(), Duration::MAX);
}

#[test]
fn a_deadline_that_would_overflow_is_clamped_to_the_maximum() {
    let (limiter, _) = limiter(1, 100, u64::MAX - 10);
    let limiter = limiter.with_max_wait(Duration::from_secs(1));
    assert_eq!(limiter.deadline(at(u64::MAX - 10)), Instant::MAX);
}

#[test]
fn an_idle_gap_of_the_whole_timeline_advances_in_one_step() {
    let clock = ManualClock::new();
    let limiter = RateLimiter::of("idle", 1, Duration::from_nanos(3))
        .unwrap()
        .with_clock(clock.clone());
    limiter.try_acquire().unwrap();
    clock.set(Instant::MAX);
    // u64::MAX is divisible by 3, so MAX itself opens a window that never ends.
    assert!(limiter.try_acquire().is_ok());
    assert_eq!(
        limiter.try_acquire().unwrap_err().retry_after(),
        Duration::MAX
    );
}

#[test]
fn the_largest_limit_with_one_nanosecond_periods_over_the_whole_timeline_counts_exactly() {
    let (limiter, clock) = limiter(u32::MAX, 1, 0);
    assert_eq!(limiter.try_acquire().unwrap().remaining(), u32::MAX - 1);
    clock.set(Instant::MAX);
    assert_eq!(limiter.try_acquire().unwrap().remaining(), u32::MAX - 1);
}
