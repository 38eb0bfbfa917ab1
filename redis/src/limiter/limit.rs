//! Changing the shared limit: through the server, for every process.

use std::sync::Arc;

use fixed_window::Clock;

use crate::error::SharedError;
use crate::invocation::timed_out;
use crate::limiter::SharedRateLimiter;
use crate::protocol::ScriptCall;

impl<C: Clock> SharedRateLimiter<C> {
    /// The limit in effect: the configured one ([`Config::limit`](crate::Config::limit)) until
    /// it is changed, by this process ([`set_limit`](SharedRateLimiter::set_limit)) or by
    /// another one, which this process learns from the server.
    ///
    /// # Examples
    ///
    /// See [`set_limit`](SharedRateLimiter::set_limit).
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 5, Duration::from_secs(3600))?, client)?;
    /// assert_eq!(limiter.limit(), 5);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limit(&self) -> u32 {
        self.protocol.limit()
    }

    /// The limit in effect for `key`: its own, if the configuration gives it one
    /// ([`Config::key_limit`](crate::Config::key_limit),
    /// [`Config::key_limits`](crate::Config::key_limits)), else the limiter's
    /// [`limit`](SharedRateLimiter::limit).
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
    /// let config = Config::of("tenants", 100, Duration::from_secs(3600))?.key_limit("paid", 1000)?;
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// assert_eq!((limiter.key_limit("paid"), limiter.key_limit("free")), (1000, 100));
    /// assert_eq!(limiter.try_acquire("paid")?.remaining(), Some(999));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn key_limit(&self, key: &str) -> u32 {
        self.protocol.key_limit(key)
    }

    /// Changes the limit shared by every process using this limiter's name to `limit`, at
    /// once, for the current windows too: the permits already counted in a key's window
    /// count against the new limit, so a lower limit can leave it full at once, and a higher
    /// one frees room. The period and the origin do not change.
    ///
    /// The server stores the new limit with a new version of it, and this limiter (and its
    /// clones) adopts it. Every other process learns it from the server with its next
    /// attempt, which the server answers with the new limit instead of deciding; the process
    /// adopts it and makes the attempt again under it, so a process still holding the old
    /// limit never counts by it. On a Redis Cluster, where attempts do not read the
    /// configuration, a process learns it from the first counter written under the new limit
    /// that it meets, or from reading the configuration again, which an active limiter does
    /// in the background at most every [`LIMIT_REFRESH`](crate::LIMIT_REFRESH):
    /// until then (about a second) it counts by the old limit on the keys no process of the
    /// new limit has touched since the change.
    ///
    /// # Errors
    ///
    /// [`SharedError::Config`] if `limit` is 0, as when configuring (nothing is sent);
    /// [`SharedError::Conflict`] if the server holds another period for this name;
    /// [`SharedError::Unavailable`] if the server could not answer within the timeout
    /// (whatever the fail policy), after which the limit may or may not have changed.
    ///
    /// # Examples
    ///
    /// Two processes share a limit of 3 per key; one of them lowers it to 2 while a key has
    /// used 2: that key's window is full for both at once. Raised to 4, it has room for 2.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedError, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("checkout", 3, Duration::from_secs(3600))?;
    /// let a = SharedRateLimiter::connect_blocking(config.clone(), client.clone())?;
    /// let b = SharedRateLimiter::connect_blocking(config, client)?;
    /// a.try_acquire("alice")?;
    /// b.try_acquire("alice")?;
    ///
    /// a.set_limit(2)?;
    /// assert!(b.try_acquire("alice").is_err()); // 2 used of 2
    /// assert_eq!(b.limit(), 2); // learnt from the server
    ///
    /// b.set_limit(4)?;
    /// assert_eq!(a.try_acquire("alice")?.remaining(), Some(1));
    /// assert_eq!(a.limit(), 4);
    /// assert!(matches!(a.set_limit(0), Err(SharedError::Config { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_limit(&self, limit: u32) -> Result<(), SharedError> {
        let call = self.limit_call(limit)?;
        let link = Arc::clone(self.connection.link());
        let reply = self
            .connection
            .run_blocking(async move { Ok(run_bounded(&link, &call).await) })
            .map_err(|cause| self.unavailable(cause))?;
        self.protocol
            .limit_set(reply.as_deref().map_err(Clone::clone))?;
        Ok(())
    }

    /// [`set_limit`](SharedRateLimiter::set_limit), awaiting the round trip.
    ///
    /// # Errors
    ///
    /// As [`set_limit`](SharedRateLimiter::set_limit).
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
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 5, Duration::from_secs(3600))?, client)?;
    /// futures::executor::block_on(limiter.set_limit_async(1))?;
    /// assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn set_limit_async(&self, limit: u32) -> Result<(), SharedError> {
        let call = self.limit_call(limit)?;
        let link = Arc::clone(self.connection.link());
        let reply = self
            .connection
            .run(async move { Ok(run_bounded(&link, &call).await) })
            .await
            .map_err(|cause| self.unavailable(cause))?;
        self.protocol
            .limit_set(reply.as_deref().map_err(Clone::clone))?;
        Ok(())
    }

    fn limit_call(&self, limit: u32) -> Result<ScriptCall, SharedError> {
        self.protocol
            .set_limit_call(limit)
            .map_err(|error| SharedError::Config {
                name: self.config().name(),
                error,
            })
    }
}

/// Runs `call` on its own (connecting first if need be), the whole bounded by the timeout.
async fn run_bounded(
    link: &crate::connection::Link,
    call: &ScriptCall,
) -> Result<Vec<i64>, crate::unavailable::Unavailable> {
    let timeout = link.timeout();
    tokio::time::timeout(timeout, link.run(call))
        .await
        .unwrap_or_else(|_| Err(timed_out(timeout)))
}
