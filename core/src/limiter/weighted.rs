//! Weighted permits: `n` permits at once, all of one window or none.

use crate::attempt::Attempt;
use crate::clock::Clock;
use crate::error::RateLimiterError;
use crate::instant::Instant;
use crate::limiter::RateLimiter;
use crate::permit::Permit;
use crate::waiting;

impl<C: Clock> RateLimiter<C> {
    /// Takes `n` permits at once if the current window has them all, never waiting: all `n`
    /// of one window, or none. The permit's `remaining` counts what is left after all `n`;
    /// `n = 0` is permitted without counting anything.
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::TooMany`] at once if `n` is above the limit (no window could hold
    /// it); [`RateLimiterError::Rejected`] if the window has fewer than `n` left.
    ///
    /// # Examples
    ///
    /// A request that costs 3 units of a budget of 5 per second.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter, RateLimiterError};
    ///
    /// let limiter = RateLimiter::of("bytes", 5, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.try_acquire_n(3)?.remaining(), 2);
    /// assert!(matches!(limiter.try_acquire_n(3), Err(RateLimiterError::Rejected { .. })));
    /// assert_eq!(limiter.try_acquire_n(2)?.remaining(), 0);
    /// assert_eq!(limiter.try_acquire_n(0)?.remaining(), 0); // takes nothing
    /// assert!(matches!(limiter.try_acquire_n(6), Err(RateLimiterError::TooMany { requested: 6, .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_acquire_n(&self, n: u32) -> Result<Permit, RateLimiterError> {
        let units = self.policy.units(n)?;
        self.policy
            .try_acquire(&self.state, || self.clock.now(), units)
            .map_err(|rejection| self.policy.refused(&rejection, units))
    }

    /// Takes `n` permits at once, waiting (blocking the thread) up to `max_wait` for a window
    /// that has them all.
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::TooMany`] at once if `n` is above the limit; otherwise as
    /// [`acquire`](RateLimiter::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("bytes", 4, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(1));
    /// limiter.acquire_n(3)?;
    /// // One left: the next two wait for the next window, on the manual clock at once.
    /// let permit = limiter.acquire_n(2)?;
    /// assert_eq!((permit.at(), permit.remaining()), (Instant::from_nanos(1_000_000_000), 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire_n(&self, n: u32) -> Result<Permit, RateLimiterError> {
        let units = self.policy.units(n)?;
        waiting::wait_blocking(&self.policy, &self.state, &self.clock, None, units)
    }

    /// Takes `n` permits at once, awaiting the clock's asynchronous sleep up to `max_wait`;
    /// cancel-safe as [`acquire_async`](RateLimiter::acquire_async).
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::TooMany`] at once if `n` is above the limit; otherwise as
    /// [`acquire_async`](RateLimiter::acquire_async).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("bytes", 4, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let permit = futures::executor::block_on(limiter.acquire_n_async(4))?;
    /// assert_eq!(permit.remaining(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn acquire_n_async(&self, n: u32) -> Result<Permit, RateLimiterError> {
        let units = self.policy.units(n)?;
        waiting::wait_async(&self.policy, &self.state, &self.clock, units).await
    }

    /// The sans-IO step of [`attempt`](RateLimiter::attempt) for `n` permits at once.
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::TooMany`] if `n` is above the limit: nothing is claimed.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Attempt, Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 3, Duration::from_nanos(10))?.with_clock(ManualClock::new());
    /// let (now, deadline) = (Instant::ZERO, Instant::from_nanos(10));
    /// assert_eq!(limiter.attempt_n(2, now, deadline)?, Attempt::Permitted { remaining: 1 });
    /// assert_eq!(limiter.attempt_n(2, now, deadline)?, Attempt::Wait { until: deadline });
    /// assert!(limiter.attempt_n(4, now, deadline).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempt_n(
        &self,
        n: u32,
        now: Instant,
        deadline: Instant,
    ) -> Result<Attempt, RateLimiterError> {
        let units = self.policy.units(n)?;
        self.policy
            .attempt(&self.state, now, deadline, units)
            .map_err(|excess| self.policy.settings.too_many(excess))
    }
}
