//! Weighted permits on the shared limiter: `n` permits of a key's window at once, all or none,
//! counted by the server as one permit is.

use fixed_window::Clock;

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
        self.weigh(n)?;
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
        self.weigh(n)?;
        self.acquire_blocking(key, n, None)
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
        self.weigh(n)?;
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
        self.weigh(n)?;
        self.acquire_waiting_async(key, n).await
    }

    /// `n` refused at once if no window can hold it.
    fn weigh(&self, n: u32) -> Result<(), SharedError> {
        let limit = self.limit();
        if n <= limit {
            return Ok(());
        }
        Err(self.protocol.too_many(n, limit))
    }
}
