//! A tower middleware: every request needs a permit for its key before it reaches the service.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::Arc;

use fixed_window::Clock;
use tower_layer::Layer;
use tower_service::Service;

use crate::error::SharedError;
use crate::limiter::SharedRateLimiter;

/// The error of a [`SharedRateLimitService`]: the limiter's, or the inner service's own.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::{KeyError, SharedError, SharedServiceError};
///
/// let err: SharedServiceError<std::io::Error> =
///     SharedServiceError::RateLimited(SharedError::InvalidKey { name: "api", error: KeyError::Empty });
/// assert!(err.to_string().contains("api"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedServiceError<E> {
    /// No permit (rejected, unavailable under fail closed, a bad key or configuration): the
    /// request never reached the service.
    RateLimited(SharedError),
    /// The service's own error, as it is.
    Service(E),
}

impl<E: fmt::Display> fmt::Display for SharedServiceError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharedServiceError::RateLimited(err) => err.fmt(f),
            SharedServiceError::Service(err) => err.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for SharedServiceError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SharedServiceError::RateLimited(err) => Some(err),
            SharedServiceError::Service(err) => Some(err),
        }
    }
}

/// A [`Layer`] that puts one [`SharedRateLimiter`] in front of services, limiting each
/// request by the key `key_of` extracts from it (a header, the peer address, a tenant).
///
/// Each request takes a permit for its key through
/// [`acquire_async`](SharedRateLimiter::acquire_async) (so it may wait up to `max_wait`)
/// before the inner service is called; a request without a permit never reaches it.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window_redis::{Config, SharedRateLimitLayer, SharedRateLimiter, SharedServiceError, redis};
/// use tower::{Layer, Service, ServiceExt};
///
/// let client = redis::Client::open("redis://127.0.0.1/")?;
/// # let server = fixed_window_redis_test::RedisServer::start()?;
/// # let client = server.client()?;
/// let config = Config::of("api", 1, Duration::from_secs(3600))?;
/// let limiter = Arc::new(SharedRateLimiter::connect_blocking(config, client)?);
/// let layer = SharedRateLimitLayer::new(limiter, |request: &(String, u32)| request.0.clone());
/// let mut service = layer.layer(tower::service_fn(|request: (String, u32)| async move {
///     Ok::<_, std::io::Error>(request.1)
/// }));
/// futures::executor::block_on(async {
///     assert_eq!(service.ready().await.unwrap().call(("alice".into(), 1)).await.unwrap(), 1);
///     assert!(matches!(
///         service.ready().await.unwrap().call(("alice".into(), 2)).await,
///         Err(SharedServiceError::RateLimited(_))
///     ));
///     assert_eq!(service.ready().await.unwrap().call(("bob".into(), 3)).await.unwrap(), 3);
/// });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedRateLimitLayer<F, C> {
    limiter: Arc<SharedRateLimiter<C>>,
    key_of: Arc<F>,
}

impl<F, C> SharedRateLimitLayer<F, C> {
    /// A layer sharing `limiter` among the services it makes, keying each request by
    /// `key_of(&request)`.
    ///
    /// # Examples
    ///
    /// See [`SharedRateLimitLayer`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::Arc;
    /// use fixed_window_redis::{Config, SharedRateLimitLayer, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("api", 10, Duration::from_secs(1))?;
    /// let limiter = Arc::new(SharedRateLimiter::connect_blocking(config, client)?);
    /// let layer = SharedRateLimitLayer::new(limiter, |_: &()| String::from("everyone"));
    /// assert_eq!(layer.limiter().config().limit(), 10);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(limiter: Arc<SharedRateLimiter<C>>, key_of: F) -> Self {
        SharedRateLimitLayer {
            limiter,
            key_of: Arc::new(key_of),
        }
    }

    /// The shared limiter.
    ///
    /// # Examples
    ///
    /// See [`SharedRateLimitLayer::new`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::Arc;
    /// use fixed_window_redis::{Config, SharedRateLimitLayer, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("api", 10, Duration::from_secs(1))?;
    /// let limiter = Arc::new(SharedRateLimiter::connect_blocking(config, client)?);
    /// let layer = SharedRateLimitLayer::new(limiter, |_: &()| String::from("everyone"));
    /// assert_eq!(layer.limiter().config().name(), "api");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limiter(&self) -> &SharedRateLimiter<C> {
        &self.limiter
    }
}

impl<F, C> Clone for SharedRateLimitLayer<F, C> {
    fn clone(&self) -> Self {
        SharedRateLimitLayer {
            limiter: Arc::clone(&self.limiter),
            key_of: Arc::clone(&self.key_of),
        }
    }
}

impl<F, C> fmt::Debug for SharedRateLimitLayer<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedRateLimitLayer")
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

impl<S, F, C> Layer<S> for SharedRateLimitLayer<F, C> {
    type Service = SharedRateLimitService<S, F, C>;

    fn layer(&self, inner: S) -> Self::Service {
        SharedRateLimitService {
            inner,
            limiter: Arc::clone(&self.limiter),
            key_of: Arc::clone(&self.key_of),
        }
    }
}

/// The service made by [`SharedRateLimitLayer`].
///
/// # Examples
///
/// See [`SharedRateLimitLayer`].
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window_redis::{Config, SharedRateLimitLayer, SharedRateLimiter, redis};
/// use tower::Layer;
///
/// let client = redis::Client::open("redis://127.0.0.1/")?;
/// # let server = fixed_window_redis_test::RedisServer::start()?;
/// # let client = server.client()?;
/// let config = Config::of("api", 10, Duration::from_secs(1))?;
/// let limiter = Arc::new(SharedRateLimiter::connect_blocking(config, client)?);
/// let layer = SharedRateLimitLayer::new(limiter, |_: &()| String::from("everyone"));
/// let service = layer.layer(tower::service_fn(|()| async { Ok::<_, std::io::Error>(()) }));
/// assert!(format!("{service:?}").contains("api"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedRateLimitService<S, F, C> {
    inner: S,
    limiter: Arc<SharedRateLimiter<C>>,
    key_of: Arc<F>,
}

impl<S: Clone, F, C> Clone for SharedRateLimitService<S, F, C> {
    fn clone(&self) -> Self {
        SharedRateLimitService {
            inner: self.inner.clone(),
            limiter: Arc::clone(&self.limiter),
            key_of: Arc::clone(&self.key_of),
        }
    }
}

impl<S, F, C> fmt::Debug for SharedRateLimitService<S, F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedRateLimitService")
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

type ResponseFuture<R, E> = Pin<Box<dyn Future<Output = Result<R, SharedServiceError<E>>> + Send>>;

impl<S, F, C, Request> Service<Request> for SharedRateLimitService<S, F, C>
where
    S: Service<Request> + Clone + Send + 'static,
    S::Future: Send,
    F: Fn(&Request) -> String + Send + Sync + 'static,
    Request: Send + 'static,
    C: Clock + 'static,
{
    type Response = S::Response;
    type Error = SharedServiceError<S::Error>;
    type Future = ResponseFuture<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner
            .poll_ready(cx)
            .map_err(SharedServiceError::Service)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The instance that was polled ready serves this request; a clone takes its place.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let limiter = Arc::clone(&self.limiter);
        let key = (self.key_of)(&request);
        Box::pin(async move {
            limiter
                .acquire_async(&key)
                .await
                .map_err(SharedServiceError::RateLimited)?;
            ready
                .call(request)
                .await
                .map_err(SharedServiceError::Service)
        })
    }
}
