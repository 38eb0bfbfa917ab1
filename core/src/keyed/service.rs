//! A tower middleware per key: every request needs a permit for its key (a client address, a
//! user, a tenant, read from the request) before it reaches the service.

use core::fmt;
use core::future::Future;
use core::hash::{BuildHasher, Hash};
use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::Arc;

use tower_layer::Layer;
use tower_service::Service;

use crate::clock::Clock;

use super::{KeyedRateLimiter, KeyedRateLimiterError};

/// The error of a [`KeyedRateLimitService`]: the limiter's, with the key the request was
/// limited under, or the inner service's own.
///
/// # Examples
///
/// ```
/// use fixed_window::{KeyedRateLimiterError, KeyedServiceError, RateLimiterError};
///
/// let limited = KeyedRateLimiterError::new("10.0.0.1", RateLimiterError::Interrupted { name: "api" });
/// let err: KeyedServiceError<&str, std::io::Error> = KeyedServiceError::RateLimited(limited);
/// assert!(err.to_string().contains("10.0.0.1"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub enum KeyedServiceError<K, E> {
    /// No permit for the request's key: the request never reached the service.
    RateLimited(KeyedRateLimiterError<K>),
    /// The service's own error, as it is.
    Service(E),
}

impl<K: fmt::Debug, E: fmt::Display> fmt::Display for KeyedServiceError<K, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyedServiceError::RateLimited(err) => err.fmt(f),
            KeyedServiceError::Service(err) => err.fmt(f),
        }
    }
}

impl<K, E> std::error::Error for KeyedServiceError<K, E>
where
    K: fmt::Debug + 'static,
    E: std::error::Error + 'static,
{
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            KeyedServiceError::RateLimited(err) => Some(err),
            KeyedServiceError::Service(err) => Some(err),
        }
    }
}

/// A [`Layer`] that puts one shared [`KeyedRateLimiter`] in front of services, limiting each
/// request under the key `key_of` reads from it (feature `tower`).
///
/// Each request takes a permit for its key through
/// [`KeyedRateLimiter::acquire_async`] (so it may wait up to the limiter's `max_wait`) before
/// the inner service is called; a rejected request never reaches it, and its error owns the
/// key `key_of` returned (no clone). All services made by one layer share the limiter.
///
/// # Examples
///
/// Requests carry a client name; each client gets one request per second.
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window::{KeyedRateLimitLayer, KeyedRateLimiter, KeyedServiceError, ManualClock};
/// use tower_layer::Layer;
/// use tower_service::Service;
///
/// let limiter = Arc::new(KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new()));
/// let layer = KeyedRateLimitLayer::new(limiter, |request: &(&'static str, u32)| request.0);
/// let echo = tower::service_fn(|(_, body): (&str, u32)| async move { Ok::<_, std::io::Error>(body) });
/// let mut service = layer.layer(echo);
/// futures::executor::block_on(async {
///     assert_eq!(service.call(("alice", 1)).await.unwrap(), 1);
///     assert_eq!(service.call(("bob", 2)).await.unwrap(), 2);
///     match service.call(("alice", 3)).await {
///         Err(KeyedServiceError::RateLimited(err)) => assert_eq!(err.into_key(), "alice"),
///         other => panic!("expected a rejection, got {other:?}"),
///     }
/// });
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct KeyedRateLimitLayer<K, C, S, F> {
    limiter: Arc<KeyedRateLimiter<K, C, S>>,
    key_of: F,
}

impl<K, C, S, F> KeyedRateLimitLayer<K, C, S, F> {
    /// A layer sharing `limiter` among the services it makes, keying each request by
    /// `key_of(&request)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::Arc;
    /// use fixed_window::{KeyedRateLimitLayer, KeyedRateLimiter};
    ///
    /// let limiter = Arc::new(KeyedRateLimiter::<u64>::of("api", 10, Duration::from_secs(1))?);
    /// let layer = KeyedRateLimitLayer::new(limiter, |request: &(u64, String)| request.0);
    /// assert_eq!(layer.limiter().limit(), 10);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn new(limiter: Arc<KeyedRateLimiter<K, C, S>>, key_of: F) -> Self {
        KeyedRateLimitLayer { limiter, key_of }
    }

    /// The shared limiter.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::Arc;
    /// use fixed_window::{KeyedRateLimitLayer, KeyedRateLimiter};
    ///
    /// let limiter = Arc::new(KeyedRateLimiter::<u64>::of("api", 10, Duration::from_secs(1))?);
    /// let layer = KeyedRateLimitLayer::new(limiter, |request: &u64| *request);
    /// assert_eq!(layer.limiter().name(), "api");
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limiter(&self) -> &KeyedRateLimiter<K, C, S> {
        &self.limiter
    }
}

impl<K, C, S, F: Clone> Clone for KeyedRateLimitLayer<K, C, S, F> {
    fn clone(&self) -> Self {
        KeyedRateLimitLayer {
            limiter: Arc::clone(&self.limiter),
            key_of: self.key_of.clone(),
        }
    }
}

impl<K, C, S, F> fmt::Debug for KeyedRateLimitLayer<K, C, S, F>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedRateLimitLayer")
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

impl<Svc, K, C, S, F: Clone> Layer<Svc> for KeyedRateLimitLayer<K, C, S, F> {
    type Service = KeyedRateLimitService<Svc, K, C, S, F>;

    fn layer(&self, inner: Svc) -> Self::Service {
        KeyedRateLimitService {
            inner,
            limiter: Arc::clone(&self.limiter),
            key_of: self.key_of.clone(),
        }
    }
}

/// The service made by [`KeyedRateLimitLayer`].
///
/// # Examples
///
/// See [`KeyedRateLimitLayer`].
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window::{KeyedRateLimitLayer, KeyedRateLimiter};
/// use tower_layer::Layer;
///
/// let limiter = Arc::new(KeyedRateLimiter::<u8>::of("api", 1, Duration::from_secs(1))?);
/// let layer = KeyedRateLimitLayer::new(limiter, |request: &u8| *request);
/// let service = layer.layer(tower::service_fn(|_: u8| async { Ok::<_, std::io::Error>(()) }));
/// assert!(format!("{service:?}").contains("api"));
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct KeyedRateLimitService<Svc, K, C, S, F> {
    inner: Svc,
    limiter: Arc<KeyedRateLimiter<K, C, S>>,
    key_of: F,
}

impl<Svc: Clone, K, C, S, F: Clone> Clone for KeyedRateLimitService<Svc, K, C, S, F> {
    fn clone(&self) -> Self {
        KeyedRateLimitService {
            inner: self.inner.clone(),
            limiter: Arc::clone(&self.limiter),
            key_of: self.key_of.clone(),
        }
    }
}

impl<Svc, K, C, S, F> fmt::Debug for KeyedRateLimitService<Svc, K, C, S, F>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedRateLimitService")
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

type ResponseFuture<K, R, E> =
    Pin<Box<dyn Future<Output = Result<R, KeyedServiceError<K, E>>> + Send>>;

impl<Svc, K, C, S, F, Request> Service<Request> for KeyedRateLimitService<Svc, K, C, S, F>
where
    Svc: Service<Request> + Clone + Send + 'static,
    Svc::Future: Send,
    Request: Send + 'static,
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: Clock + 'static,
    S: BuildHasher + Send + Sync + 'static,
    F: Fn(&Request) -> K,
{
    type Response = Svc::Response;
    type Error = KeyedServiceError<K, Svc::Error>;
    type Future = ResponseFuture<K, Svc::Response, Svc::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner
            .poll_ready(cx)
            .map_err(KeyedServiceError::Service)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let key = (self.key_of)(&request);
        // The instance that was polled ready serves this request; a clone takes its place.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let limiter = Arc::clone(&self.limiter);
        Box::pin(async move {
            let permit = limiter.acquire_async(&key).await.map_err(|err| err.error());
            if let Err(error) = permit {
                return Err(KeyedServiceError::RateLimited(KeyedRateLimiterError::new(
                    key, error,
                )));
            }
            ready
                .call(request)
                .await
                .map_err(KeyedServiceError::Service)
        })
    }
}
