//! Changing one key's limit live, through the server, for every process; and reading the live
//! limits again when the server says they changed.

use std::sync::Arc;

use fixed_window::Clock;

use crate::connection::Link;
use crate::error::SharedError;
use crate::invocation::timed_out;
use crate::limiter::SharedRateLimiter;
use crate::protocol::{Protocol, ScriptCall};
use crate::unavailable::Unavailable;

impl<C: Clock> SharedRateLimiter<C> {
    /// Changes `key`'s limit to `limit` for every process using this limiter's name, live: at
    /// once, for its current window too, as [`set_limit`](SharedRateLimiter::set_limit) does
    /// for every key. The permits already counted in the key's window count against the new
    /// limit (a lower one can leave it full at once, a higher one frees room). A limit set
    /// live comes before the configuration's for the key
    /// ([`Config::key_limit`](crate::Config::key_limit), then
    /// [`Config::key_limits`](crate::Config::key_limits), then the limiter's limit) until
    /// [`clear_key_limit`](SharedRateLimiter::clear_key_limit) removes it; a process that
    /// registers later adopts it.
    ///
    /// The server stores it with a new version of the limit, and this limiter adopts it.
    /// Every other process learns it as it learns a new limit: on one node its next attempt
    /// is told the limit changed, and it reads the live limits before making the attempt
    /// again under them (it never counts by the old one); on a Redis Cluster from the first
    /// counter written under the new version it meets, or from its background read of the
    /// configuration (at most every [`LIMIT_REFRESH`](crate::LIMIT_REFRESH)).
    ///
    /// # Errors
    ///
    /// [`SharedError::Config`] if `limit` is 0 and [`SharedError::InvalidKey`] if `key` cannot
    /// name a counter (nothing is sent); [`SharedError::Conflict`] if the server holds another
    /// period for this name; [`SharedError::Unavailable`] if the server could not answer
    /// within the timeout (whatever the fail policy), after which the limit may or may not
    /// have changed.
    ///
    /// # Examples
    ///
    /// Two processes share a limit of 2 per key; one of them gives `paid` 5 while its window
    /// is full: the other process has 3 more for it at once, and `free` still 2.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("tenants", 2, Duration::from_secs(3600))?;
    /// let a = SharedRateLimiter::connect_blocking(config.clone(), client.clone())?;
    /// let b = SharedRateLimiter::connect_blocking(config, client)?;
    /// a.try_acquire("paid")?;
    /// a.try_acquire("paid")?;
    ///
    /// a.set_key_limit("paid", 5)?;
    /// assert_eq!(b.try_acquire("paid")?.remaining(), Some(2));
    /// assert_eq!((b.key_limit("paid"), b.key_limit("free")), (5, 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_key_limit(&self, key: &str, limit: u32) -> Result<(), SharedError> {
        self.change_key_limit_blocking(key, Some(limit))
    }

    /// Removes `key`'s live limit ([`set_key_limit`](SharedRateLimiter::set_key_limit)) for
    /// every process: the key goes back to the limit the configuration gives it, at once and
    /// for its current window too, learnt by every process as a change of the limit is.
    /// Removing a limit that is not set still makes a new version of the limit.
    ///
    /// # Errors
    ///
    /// As [`set_key_limit`](SharedRateLimiter::set_key_limit).
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
    /// let config = Config::of("tenants", 2, Duration::from_secs(3600))?.key_limit("paid", 10)?;
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// limiter.set_key_limit("paid", 1)?;
    /// assert_eq!(limiter.try_acquire("paid")?.remaining(), Some(0));
    /// limiter.clear_key_limit("paid")?;
    /// assert_eq!(limiter.try_acquire("paid")?.remaining(), Some(8)); // 2 of 10 used
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clear_key_limit(&self, key: &str) -> Result<(), SharedError> {
        self.change_key_limit_blocking(key, None)
    }

    /// [`set_key_limit`](SharedRateLimiter::set_key_limit), awaiting the round trip.
    ///
    /// # Errors
    ///
    /// As [`set_key_limit`](SharedRateLimiter::set_key_limit).
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
    /// futures::executor::block_on(limiter.set_key_limit_async("k", 1))?;
    /// assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn set_key_limit_async(&self, key: &str, limit: u32) -> Result<(), SharedError> {
        self.change_key_limit(key, Some(limit)).await
    }

    /// [`clear_key_limit`](SharedRateLimiter::clear_key_limit), awaiting the round trip.
    ///
    /// # Errors
    ///
    /// As [`set_key_limit`](SharedRateLimiter::set_key_limit).
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
    /// limiter.set_key_limit("k", 1)?;
    /// futures::executor::block_on(limiter.clear_key_limit_async("k"))?;
    /// assert_eq!(limiter.key_limit("k"), 5);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn clear_key_limit_async(&self, key: &str) -> Result<(), SharedError> {
        self.change_key_limit(key, None).await
    }

    fn change_key_limit_blocking(&self, key: &str, limit: Option<u32>) -> Result<(), SharedError> {
        let call = self.protocol.set_key_limit_call(key, limit)?;
        let link = Arc::clone(self.connection.link());
        let reply = self
            .connection
            .run_blocking(async move { Ok(run_change(&link, &call).await) })
            .map_err(|cause| self.unavailable(cause))?;
        self.protocol
            .key_limit_set(key, limit, reply.as_deref().map_err(Clone::clone))
    }

    async fn change_key_limit(&self, key: &str, limit: Option<u32>) -> Result<(), SharedError> {
        let call = self.protocol.set_key_limit_call(key, limit)?;
        let link = Arc::clone(self.connection.link());
        let reply = self
            .connection
            .run(async move { Ok(run_change(&link, &call).await) })
            .await
            .map_err(|cause| self.unavailable(cause))?;
        self.protocol
            .key_limit_set(key, limit, reply.as_deref().map_err(Clone::clone))
    }
}

/// Runs the change `call` on its own, bounded by the timeout.
async fn run_change(link: &Link, call: &ScriptCall) -> Result<Vec<i64>, Unavailable> {
    let timeout = link.timeout();
    tokio::time::timeout(timeout, link.run(call))
        .await
        .unwrap_or_else(|_| Err(timed_out(timeout)))
}

/// Reads the live limits with the version of the limit they belong to, and adopts them (see
/// [`Protocol::limits_read`]), each round trip bounded by the timeout; if the server lost
/// those this process holds, writes them back once ([`Protocol::restore_call`]). A failed
/// read changes nothing: the next attempt is told of the change again, and a loss is found
/// again by the next read.
pub(super) async fn read_limits(
    link: Arc<Link>,
    protocol: Arc<Protocol>,
) -> Result<(), Unavailable> {
    let call = protocol.limits_call();
    read_with(&link, &protocol, &call).await?;
    if let Some(restore) = protocol.restore_call() {
        read_with(&link, &protocol, &restore).await?;
    }
    Ok(())
}

/// Runs `call`, a read of the live limits or their restoring, and reads its reply.
async fn read_with(link: &Link, protocol: &Protocol, call: &ScriptCall) -> Result<(), Unavailable> {
    let timeout = link.timeout();
    let reply = tokio::time::timeout(timeout, link.run_limits(call))
        .await
        .unwrap_or_else(|_| Err(timed_out(timeout)))?;
    // A conflict or a reply of no use changes nothing here: attempts report them.
    let _ = protocol.limits_read(call, Ok((&reply.0, reply.1.as_deref())));
    Ok(())
}
