//! Draining a key on the shared limiter: its current window counts as full, for every process,
//! until it ends.

use core::time::Duration;

use fixed_window::Clock;

use crate::error::SharedError;
use crate::limiter::SharedRateLimiter;
use crate::protocol::Decision;

impl<C: Clock> SharedRateLimiter<C> {
    /// Uses up the rest of `key`'s current window on the server: until it ends, every call for
    /// `key`, in every process, is rejected (or waits), as when its permits are all taken. For
    /// when the upstream answers "too many requests". This process also remembers the window
    /// full, so its own calls are rejected without a round trip. Emits no event. Returns the
    /// time until the key's next window opens, by the server's clock.
    ///
    /// # Errors
    ///
    /// [`SharedError::Unavailable`] if the server could not drain it (whatever the fail
    /// policy: nothing was granted), [`SharedError::Conflict`], or
    /// [`SharedError::InvalidKey`].
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
    /// let config = Config::of("upstream", 100, Duration::from_secs(3600))?;
    /// let a = SharedRateLimiter::connect_blocking(config.clone(), client.clone())?;
    /// let b = SharedRateLimiter::connect_blocking(config, client)?;
    /// assert!(a.drain("search")? <= Duration::from_secs(3600));
    /// assert!(b.try_acquire("search").is_err()); // drained for every process
    /// assert!(b.try_acquire("checkout").is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn drain(&self, key: &str) -> Result<Duration, SharedError> {
        let now = self.clock.now();
        let (_, decision) = self.attempt_blocking(key, None, now, now)?;
        self.drained(decision)
    }

    /// [`drain`](SharedRateLimiter::drain), awaiting the round trip.
    ///
    /// # Errors
    ///
    /// As [`drain`](SharedRateLimiter::drain).
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
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("upstream", 5, Duration::from_secs(3600))?, client)?;
    /// futures::executor::block_on(limiter.drain_async("k"))?;
    /// assert!(limiter.try_acquire("k").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn drain_async(&self, key: &str) -> Result<Duration, SharedError> {
        let now = self.clock.now();
        let (_, decision) = self.attempt_async(key, None, now, now).await?;
        self.drained(decision)
    }

    /// What a drain's decision means: the time to the window's end, or why it did not drain.
    fn drained(&self, decision: Decision) -> Result<Duration, SharedError> {
        match decision {
            Decision::Permitted { reset, .. } => Ok(reset),
            // Known full already: nothing left to take.
            Decision::Rejected { retry_after, .. } => Ok(retry_after),
            Decision::Wait { until } => Ok(until.saturating_duration_since(self.clock.now())),
            Decision::Unavailable(cause) | Decision::FailedOpen(cause) => {
                Err(self.unavailable(cause))
            }
            Decision::Conflict(conflict) => Err(SharedError::Conflict(conflict)),
            Decision::LimitChanged { .. } => Err(self.protocol.limit_kept_changing()),
            // A drain asks for no count, so it never meets this; said as any call would.
            Decision::TooMany { requested, limit } => Err(self.protocol.too_many(requested, limit)),
        }
    }
}
