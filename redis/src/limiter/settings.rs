//! The settings a shared limiter was made with, read as the in-process limiters read theirs.

use core::time::Duration;

use fixed_window::Clock;

use crate::limiter::SharedRateLimiter;

impl<C: Clock> SharedRateLimiter<C> {
    /// The limiter's name, shared by every process that counts with it, as in its events and
    /// errors.
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
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 5, Duration::from_secs(1))?, client)?;
    /// assert_eq!(limiter.name(), "api");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self) -> &'static str {
        self.config().name()
    }

    /// The window's length, as configured (one per name: every process has the same).
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
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 5, Duration::from_secs(60))?, client)?;
    /// assert_eq!(limiter.period(), Duration::from_secs(60));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn period(&self) -> Duration {
        self.config().period()
    }

    /// How long an excess call of this process may wait for a later window.
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
    /// let config = Config::of("api", 5, Duration::from_secs(1))?.with_max_wait(Duration::from_millis(250));
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// assert_eq!(limiter.max_wait(), Duration::from_millis(250));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_wait(&self) -> Duration {
        self.config().max_wait()
    }
}
