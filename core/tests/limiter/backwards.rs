//! Clocks that step backwards: no panic, never more than `limit` per window, and the limiter
//! resumes once the clock passes the window's end.

use core::time::Duration;

use fixed_window::{Clock, Instant, Interrupt, Interrupted, ManualClock, RateLimiter, Sleep};

use crate::support::{at, grant_count, limiter};

#[test]
fn stepping_back_within_the_window_reopens_nothing() {
    let (limiter, clock) = limiter(2, 100, 0);
    clock.set(at(90));
    assert_eq!(grant_count(&limiter, 2), 2);
    clock.set(at(10));
    assert_eq!(grant_count(&limiter, 5), 0);
}

#[test]
fn stepping_back_several_windows_counts_against_the_current_one() {
    let (limiter, clock) = limiter(2, 100, 0);
    clock.set(at(1_050));
    assert_eq!(grant_count(&limiter, 1), 1);
    clock.set(at(320));
    assert_eq!(grant_count(&limiter, 5), 1);
    // The current window is still [1000, 1100): from 320 that is 780 ns away.
    let err = limiter.try_acquire().unwrap_err();
    assert_eq!(err.retry_after(), Duration::from_nanos(780));
}

#[test]
fn a_clock_behind_the_origin_does_not_panic() {
    let (limiter, clock) = limiter(1, 100, 1_000);
    clock.set(Instant::ZERO);
    assert!(limiter.try_acquire().is_ok());
    assert!(limiter.try_acquire().is_err());
    clock.set(at(1_100));
    assert!(limiter.try_acquire().is_ok());
}

#[test]
fn the_limiter_resumes_once_the_clock_passes_the_window_end_again() {
    let (limiter, clock) = limiter(1, 100, 0);
    clock.set(at(550));
    limiter.try_acquire().unwrap();
    clock.set(at(200));
    assert!(limiter.try_acquire().is_err());
    clock.set(at(599));
    assert!(limiter.try_acquire().is_err());
    clock.set(at(600));
    assert!(limiter.try_acquire().is_ok());
}

#[test]
fn a_waiting_call_waits_for_the_window_end_from_a_backwards_reading() {
    let (limiter, clock) = limiter(1, 100, 0);
    let limiter = limiter.with_max_wait(Duration::from_secs(1));
    clock.set(at(550));
    limiter.acquire().unwrap();
    clock.set(at(200));
    assert_eq!(limiter.acquire().unwrap().at(), at(600));
}

/// A clock whose every sleep lands it back where the limiter was created.
#[derive(Debug, Clone)]
struct Rewinding(ManualClock);

impl Clock for Rewinding {
    fn now(&self) -> Instant {
        self.0.now()
    }

    fn sleep(&self, _: Duration, _: &Interrupt) -> Result<(), Interrupted> {
        self.0.set(at(10));
        Ok(())
    }

    fn sleep_async(&self, d: Duration) -> Sleep<'_> {
        Box::pin(async move { self.sleep(d, &Interrupt::new()) })
    }
}

#[test]
fn a_clock_that_steps_back_during_every_sleep_cannot_trap_a_waiter() {
    let clock = Rewinding(ManualClock::starting_at(at(10)));
    let limiter = RateLimiter::of("rewinding", 1, Duration::from_nanos(100))
        .unwrap()
        .with_max_wait(Duration::MAX)
        .with_clock(clock.clone());
    limiter.acquire().unwrap();
    clock.0.set(at(50));
    assert!(limiter.acquire().is_err());
}
