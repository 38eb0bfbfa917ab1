//! Handing back the unspent rest of this process's shares before it stops (see
//! [`Protocol::hand_back_calls`](crate::Protocol::hand_back_calls)).

use fixed_window::Clock;

use crate::error::SharedError;
use crate::limiter::SharedRateLimiter;
use crate::limiter::wait::{Awaiting, Blocking, Wait, block};

impl<C: Clock> SharedRateLimiter<C> {
    /// Hands back the unspent rest of every share this process holds, so that other
    /// processes may be granted those permits in the same window: call it when this limiter
    /// stops serving (before dropping it, at shutdown). Each remainder is taken out of this
    /// process's hands first (an attempt after this asks the server, or leases anew), then
    /// taken off its window's count on the server, one call per key, only if the counter is
    /// still of the window the share was leased in, and never more than it holds. How many
    /// permits the server took off. Nothing is sent without a lease or a share.
    ///
    /// Dropping a limiter hands nothing back by itself: a drop may happen where no round
    /// trip can be waited for. A share dropped after a lost reply, a conflict or a change of
    /// the limit is never handed back (the count is uncertain then).
    ///
    /// # Errors
    ///
    /// [`SharedError::Unavailable`] with the first failed call's cause: the remainders of the
    /// calls that failed stay counted (fewer permits granted, never more), the other calls
    /// are made all the same, and every share left is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Lease, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("search", 10, Duration::from_secs(3600))?;
    /// let leasing = SharedRateLimiter::connect_blocking(config.clone().with_lease(Lease::new(4)?), client.clone())?;
    /// let exact = SharedRateLimiter::connect_blocking(config, client)?;
    /// assert_eq!(leasing.try_acquire("k")?.remaining(), Some(1)); // a share of 10 / 4 = 2
    /// assert_eq!(exact.peek("k")?.remaining(), 8);
    /// assert_eq!(leasing.hand_back()?, 1);
    /// assert_eq!(exact.peek("k")?.remaining(), 9);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hand_back(&self) -> Result<u32, SharedError> {
        block(self.hand_back_with(&Blocking::new(None)))
    }

    /// [`hand_back`](SharedRateLimiter::hand_back), awaiting the round trips.
    ///
    /// # Errors
    ///
    /// As [`hand_back`](SharedRateLimiter::hand_back).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Lease, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("search", 100, Duration::from_secs(3600))?.with_lease(Lease::new(8)?);
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// limiter.try_acquire("k")?;
    /// assert_eq!(futures::executor::block_on(limiter.hand_back_async())?, 7);
    /// assert_eq!(futures::executor::block_on(limiter.hand_back_async())?, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn hand_back_async(&self) -> Result<u32, SharedError> {
        self.hand_back_with(&Awaiting).await
    }

    async fn hand_back_with(&self, wait: &impl Wait) -> Result<u32, SharedError> {
        let mut taken_off = 0_u32;
        let mut failed = None;
        for call in self.protocol.hand_back_calls() {
            let reply = wait.acquire(&self.connection, call).await;
            let answer = match reply {
                Ok(reply) => self.protocol.finish_hand_back(Ok(&reply)),
                Err(cause) => self.protocol.finish_hand_back(Err(cause)),
            };
            match answer {
                Ok(permits) => taken_off = taken_off.saturating_add(permits),
                Err(cause) => {
                    failed.get_or_insert(cause);
                }
            }
        }
        match failed {
            Some(cause) => Err(self.unavailable(cause)),
            None => Ok(taken_off),
        }
    }
}
