//! Peeking at a key on the shared limiter: one read-only round trip, or a local answer while
//! its window is remembered full.

use fixed_window::{Clock, Peek};

use crate::error::SharedError;
use crate::limiter::SharedRateLimiter;
use crate::limiter::attempt::CHANGE_RETRIES;
use crate::limiter::wait::{Awaiting, Blocking, Wait, block};
use crate::protocol::PeekBegin;

impl<C: Clock> SharedRateLimiter<C> {
    /// The permits `key`'s current window has left, in every process together, and the time
    /// until it ends, counting nothing: one round trip running the script in its read-only
    /// mode (TIME and GET, no write), or no round trip while this process remembers the
    /// window full. Registers nothing: no configuration is stored (a limiter no process has
    /// registered answers the whole limit), no counter made, no event emitted, and a limiter
    /// not yet registered does not register for it.
    ///
    /// The answer is the server's at one instant within the call, so it is stale by up to a
    /// round trip when it arrives; a local answer (none left) holds until the same instant a
    /// local rejection would (see `docs/rules.md`, Peeking). The limit is the one in force
    /// in this process, which adopts a newer one the server holds before answering.
    ///
    /// # Errors
    ///
    /// [`SharedError::Unavailable`] if the server cannot answer, whatever the fail policy (a
    /// peek is never answered by a guess); [`SharedError::Conflict`];
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
    /// let config = Config::of("search", 3, Duration::from_secs(3600))?;
    /// let a = SharedRateLimiter::connect_blocking(config.clone(), client.clone())?;
    /// let b = SharedRateLimiter::connect_blocking(config, client)?;
    /// assert_eq!(b.peek("alice")?.remaining(), 3);
    /// a.try_acquire("alice")?;
    /// let peek = b.peek("alice")?;
    /// assert_eq!((peek.remaining(), peek.limit()), (2, 3));
    /// assert!(peek.resets_in() <= Duration::from_secs(3600));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn peek(&self, key: &str) -> Result<Peek, SharedError> {
        block(self.peek_with(&Blocking::new(None), key))
    }

    /// [`peek`](SharedRateLimiter::peek), awaiting the round trip.
    ///
    /// # Errors
    ///
    /// As [`peek`](SharedRateLimiter::peek).
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
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("search", 2, Duration::from_secs(3600))?, client)?;
    /// limiter.try_acquire("k")?;
    /// let peek = futures::executor::block_on(limiter.peek_async("k"))?;
    /// assert_eq!(peek.remaining(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn peek_async(&self, key: &str) -> Result<Peek, SharedError> {
        self.peek_with(&Awaiting, key).await
    }

    /// A peek, made again (up to [`CHANGE_RETRIES`] times) while the limit changes under it.
    async fn peek_with(&self, wait: &impl Wait, key: &str) -> Result<Peek, SharedError> {
        if let Some(conflict) = self.registrar.refused() {
            return Err(SharedError::Conflict(*conflict));
        }
        for _ in 0..=CHANGE_RETRIES {
            let call = match self.protocol.begin_peek(key, self.clock.now())? {
                PeekBegin::Known(peek) => return Ok(peek),
                PeekBegin::Call(call) => call,
            };
            let version = call.limit_version();
            let reply = wait.acquire(&self.connection, call).await;
            let answer = match reply {
                Ok(reply) => self.protocol.finish_peek(key, version, Ok(&reply)),
                Err(cause) => self.protocol.finish_peek(key, version, Err(cause)),
            };
            if let Some(peek) = answer? {
                return Ok(peek);
            }
            if self.protocol.limits_due() {
                wait.read_limits(&self.connection, &self.protocol).await;
            }
        }
        Err(self.protocol.limit_kept_changing())
    }
}
