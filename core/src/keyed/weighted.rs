//! Weighted permits per key: `n` permits of the key's window at once, all or none.

use core::future::IntoFuture;
use core::hash::{BuildHasher, Hash};

use crate::attempt::Attempt;
use crate::clock::Clock;
use crate::error::RateLimiterError;
use crate::instant::Instant;
use crate::interrupt::Interrupt;
use crate::keyed::{KeyedRateLimiter, KeyedRateLimiterError};
use crate::permit::Permit;
use crate::waiting;

impl<K, C, S> KeyedRateLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: Clock,
    S: BuildHasher,
{
    /// Takes `n` permits for `key` at once if its current window has them all, never waiting:
    /// all `n` of one window, or none. `n = 0` is permitted without counting anything.
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::TooMany`] for `key` at once if `n` is above the limit;
    /// [`RateLimiterError::Rejected`] if the key's window has fewer than `n` left.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock, RateLimiterError};
    ///
    /// let limiter = KeyedRateLimiter::of("tokens", 10, Duration::from_secs(60))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.try_acquire_n(&"alice", 7)?.remaining(), 3);
    /// assert!(limiter.try_acquire_n(&"alice", 4).is_err());
    /// assert_eq!(limiter.try_acquire_n(&"bob", 10)?.remaining(), 0);
    /// let too_many = limiter.try_acquire_n(&"carol", 11).unwrap_err();
    /// assert!(matches!(too_many.error(), RateLimiterError::TooMany { limit: 10, requested: 11, .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_acquire_n<'k>(
        &self,
        key: &'k K,
        n: u32,
    ) -> Result<Permit, KeyedRateLimiterError<&'k K>> {
        let units = self
            .units(key, n)
            .map_err(|error| KeyedRateLimiterError::new(key, error))?;
        self.policy
            .try_acquire(&self.source(key), || self.clock.now(), units)
            .map_err(|rejection| {
                KeyedRateLimiterError::new(key, self.policy.refused(&rejection, units))
            })
    }

    /// Takes `n` permits for `key` at once, waiting (blocking the thread) up to `max_wait` for
    /// a window of the key's that has them all.
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::TooMany`] at once if `n` is above the limit; otherwise as
    /// [`acquire`](KeyedRateLimiter::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("tokens", 4, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(1));
    /// limiter.acquire_n(&1, 3)?;
    /// let permit = limiter.acquire_n(&1, 2)?; // waits for the key's next window
    /// assert_eq!(permit.at(), Instant::from_nanos(1_000_000_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire_n<'k>(
        &self,
        key: &'k K,
        n: u32,
    ) -> Result<Permit, KeyedRateLimiterError<&'k K>> {
        self.units(key, n)
            .and_then(|units| {
                waiting::wait_blocking(&self.policy, &self.source(key), &self.clock, None, units)
            })
            .map_err(|error| KeyedRateLimiterError::new(key, error))
    }

    /// Like [`acquire_n`](KeyedRateLimiter::acquire_n), but a wait ends at once when
    /// `interrupt` is interrupted (from any thread), and the call fails.
    ///
    /// # Errors
    ///
    /// As [`acquire_n`](KeyedRateLimiter::acquire_n); [`RateLimiterError::Interrupted`] when
    /// `interrupt` is interrupted before or during a wait.
    ///
    /// # Examples
    ///
    /// An already interrupted handle fails a call that would have to wait.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, KeyedRateLimiter, ManualClock, RateLimiterError};
    ///
    /// let limiter = KeyedRateLimiter::of("tokens", 4, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(1));
    /// let interrupt = Interrupt::new();
    /// interrupt.interrupt();
    /// assert_eq!(limiter.acquire_n_interruptible(&"k", 3, &interrupt)?.remaining(), 1);
    /// let err = limiter.acquire_n_interruptible(&"k", 3, &interrupt).unwrap_err();
    /// assert_eq!(err.error(), RateLimiterError::Interrupted { name: "tokens" });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire_n_interruptible<'k>(
        &self,
        key: &'k K,
        n: u32,
        interrupt: &Interrupt,
    ) -> Result<Permit, KeyedRateLimiterError<&'k K>> {
        self.policy
            .units(n)
            .and_then(|units| {
                waiting::wait_blocking(
                    &self.policy,
                    &self.source(key),
                    &self.clock,
                    Some(interrupt),
                    units,
                )
            })
            .map_err(|error| KeyedRateLimiterError::new(key, error))
    }

    /// Like [`call_n`](KeyedRateLimiter::call_n), with waits interruptible through
    /// `interrupt`.
    ///
    /// # Errors
    ///
    /// As [`acquire_n_interruptible`](KeyedRateLimiter::acquire_n_interruptible); `op` does
    /// not run.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("tokens", 4, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.call_n_interruptible(&7, 4, &Interrupt::new(), || 1), Ok(1));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn call_n_interruptible<'k, T>(
        &self,
        key: &'k K,
        n: u32,
        interrupt: &Interrupt,
        op: impl FnOnce() -> T,
    ) -> Result<T, KeyedRateLimiterError<&'k K>> {
        self.acquire_n_interruptible(key, n, interrupt)?;
        Ok(op())
    }

    /// Runs `op` if `n` permits for `key` at once are granted (waiting up to `max_wait`, as
    /// [`acquire_n`](KeyedRateLimiter::acquire_n)), returning its result as it is: the weighted
    /// [`call`](KeyedRateLimiter::call).
    ///
    /// # Errors
    ///
    /// As [`acquire_n`](KeyedRateLimiter::acquire_n); `op` does not run.
    ///
    /// # Examples
    ///
    /// Each tenant has 10 tokens a minute; a request of 7 runs once per tenant.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock, RateLimiterError};
    ///
    /// let limiter = KeyedRateLimiter::of("tokens", 10, Duration::from_secs(60))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.call_n(&"alice", 7, || "answered"), Ok("answered"));
    /// assert!(limiter.call_n(&"alice", 7, || "answered").is_err());
    /// assert_eq!(limiter.call_n(&"bob", 7, || "answered"), Ok("answered"));
    /// let too_many = limiter.call_n(&"carol", 11, || "answered").unwrap_err();
    /// assert!(matches!(too_many.error(), RateLimiterError::TooMany { requested: 11, .. }));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn call_n<'k, T>(
        &self,
        key: &'k K,
        n: u32,
        op: impl FnOnce() -> T,
    ) -> Result<T, KeyedRateLimiterError<&'k K>> {
        self.acquire_n(key, n)?;
        Ok(op())
    }

    /// Runs the future `op` if `n` permits for `key` at once are granted (awaiting up to
    /// `max_wait`, as [`acquire_n_async`](KeyedRateLimiter::acquire_n_async)); `op` is not
    /// polled at all without them.
    ///
    /// # Errors
    ///
    /// As [`acquire_n_async`](KeyedRateLimiter::acquire_n_async); `op` is dropped unpolled.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("tokens", 4, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let first = futures::executor::block_on(limiter.call_n_async(&1, 3, async { 7 }));
    /// let second = futures::executor::block_on(limiter.call_n_async(&1, 3, async { 8 }));
    /// assert_eq!(first, Ok(7));
    /// assert!(second.is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn call_n_async<'k, F: IntoFuture>(
        &self,
        key: &'k K,
        n: u32,
        op: F,
    ) -> Result<F::Output, KeyedRateLimiterError<&'k K>> {
        self.acquire_n_async(key, n).await?;
        Ok(op.await)
    }

    /// Takes `n` permits for `key` at once, awaiting the clock's asynchronous sleep up to
    /// `max_wait`; cancel-safe as [`acquire_async`](KeyedRateLimiter::acquire_async).
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::TooMany`] at once if `n` is above the limit; otherwise as
    /// [`acquire_async`](KeyedRateLimiter::acquire_async).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("tokens", 4, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let permit = futures::executor::block_on(limiter.acquire_n_async(&"k", 4)).unwrap();
    /// assert_eq!(permit.remaining(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn acquire_n_async<'k>(
        &self,
        key: &'k K,
        n: u32,
    ) -> Result<Permit, KeyedRateLimiterError<&'k K>> {
        let units = self
            .units(key, n)
            .map_err(|error| KeyedRateLimiterError::new(key, error))?;
        waiting::wait_async(&self.policy, &self.source(key), &self.clock, units)
            .await
            .map_err(|error| KeyedRateLimiterError::new(key, error))
    }

    /// The sans-IO step of [`attempt`](KeyedRateLimiter::attempt) for `n` permits of `key`'s
    /// window at once.
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::TooMany`] if `n` is above the limit: nothing is claimed.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Attempt, Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 3, Duration::from_nanos(10))?.with_clock(ManualClock::new());
    /// let t = Instant::ZERO;
    /// assert_eq!(limiter.attempt_n(&"a", 3, t, t)?, Attempt::Permitted { remaining: 0 });
    /// assert_eq!(limiter.attempt_n(&"b", 1, t, t)?, Attempt::Permitted { remaining: 2 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempt_n(
        &self,
        key: &K,
        n: u32,
        now: Instant,
        deadline: Instant,
    ) -> Result<Attempt, RateLimiterError> {
        let units = self.units(key, n)?;
        self.policy
            .attempt(&self.source(key), now, deadline, units)
            .map_err(|excess| self.policy.settings.too_many(excess))
    }
}
