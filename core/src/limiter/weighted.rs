//! Weighted permits: `n` permits at once, all of one window or none.

use core::future::IntoFuture;

use crate::attempt::Attempt;
use crate::clock::Clock;
use crate::error::RateLimiterError;
use crate::instant::Instant;
use crate::interrupt::Interrupt;
use crate::limiter::RateLimiter;
use crate::permit::Permit;
use crate::waiting;
use crate::weight::{Units, Weight};
use crate::weighted_rejection::WeightedRejection;

impl<C: Clock> RateLimiter<C> {
    /// Takes `n` permits at once if the current window has them all, never waiting: all `n`
    /// of one window, or none. The permit's `remaining` counts what is left after all `n`;
    /// `n = 0` is permitted without counting anything.
    ///
    /// The rejection borrows the limiter, as [`try_acquire`](RateLimiter::try_acquire)'s does
    /// (see [`WeightedRejection`]); [`WeightedRejection::to_error`] or `?` turns it into the
    /// full [`RateLimiterError`].
    ///
    /// # Errors
    ///
    /// [`WeightedRejection::TooMany`] at once if `n` is above the limit (no window could hold
    /// it); [`WeightedRejection::Full`], the same [`Rejection`](crate::Rejection) as
    /// `try_acquire`'s, if the window has fewer than `n` left.
    ///
    /// # Examples
    ///
    /// A request that costs 3 units of a budget of 5 per second.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter, WeightedRejection};
    ///
    /// let limiter = RateLimiter::of("bytes", 5, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.try_acquire_n(3).map(|permit| permit.remaining()), Ok(2));
    /// assert!(matches!(limiter.try_acquire_n(3), Err(WeightedRejection::Full(_))));
    /// assert_eq!(limiter.try_acquire_n(2).map(|permit| permit.remaining()), Ok(0));
    /// assert_eq!(limiter.try_acquire_n(0).map(|permit| permit.remaining()), Ok(0)); // takes nothing
    /// assert!(matches!(limiter.try_acquire_n(6), Err(WeightedRejection::TooMany { requested: 6, .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_acquire_n(&self, n: u32) -> Result<Permit, WeightedRejection<'_>> {
        let units = Units(n);
        if let Err(excess) = units.fits(self.policy.budget.limit()) {
            return Err(WeightedRejection::too_many(&self.policy.settings, excess));
        }
        self.policy
            .try_acquire(&self.state, || self.clock.now(), units)
            .map_err(|rejection| {
                WeightedRejection::refused(&self.policy.settings, rejection, units)
            })
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

    /// Like [`acquire_n`](RateLimiter::acquire_n), but a wait ends at once when `interrupt` is
    /// interrupted (from any thread), and the call fails.
    ///
    /// # Errors
    ///
    /// As [`acquire_n`](RateLimiter::acquire_n); [`RateLimiterError::Interrupted`] when
    /// `interrupt` is interrupted before or during a wait.
    ///
    /// # Examples
    ///
    /// An already interrupted handle fails a call that would have to wait.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, ManualClock, RateLimiter, RateLimiterError};
    ///
    /// let limiter = RateLimiter::of("bytes", 4, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(1));
    /// let interrupt = Interrupt::new();
    /// interrupt.interrupt();
    /// assert_eq!(limiter.acquire_n_interruptible(3, &interrupt)?.remaining(), 1);
    /// assert_eq!(
    ///     limiter.acquire_n_interruptible(3, &interrupt),
    ///     Err(RateLimiterError::Interrupted { name: "bytes" })
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire_n_interruptible(
        &self,
        n: u32,
        interrupt: &Interrupt,
    ) -> Result<Permit, RateLimiterError> {
        let units = self.policy.units(n)?;
        waiting::wait_blocking(
            &self.policy,
            &self.state,
            &self.clock,
            Some(interrupt),
            units,
        )
    }

    /// Like [`call_n`](RateLimiter::call_n), with waits interruptible through `interrupt`.
    ///
    /// # Errors
    ///
    /// As [`acquire_n_interruptible`](RateLimiter::acquire_n_interruptible); `op` does not
    /// run.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("bytes", 4, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.call_n_interruptible(4, &Interrupt::new(), || "sent"), Ok("sent"));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn call_n_interruptible<T>(
        &self,
        n: u32,
        interrupt: &Interrupt,
        op: impl FnOnce() -> T,
    ) -> Result<T, RateLimiterError> {
        self.acquire_n_interruptible(n, interrupt)?;
        Ok(op())
    }

    /// Runs `op` if `n` permits at once are granted (waiting up to `max_wait`, as
    /// [`acquire_n`](RateLimiter::acquire_n)), returning its result as it is: the weighted
    /// [`call`](RateLimiter::call).
    ///
    /// # Errors
    ///
    /// As [`acquire_n`](RateLimiter::acquire_n); `op` does not run.
    ///
    /// # Examples
    ///
    /// An upload of 300 bytes from a budget of 500 a second runs; a second one does not.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter, RateLimiterError};
    ///
    /// let limiter = RateLimiter::of("bytes", 500, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.call_n(300, || "sent"), Ok("sent"));
    /// assert!(matches!(limiter.call_n(300, || "sent"), Err(RateLimiterError::Rejected { .. })));
    /// assert!(matches!(limiter.call_n(501, || "sent"), Err(RateLimiterError::TooMany { .. })));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn call_n<T>(&self, n: u32, op: impl FnOnce() -> T) -> Result<T, RateLimiterError> {
        self.acquire_n(n)?;
        Ok(op())
    }

    /// Runs the future `op` if `n` permits at once are granted (awaiting up to `max_wait`, as
    /// [`acquire_n_async`](RateLimiter::acquire_n_async)); `op` is not polled at all without
    /// them.
    ///
    /// # Errors
    ///
    /// As [`acquire_n_async`](RateLimiter::acquire_n_async); `op` is dropped unpolled.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("bytes", 4, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let first = futures::executor::block_on(limiter.call_n_async(3, async { 7 }));
    /// let second = futures::executor::block_on(limiter.call_n_async(3, async { 8 }));
    /// assert_eq!(first, Ok(7));
    /// assert!(second.is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn call_n_async<F: IntoFuture>(
        &self,
        n: u32,
        op: F,
    ) -> Result<F::Output, RateLimiterError> {
        self.acquire_n_async(n).await?;
        Ok(op.await)
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
