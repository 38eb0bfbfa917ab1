//! Windows aligned to creation, exact to the nanosecond; advance by whole periods; no
//! carry-over.

use core::time::Duration;

use fixed_window::{Attempt, Clock, RateLimiterError};

use crate::support::{at, grant_count, limiter};

#[test]
fn a_window_grants_exactly_limit_permits() {
    let (limiter, _) = limiter(3, 100, 0);
    assert_eq!(grant_count(&limiter, 10), 3);
}

#[test]
fn remaining_counts_down_to_zero() {
    let (limiter, _) = limiter(3, 100, 0);
    let remaining: Vec<u32> = (0..3)
        .map(|_| limiter.try_acquire().unwrap().remaining())
        .collect();
    assert_eq!(remaining, [2, 1, 0]);
}

#[test]
fn the_last_nanosecond_of_a_window_still_belongs_to_it() {
    let (limiter, clock) = limiter(1, 100, 1_000);
    assert!(limiter.try_acquire().is_ok());
    clock.set(at(1_099));
    let err = limiter.try_acquire().unwrap_err();
    assert_eq!(err.retry_after(), Duration::from_nanos(1));
}

#[test]
fn the_boundary_instant_opens_the_next_window() {
    let (limiter, clock) = limiter(1, 100, 1_000);
    assert!(limiter.try_acquire().is_ok());
    clock.set(at(1_100));
    assert_eq!(limiter.try_acquire().unwrap().remaining(), 0);
}

#[test]
fn windows_are_aligned_to_creation_not_to_the_first_call() {
    let (limiter, clock) = limiter(1, 100, 1_000);
    clock.set(at(1_050));
    assert!(limiter.try_acquire().is_ok());
    // The window is [1000, 1100): the next opens at 1100, 50 ns later, not 100.
    let err = limiter.try_acquire().unwrap_err();
    assert_eq!(err.retry_after(), Duration::from_nanos(50));
    clock.set(at(1_100));
    assert!(limiter.try_acquire().is_ok());
}

#[test]
fn with_methods_restart_the_window_at_the_clock_reading() {
    let (limiter, clock) = limiter(1, 100, 0);
    clock.set(at(30));
    let limiter = limiter.with_limit(1).unwrap();
    assert!(limiter.try_acquire().is_ok());
    // The window now runs [30, 130).
    clock.set(at(129));
    assert!(limiter.try_acquire().is_err());
    clock.set(at(130));
    assert!(limiter.try_acquire().is_ok());
}

#[test]
fn unused_permits_never_carry_over() {
    let (limiter, clock) = limiter(5, 100, 0);
    assert_eq!(grant_count(&limiter, 1), 1);
    clock.advance(Duration::from_nanos(100));
    // Four were left unclaimed; the new window still has exactly five.
    assert_eq!(grant_count(&limiter, 20), 5);
}

#[test]
fn a_long_idle_gap_with_a_fraction_lands_on_the_right_window() {
    let period = 1_000;
    let (limiter, clock) = limiter(2, period, 7);
    assert_eq!(grant_count(&limiter, 2), 2);
    // 12,345 whole periods and 3/4 of one later.
    clock.advance(Duration::from_nanos(12_345 * period + 750));
    assert_eq!(grant_count(&limiter, 5), 2);
    let err = limiter.try_acquire().unwrap_err();
    assert_eq!(err.retry_after(), Duration::from_nanos(250));
}

#[test]
fn a_rejection_reports_the_time_to_the_next_window() {
    let (limiter, clock) = limiter(1, 1_000, 0);
    limiter.try_acquire().unwrap();
    clock.set(at(400));
    assert_eq!(
        limiter.try_acquire().map_err(RateLimiterError::from),
        Err(RateLimiterError::Rejected {
            name: "test",
            limit: 1,
            period: Duration::from_nanos(1_000),
            max_wait: Duration::ZERO,
            retry_after: Duration::from_nanos(600),
        })
    );
}

#[test]
fn a_rejection_at_a_full_window_does_not_change_the_state() {
    let (limiter, clock) = limiter(1, 100, 0);
    limiter.try_acquire().unwrap();
    let before = format!("{limiter:?}");
    for _ in 0..5 {
        assert!(limiter.try_acquire().is_err());
    }
    assert_eq!(format!("{limiter:?}"), before);
    clock.set(at(100));
    assert!(limiter.try_acquire().is_ok());
}

#[test]
fn the_step_agrees_with_try_acquire_on_every_outcome() {
    let (limiter, clock) = limiter(2, 10, 0);
    let now = clock.now();
    assert_eq!(
        limiter.attempt(now, now),
        Attempt::Permitted { remaining: 1 }
    );
    assert_eq!(
        limiter.attempt(now, now),
        Attempt::Permitted { remaining: 0 }
    );
    assert_eq!(
        limiter.attempt(now, at(9)),
        Attempt::Rejected {
            retry_after: Duration::from_nanos(10)
        }
    );
    assert_eq!(
        limiter.attempt(now, at(10)),
        Attempt::Wait { until: at(10) }
    );
}

#[test]
fn large_limits_use_every_permit() {
    let (limiter, _) = limiter(100_000, 1_000_000_000, 0);
    assert_eq!(grant_count(&limiter, 100_001), 100_000);
}

#[test]
fn the_largest_limit_counts_without_overflow() {
    let (limiter, clock) = limiter(u32::MAX, 1, 0);
    assert_eq!(limiter.try_acquire().unwrap().remaining(), u32::MAX - 1);
    clock.advance(Duration::from_nanos(1));
    assert_eq!(limiter.try_acquire().unwrap().remaining(), u32::MAX - 1);
}
