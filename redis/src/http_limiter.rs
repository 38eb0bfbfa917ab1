//! The shared limiter behind core's HTTP layer (feature `http`): the same answers as the
//! in-process limiters, with `503 Service Unavailable` when the server cannot decide and the
//! limiter fails closed.

use core::fmt::Display;

use fixed_window::http::{Decision, HttpLimiter, KeyRejection, RateLimitFields};
use fixed_window::{Clock, RateLimiterError};
use http::StatusCode;

use crate::error::SharedError;
use crate::limiter::SharedRateLimiter;

/// Decides each request with [`SharedRateLimiter::acquire_async`] under the key's text
/// (an address, a header's value): the answers of
/// [`HttpRateLimitLayer`](fixed_window::http::HttpRateLimitLayer), and
/// - `Unavailable` under [`FailPolicy::Closed`](crate::FailPolicy::Closed): `503` with
///   `Retry-After` of the configured timeout, rounded up to whole seconds;
/// - a fail-open permit: the request goes on, its response carrying only `RateLimit-Policy`
///   (nobody counted it, so there is no `RateLimit` to report);
/// - a configuration [`Conflict`](crate::Conflict): `503` without `Retry-After` (this
///   process's settings disagree with the server's until one of them changes);
/// - a key the server cannot store ([`check_key`](crate::check_key)): `400`.
///
/// Under a [`shadow`](fixed_window::http::HttpRateLimitLayer::shadow) layer, each response
/// gets the fields of [`SharedRateLimiter::peek_async`] (one read-only round trip, or none
/// while the window is remembered full), or `RateLimit-Policy` alone when the peek fails
/// (a peek is never answered by a guess of the fail policy).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window::http::{HttpRateLimitLayer, PeerIp};
/// use fixed_window_redis::{Config, SharedRateLimiter};
/// # let server = fixed_window_redis_test::RedisServer::start()?;
/// # let url = server.url();
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let config = Config::of("per-client", 100, Duration::from_secs(60))?;
/// let client = fixed_window_redis::redis::Client::open(url)?;
/// let limiter = Arc::new(SharedRateLimiter::connect(config, client).await?);
/// let layer = HttpRateLimitLayer::new(limiter, PeerIp);
/// assert_eq!(layer.limiter().config().limit(), 100);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
impl<K, C> HttpLimiter<K> for SharedRateLimiter<C>
where
    K: Display + Send + 'static,
    C: Clock + 'static,
{
    fn fields(&self) -> RateLimitFields {
        let config = self.config();
        RateLimitFields::new(config.name(), self.limit(), config.period())
    }

    /// The fields of `key`: its own limit ([`SharedRateLimiter::key_limit`]), as
    /// `RateLimit-Policy`'s quota and the bound of `RateLimit`'s remaining.
    fn fields_of(&self, key: &K) -> RateLimitFields {
        let config = self.config();
        RateLimitFields::new(
            config.name(),
            self.key_limit(&key.to_string()),
            config.period(),
        )
    }

    async fn decide(&self, key: K) -> Decision {
        match self.acquire_async(&key.to_string()).await {
            Ok(permit) => match (permit.remaining(), permit.reset_after()) {
                (Some(remaining), Some(reset)) => Decision::Permitted { remaining, reset },
                _ => Decision::Uncounted,
            },
            Err(SharedError::Limited(RateLimiterError::Rejected { retry_after, .. })) => {
                Decision::Rejected { retry_after }
            }
            Err(SharedError::Unavailable { .. }) => Decision::Unavailable {
                retry_after: Some(self.config().timeout()),
            },
            Err(SharedError::InvalidKey { error, .. }) => Decision::Refused(KeyRejection::new(
                StatusCode::BAD_REQUEST,
                error.to_string(),
            )),
            // An interrupted wait, or settings that disagree with the server's: nothing the
            // client can wait out by a known time.
            Err(_) => Decision::Unavailable { retry_after: None },
        }
    }

    async fn peek(&self, key: K) -> Decision {
        match self.peek_async(&key.to_string()).await {
            Ok(peek) => Decision::Permitted {
                remaining: peek.remaining(),
                reset: peek.resets_in(),
            },
            // The server did not answer, disagrees with the settings, or cannot store the key:
            // the policy alone, nothing guessed.
            Err(_) => Decision::Uncounted,
        }
    }
}
