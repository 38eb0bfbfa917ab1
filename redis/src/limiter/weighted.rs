//! Weighted permits on the shared limiter: `n` permits of a key's window at once, all or none,
//! counted by the server as one permit is.

use core::future::IntoFuture;

use fixed_window::{Clock, Interrupt};

use crate::error::SharedError;
use crate::limiter::SharedRateLimiter;
use crate::permit::SharedPermit;

impl<C: Clock> SharedRateLimiter<C> {
    /// Takes `n` permits for `key` at once if its window has them all, never waiting: all `n`
    /// of one window, or none, counted by the server in one script run. `remaining` is what
    /// the window has left after all `n`; `n = 0` is permitted without counting (it still asks
    /// the server, which answers what is left).
    ///
    /// # Errors
    ///
    /// [`SharedError::Limited`] with [`RateLimiterError::TooMany`](fixed_window::RateLimiterError::TooMany) at once if `n` is above the
    /// limit (no round trip); otherwise as [`try_acquire`](SharedRateLimiter::try_acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::RateLimiterError;
    /// use fixed_window_redis::{Config, SharedError, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("tokens", 10, Duration::from_secs(3600))?;
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// assert_eq!(limiter.try_acquire_n("alice", 7)?.remaining(), Some(3));
    /// assert!(limiter.try_acquire_n("alice", 4).is_err()); // 3 left: none taken
    /// assert_eq!(limiter.try_acquire_n("alice", 3)?.remaining(), Some(0));
    /// let too_many = limiter.try_acquire_n("bob", 11).unwrap_err();
    /// assert!(matches!(too_many, SharedError::Limited(RateLimiterError::TooMany { requested: 11, .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_acquire_n(&self, key: &str, n: u32) -> Result<SharedPermit, SharedError> {
        self.weigh(key, n)?;
        let now = self.clock.now();
        let (at, decision) = self.attempt_blocking(key, Some(n), now, now)?;
        self.finish_at_once(key, at, &decision)
    }

    /// Takes `n` permits for `key` at once, waiting (blocking the thread) up to `max_wait` for
    /// a window that has them all.
    ///
    /// # Errors
    ///
    /// As [`try_acquire_n`](SharedRateLimiter::try_acquire_n) and
    /// [`acquire`](SharedRateLimiter::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("tokens", 4, Duration::from_secs(3600))?.with_max_wait(Duration::from_secs(1));
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// assert_eq!(limiter.acquire_n("k", 4)?.remaining(), Some(0));
    /// assert!(limiter.acquire_n("k", 1).is_err()); // the next window is an hour away
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire_n(&self, key: &str, n: u32) -> Result<SharedPermit, SharedError> {
        self.weigh(key, n)?;
        self.acquire_blocking(key, n, None)
    }

    /// Like [`acquire_n`](SharedRateLimiter::acquire_n), but a wait ends at once when
    /// `interrupt` is interrupted (from any thread), and the call fails.
    ///
    /// # Errors
    ///
    /// As [`acquire_n`](SharedRateLimiter::acquire_n);
    /// [`Limited(Interrupted)`](fixed_window::RateLimiterError::Interrupted) when `interrupt`
    /// is interrupted before or during a wait.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Interrupt, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("tokens", 4, Duration::from_secs(3600))?, client)?;
    /// let permit = limiter.acquire_n_interruptible("k", 3, &Interrupt::new())?;
    /// assert_eq!(permit.remaining(), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire_n_interruptible(
        &self,
        key: &str,
        n: u32,
        interrupt: &Interrupt,
    ) -> Result<SharedPermit, SharedError> {
        self.weigh(key, n)?;
        self.acquire_blocking(key, n, Some(interrupt))
    }

    /// Like [`call_n`](SharedRateLimiter::call_n), with waits interruptible through
    /// `interrupt`.
    ///
    /// # Errors
    ///
    /// As [`acquire_n_interruptible`](SharedRateLimiter::acquire_n_interruptible); `op` does
    /// not run.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Interrupt, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("tokens", 4, Duration::from_secs(3600))?, client)?;
    /// assert_eq!(limiter.call_n_interruptible("k", 4, &Interrupt::new(), || "ran")?, "ran");
    /// assert!(limiter.call_n_interruptible("k", 1, &Interrupt::new(), || "ran").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn call_n_interruptible<T>(
        &self,
        key: &str,
        n: u32,
        interrupt: &Interrupt,
        op: impl FnOnce() -> T,
    ) -> Result<T, SharedError> {
        self.acquire_n_interruptible(key, n, interrupt)?;
        Ok(op())
    }

    /// Runs `op` if `n` permits for `key` at once are granted (waiting up to `max_wait`, as
    /// [`acquire_n`](SharedRateLimiter::acquire_n)), returning its result as it is: the
    /// weighted [`call`](SharedRateLimiter::call).
    ///
    /// # Errors
    ///
    /// As [`acquire_n`](SharedRateLimiter::acquire_n); `op` does not run.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, RateLimiterError, SharedError, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("tokens", 10, Duration::from_secs(3600))?, client)?;
    /// assert_eq!(limiter.call_n("alice", 7, || "answered")?, "answered");
    /// assert!(limiter.call_n("alice", 7, || unreachable!("3 left: this never runs")).is_err());
    /// let too_many = limiter.call_n("bob", 11, || "answered").unwrap_err();
    /// assert!(matches!(too_many, SharedError::Limited(RateLimiterError::TooMany { requested: 11, .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn call_n<T>(&self, key: &str, n: u32, op: impl FnOnce() -> T) -> Result<T, SharedError> {
        self.acquire_n(key, n)?;
        Ok(op())
    }

    /// Runs the future `op` if `n` permits for `key` at once are granted (awaiting up to
    /// `max_wait`, as [`acquire_n_async`](SharedRateLimiter::acquire_n_async)); `op` is not
    /// polled at all without them.
    ///
    /// # Errors
    ///
    /// As [`acquire_n_async`](SharedRateLimiter::acquire_n_async); `op` is dropped unpolled.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("tokens", 4, Duration::from_secs(3600))?, client)?;
    /// let first = futures::executor::block_on(limiter.call_n_async("k", 3, async { 7 }));
    /// let second = futures::executor::block_on(limiter.call_n_async("k", 3, async { 8 }));
    /// assert_eq!(first, Ok(7));
    /// assert!(second.is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn call_n_async<F: IntoFuture>(
        &self,
        key: &str,
        n: u32,
        op: F,
    ) -> Result<F::Output, SharedError> {
        self.acquire_n_async(key, n).await?;
        Ok(op.await)
    }

    /// [`try_acquire_n`](SharedRateLimiter::try_acquire_n), awaiting the round trip.
    ///
    /// # Errors
    ///
    /// As [`try_acquire_n`](SharedRateLimiter::try_acquire_n).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("tokens", 5, Duration::from_secs(3600))?, client)?;
    /// let permit = futures::executor::block_on(limiter.try_acquire_n_async("k", 5))?;
    /// assert_eq!(permit.remaining(), Some(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn try_acquire_n_async(
        &self,
        key: &str,
        n: u32,
    ) -> Result<SharedPermit, SharedError> {
        self.weigh(key, n)?;
        let now = self.clock.now();
        let (at, decision) = self.attempt_async(key, Some(n), now, now).await?;
        self.finish_at_once(key, at, &decision)
    }

    /// [`acquire_n`](SharedRateLimiter::acquire_n), awaiting the clock's asynchronous sleep;
    /// cancel-safe while it sleeps, as [`acquire_async`](SharedRateLimiter::acquire_async).
    ///
    /// # Errors
    ///
    /// As [`acquire_n`](SharedRateLimiter::acquire_n).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("tokens", 5, Duration::from_secs(3600))?, client)?;
    /// let permit = futures::executor::block_on(limiter.acquire_n_async("k", 2))?;
    /// assert_eq!(permit.remaining(), Some(3));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn acquire_n_async(&self, key: &str, n: u32) -> Result<SharedPermit, SharedError> {
        self.weigh(key, n)?;
        self.acquire_waiting_async(key, n).await
    }

    /// `n` refused at once if no window of `key`'s can hold it.
    fn weigh(&self, key: &str, n: u32) -> Result<(), SharedError> {
        let limit = self.key_limit(key);
        if n <= limit {
            return Ok(());
        }
        Err(self.protocol.too_many(n, limit))
    }
}
