//! A tower middleware: every request needs a permit before it reaches the service.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::Arc;

use tower_layer::Layer;
use tower_service::Service;

use crate::clock::Clock;
use crate::error::RateLimiterError;
use crate::limiter::RateLimiter;

/// The error of a [`RateLimitService`]: the limiter's, or the inner service's own.
///
/// # Examples
///
/// ```
/// use fixed_window::{RateLimiterError, ServiceError};
///
/// let err: ServiceError<std::io::Error> = ServiceError::RateLimited(RateLimiterError::Interrupted { name: "api" });
/// assert!(err.to_string().contains("api"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub enum ServiceError<E> {
    /// No permit: the request never reached the service.
    RateLimited(RateLimiterError),
    /// The service's own error, as it is.
    Service(E),
}

impl<E: fmt::Display> fmt::Display for ServiceError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceError::RateLimited(err) => err.fmt(f),
            ServiceError::Service(err) => err.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for ServiceError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServiceError::RateLimited(err) => Some(err),
            ServiceError::Service(err) => Some(err),
        }
    }
}

/// A [`Layer`] that puts one shared [`RateLimiter`] in front of services (feature `tower`).
///
/// Each request takes a permit through [`RateLimiter::acquire_async`] (so it may wait up to
/// the limiter's `max_wait`) before the inner service is called; a rejected request never
/// reaches it. All services made by one layer share the limiter's budget.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window::{ManualClock, RateLimitLayer, RateLimiter, ServiceError};
/// use tower_layer::Layer;
/// use tower_service::Service;
///
/// let limiter = Arc::new(RateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new()));
/// let echo = tower::service_fn(|request: u32| async move { Ok::<_, std::io::Error>(request) });
/// let mut service = RateLimitLayer::new(limiter).layer(echo);
/// futures::executor::block_on(async {
///     assert_eq!(service.call(7).await.unwrap(), 7);
///     assert!(matches!(service.call(8).await, Err(ServiceError::RateLimited(_))));
/// });
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct RateLimitLayer<C> {
    limiter: Arc<RateLimiter<C>>,
}

impl<C> RateLimitLayer<C> {
    /// A layer sharing `limiter` among the services it makes.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::Arc;
    /// use fixed_window::{RateLimitLayer, RateLimiter};
    ///
    /// let layer = RateLimitLayer::new(Arc::new(RateLimiter::of("api", 10, Duration::from_secs(1))?));
    /// assert_eq!(layer.limiter().limit(), 10);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn new(limiter: Arc<RateLimiter<C>>) -> RateLimitLayer<C> {
        RateLimitLayer { limiter }
    }

    /// The shared limiter.
    ///
    /// # Examples
    ///
    /// See [`RateLimitLayer::new`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::Arc;
    /// use fixed_window::{RateLimitLayer, RateLimiter};
    ///
    /// let layer = RateLimitLayer::new(Arc::new(RateLimiter::of("api", 10, Duration::from_secs(1))?));
    /// assert_eq!(layer.limiter().name(), "api");
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limiter(&self) -> &RateLimiter<C> {
        &self.limiter
    }
}

impl<C> Clone for RateLimitLayer<C> {
    fn clone(&self) -> Self {
        RateLimitLayer {
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<C> fmt::Debug for RateLimitLayer<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitLayer")
            .field("limiter", &self.limiter)
            .finish()
    }
}

impl<S, C> Layer<S> for RateLimitLayer<C> {
    type Service = RateLimitService<S, C>;

    fn layer(&self, inner: S) -> RateLimitService<S, C> {
        RateLimitService {
            inner,
            limiter: Arc::clone(&self.limiter),
        }
    }
}

/// The service made by [`RateLimitLayer`].
///
/// # Examples
///
/// See [`RateLimitLayer`].
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window::{RateLimitLayer, RateLimiter};
/// use tower_layer::Layer;
///
/// let layer = RateLimitLayer::new(Arc::new(RateLimiter::of("api", 1, Duration::from_secs(1))?));
/// let service = layer.layer(tower::service_fn(|()| async { Ok::<_, std::io::Error>(()) }));
/// assert!(format!("{service:?}").contains("api"));
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct RateLimitService<S, C> {
    inner: S,
    limiter: Arc<RateLimiter<C>>,
}

impl<S: Clone, C> Clone for RateLimitService<S, C> {
    fn clone(&self) -> Self {
        RateLimitService {
            inner: self.inner.clone(),
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<S, C> fmt::Debug for RateLimitService<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitService")
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

type ResponseFuture<R, E> = Pin<Box<dyn Future<Output = Result<R, ServiceError<E>>> + Send>>;

impl<S, C, Request> Service<Request> for RateLimitService<S, C>
where
    S: Service<Request> + Clone + Send + 'static,
    S::Future: Send,
    Request: Send + 'static,
    C: Clock + 'static,
{
    type Response = S::Response;
    type Error = ServiceError<S::Error>;
    type Future = ResponseFuture<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(ServiceError::Service)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The instance that was polled ready serves this request; a clone takes its place.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let limiter = Arc::clone(&self.limiter);
        Box::pin(async move {
            limiter
                .acquire_async()
                .await
                .map_err(ServiceError::RateLimited)?;
            ready.call(request).await.map_err(ServiceError::Service)
        })
    }
}
