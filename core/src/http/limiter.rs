//! What the HTTP layer asks of a limiter: its fields, and a decision for one key. One trait,
//! so the plain, keyed and shared limiters share one layer and one way of answering.

use core::future::Future;
use core::hash::{BuildHasher, Hash};

use crate::clock::Clock;
use crate::error::RateLimiterError;
use crate::keyed::KeyedRateLimiter;
use crate::limiter::RateLimiter;
use crate::peek::Peek;

use super::decision::Decision;
use super::fields::RateLimitFields;

/// A limiter that decides HTTP requests under keys of type `K`: the plain
/// [`RateLimiter`] (key `()`, with [`AllRequests`](super::AllRequests)), the
/// [`KeyedRateLimiter`] (its own key type), and `fixed-window-redis`'s shared limiter.
///
/// A decision takes a permit as the limiter's `acquire_async` does: it may wait up to the
/// limiter's `max_wait`, and dropping the future gives the wait up.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::http::{Decision, HttpLimiter};
/// use fixed_window::{KeyedRateLimiter, ManualClock};
///
/// let limiter = KeyedRateLimiter::of("per-user", 1, Duration::from_secs(10))?.with_clock(ManualClock::new());
/// futures::executor::block_on(async {
///     let first = limiter.decide("ada").await;
///     assert_eq!(first, Decision::Permitted { remaining: 0, reset: Duration::from_secs(10) });
///     assert!(!limiter.decide("ada").await.is_permit());
/// });
/// assert_eq!(limiter.fields().policy(), "\"per-user\";q=1;w=10");
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub trait HttpLimiter<K>: Send + Sync + 'static {
    /// What the `RateLimit-Policy` and `RateLimit` fields say of this limiter.
    fn fields(&self) -> RateLimitFields;

    /// What the fields say of requests limited under `key`: [`fields`](HttpLimiter::fields)
    /// with the key's own limit, for a limiter that gives keys limits of their own (by
    /// default, `fields()`).
    fn fields_of(&self, key: &K) -> RateLimitFields {
        let _ = key;
        self.fields()
    }

    /// Decides one request limited under `key`.
    fn decide(&self, key: K) -> impl Future<Output = Decision> + Send;

    /// What a request under `key` is told without being counted (a
    /// [`shadow`](super::HttpRateLimitLayer::shadow) layer's answer): the limiter's `peek`,
    /// as [`Decision::Permitted`] with the permits the key's window has left and the time to
    /// its end, taking nothing; or [`Decision::Uncounted`] (the policy alone) where the
    /// limiter cannot tell, which is the default.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::http::{Decision, HttpLimiter};
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 2, Duration::from_secs(10))?.with_clock(ManualClock::new());
    /// futures::executor::block_on(async {
    ///     let peeked = HttpLimiter::peek(&limiter, ()).await;
    ///     assert_eq!(peeked, Decision::Permitted { remaining: 2, reset: Duration::from_secs(10) });
    ///     // Nothing was taken.
    ///     assert_eq!(HttpLimiter::peek(&limiter, ()).await, peeked);
    /// });
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    fn peek(&self, key: K) -> impl Future<Output = Decision> + Send {
        let _ = key;
        core::future::ready(Decision::Uncounted)
    }
}

/// The decision a peek's answer marks a response with: the permits left and the time to the
/// window's end.
fn peeked(peek: &Peek) -> Decision {
    Decision::Permitted {
        remaining: peek.remaining(),
        reset: peek.resets_in(),
    }
}

/// The decision for an error of core's limiters. An interrupted wait is not the client's
/// doing: the request is answered as unavailable, without a hint.
fn decided(error: &RateLimiterError) -> Decision {
    match *error {
        RateLimiterError::Rejected { retry_after, .. } => Decision::Rejected { retry_after },
        // The layer takes one permit per request; a weight it never asks for cannot be the
        // client's doing either.
        RateLimiterError::Interrupted { .. } | RateLimiterError::TooMany { .. } => {
            Decision::Unavailable { retry_after: None }
        }
    }
}

impl<C: Clock + 'static> HttpLimiter<()> for RateLimiter<C> {
    fn fields(&self) -> RateLimitFields {
        RateLimitFields::new(self.name(), self.limit(), self.period())
    }

    async fn decide(&self, (): ()) -> Decision {
        match self.acquire_async().await {
            Ok(permit) => Decision::Permitted {
                remaining: permit.remaining(),
                reset: self.policy.reset_after(permit.at()),
            },
            Err(error) => decided(&error),
        }
    }

    async fn peek(&self, (): ()) -> Decision {
        peeked(&RateLimiter::peek(self))
    }
}

impl<K, C, S> HttpLimiter<K> for KeyedRateLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: Clock + 'static,
    S: BuildHasher + Send + Sync + 'static,
{
    fn fields(&self) -> RateLimitFields {
        RateLimitFields::new(self.name(), self.limit(), self.period())
    }

    fn fields_of(&self, key: &K) -> RateLimitFields {
        RateLimitFields::new(self.name(), self.key_limit(key), self.period())
    }

    async fn decide(&self, key: K) -> Decision {
        match self.acquire_async(&key).await {
            Ok(permit) => Decision::Permitted {
                remaining: permit.remaining(),
                reset: self.reset_after(permit.at()),
            },
            Err(error) => decided(&error.error()),
        }
    }

    async fn peek(&self, key: K) -> Decision {
        peeked(&KeyedRateLimiter::peek(self, &key))
    }
}
