//! The HTTP middleware: a decision before each request, the answer by the standard after.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::Arc;

use http::{Request, Response};
use tower_layer::Layer;
use tower_service::Service;

use super::decision::Decision;
use super::key::KeyExtractor;
use super::limiter::HttpLimiter;

/// A tower [`Layer`] that limits HTTP requests and answers them the standard way (feature
/// `http`), for any [`HttpLimiter`]: the plain, keyed and shared limiters.
///
/// Each request's key is read by the [`KeyExtractor`]; the limiter decides it (waiting up to
/// its `max_wait`); then:
/// - a permitted request reaches the service, and its response gets `RateLimit-Policy` and
///   `RateLimit` (permits left, whole seconds to the next window, rounded up);
/// - a rejected one is answered `429 Too Many Requests` with `Retry-After` (whole seconds,
///   rounded up), `RateLimit-Policy` and `RateLimit` (`r=0`);
/// - one the limiter cannot decide and must fail closed on (a shared limiter without its
///   server) is answered `503 Service Unavailable` with `Retry-After`;
/// - one without a usable key is answered with the extractor's status (`400` for a missing
///   header).
///
/// The service's own errors pass through unchanged, so the layer fits axum's routers, whose
/// services never fail. Fields are appended, not replaced: stacked layers (a global limit over
/// a per-client one) each add their policy, as the draft's lists allow.
///
/// A [`shadow`](HttpRateLimitLayer::shadow) layer counts nothing and rejects nothing: every
/// request reaches the service, and its response gets the fields of a peek at its key's window
/// (for a route excluded from limiting that still reports the budget, or to watch a limit
/// before enforcing it).
///
/// # Examples
///
/// A global limit of two requests per minute in front of a service.
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window::http::{AllRequests, HttpRateLimitLayer};
/// use fixed_window::{ManualClock, RateLimiter};
/// use http::{Request, Response};
/// use tower::{ServiceBuilder, ServiceExt};
///
/// let limiter = Arc::new(RateLimiter::of("api", 2, Duration::from_secs(60))?.with_clock(ManualClock::new()));
/// let service = ServiceBuilder::new()
///     .layer(HttpRateLimitLayer::new(limiter, AllRequests))
///     .service_fn(|_: Request<String>| async { Ok::<_, std::convert::Infallible>(Response::new(String::from("ok"))) });
/// futures::executor::block_on(async {
///     let first = service.clone().oneshot(Request::new(String::new())).await.unwrap();
///     assert_eq!(first.headers()["ratelimit"], "\"api\";r=1;t=60");
///     service.clone().oneshot(Request::new(String::new())).await.unwrap();
///     let third = service.oneshot(Request::new(String::new())).await.unwrap();
///     assert_eq!(third.status(), 429);
///     assert_eq!(third.headers()["retry-after"], "60");
/// });
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub struct HttpRateLimitLayer<L, X> {
    limiter: Arc<L>,
    key: Arc<X>,
    /// Whether it only peeks (counting nothing, rejecting nothing).
    shadow: bool,
}

impl<L, X> HttpRateLimitLayer<L, X> {
    /// A layer deciding each request with `limiter`, under the key `key` reads.
    ///
    /// # Examples
    ///
    /// A limit per client address, for a server that records peers.
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::net::IpAddr;
    /// use std::sync::Arc;
    /// use fixed_window::KeyedRateLimiter;
    /// use fixed_window::http::{HttpRateLimitLayer, PeerIp};
    ///
    /// let per_client = Arc::new(KeyedRateLimiter::<IpAddr>::of("per-client", 100, Duration::from_secs(60))?);
    /// let layer = HttpRateLimitLayer::new(per_client, PeerIp);
    /// assert_eq!(layer.limiter().limit(), 100);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn new(limiter: Arc<L>, key: X) -> HttpRateLimitLayer<L, X> {
        HttpRateLimitLayer {
            limiter,
            key: Arc::new(key),
            shadow: false,
        }
    }

    /// A layer that counts nothing and rejects nothing: each request reaches the service, and
    /// its response gets `RateLimit-Policy` and `RateLimit` from a peek at the window of the
    /// key `key` reads ([`HttpLimiter::peek`]: the permits left, whole seconds to the
    /// window's end), or `RateLimit-Policy` alone where the limiter cannot tell (a shared
    /// limiter whose server does not answer). A request whose key cannot be read goes on
    /// unmarked.
    ///
    /// # Examples
    ///
    /// A status route beside a limited one, both on one limiter: the status route reports the
    /// budget the limited one spends, and spends none of it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::Arc;
    /// use fixed_window::http::{AllRequests, HttpRateLimitLayer};
    /// use fixed_window::{ManualClock, RateLimiter};
    /// use http::{Request, Response};
    /// use tower::{ServiceBuilder, ServiceExt};
    ///
    /// let limiter = Arc::new(RateLimiter::of("api", 2, Duration::from_secs(60))?.with_clock(ManualClock::new()));
    /// let ok = |_: Request<String>| async { Ok::<_, std::convert::Infallible>(Response::new(String::new())) };
    /// let limited = ServiceBuilder::new()
    ///     .layer(HttpRateLimitLayer::new(Arc::clone(&limiter), AllRequests))
    ///     .service_fn(ok);
    /// let status = ServiceBuilder::new()
    ///     .layer(HttpRateLimitLayer::shadow(limiter, AllRequests))
    ///     .service_fn(ok);
    /// futures::executor::block_on(async {
    ///     limited.oneshot(Request::new(String::new())).await.unwrap();
    ///     for _ in 0..3 {
    ///         let response = status.clone().oneshot(Request::new(String::new())).await.unwrap();
    ///         assert_eq!(response.status(), 200);
    ///         assert_eq!(response.headers()["ratelimit"], "\"api\";r=1;t=60");
    ///     }
    /// });
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn shadow(limiter: Arc<L>, key: X) -> HttpRateLimitLayer<L, X> {
        HttpRateLimitLayer {
            shadow: true,
            ..HttpRateLimitLayer::new(limiter, key)
        }
    }

    /// The limiter every service of this layer shares.
    ///
    /// # Examples
    ///
    /// See [`HttpRateLimitLayer::new`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::Arc;
    /// use fixed_window::RateLimiter;
    /// use fixed_window::http::{AllRequests, HttpRateLimitLayer};
    ///
    /// let layer = HttpRateLimitLayer::new(Arc::new(RateLimiter::of("api", 5, Duration::from_secs(1))?), AllRequests);
    /// assert_eq!(layer.limiter().name(), "api");
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limiter(&self) -> &L {
        &self.limiter
    }
}

impl<L, X> Clone for HttpRateLimitLayer<L, X> {
    fn clone(&self) -> Self {
        HttpRateLimitLayer {
            limiter: Arc::clone(&self.limiter),
            key: Arc::clone(&self.key),
            shadow: self.shadow,
        }
    }
}

impl<L: fmt::Debug, X: fmt::Debug> fmt::Debug for HttpRateLimitLayer<L, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRateLimitLayer")
            .field("limiter", &self.limiter)
            .field("key", &self.key)
            .field("shadow", &self.shadow)
            .finish()
    }
}

impl<S, L, X> Layer<S> for HttpRateLimitLayer<L, X> {
    type Service = HttpRateLimitService<S, L, X>;

    fn layer(&self, inner: S) -> Self::Service {
        HttpRateLimitService {
            inner,
            limiter: Arc::clone(&self.limiter),
            key: Arc::clone(&self.key),
            shadow: self.shadow,
        }
    }
}

/// The service made by [`HttpRateLimitLayer`].
///
/// # Examples
///
/// See [`HttpRateLimitLayer`].
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use fixed_window::RateLimiter;
/// use fixed_window::http::{AllRequests, HttpRateLimitLayer};
/// use tower_layer::Layer;
///
/// let layer = HttpRateLimitLayer::new(Arc::new(RateLimiter::of("api", 1, Duration::from_secs(1))?), AllRequests);
/// let service = layer.layer(tower::service_fn(|()| async { Ok::<_, std::io::Error>(()) }));
/// assert!(format!("{service:?}").contains("api"));
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub struct HttpRateLimitService<S, L, X> {
    inner: S,
    limiter: Arc<L>,
    key: Arc<X>,
    /// Whether it only peeks (counting nothing, rejecting nothing).
    shadow: bool,
}

impl<S: Clone, L, X> Clone for HttpRateLimitService<S, L, X> {
    fn clone(&self) -> Self {
        HttpRateLimitService {
            inner: self.inner.clone(),
            limiter: Arc::clone(&self.limiter),
            key: Arc::clone(&self.key),
            shadow: self.shadow,
        }
    }
}

impl<S, L: fmt::Debug, X: fmt::Debug> fmt::Debug for HttpRateLimitService<S, L, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRateLimitService")
            .field("limiter", &self.limiter)
            .field("key", &self.key)
            .field("shadow", &self.shadow)
            .finish_non_exhaustive()
    }
}

type ResponseFuture<R, E> = Pin<Box<dyn Future<Output = Result<R, E>> + Send>>;

impl<S, L, X, ReqBody, ResBody> Service<Request<ReqBody>> for HttpRateLimitService<S, L, X>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send,
    L: HttpLimiter<X::Key>,
    X: KeyExtractor<ReqBody>,
    ReqBody: Send + 'static,
    ResBody: From<String> + Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<Response<ResBody>, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        // The instance that was polled ready serves this request; a clone takes its place.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let limiter = Arc::clone(&self.limiter);
        let key = self.key.extract(&request);
        if self.shadow {
            return Box::pin(async move {
                // Peeked before the service runs: the window as the request came.
                let marked = match key {
                    Ok(key) => Some((limiter.fields_of(&key), limiter.peek(key).await)),
                    Err(_) => None,
                };
                let mut response = ready.call(request).await?;
                if let Some((fields, peeked)) = marked {
                    peeked.mark(&fields, response.headers_mut());
                }
                Ok(response)
            });
        }
        Box::pin(async move {
            // A key's fields are read before its decision: the fields report the key's own
            // limit, as in force when the request came.
            let (fields, decision) = match key {
                Ok(key) => (limiter.fields_of(&key), limiter.decide(key).await),
                Err(rejection) => (limiter.fields(), Decision::Refused(rejection)),
            };
            if let Some(answer) = decision.answer(&fields) {
                return Ok(answer);
            }
            let mut response = ready.call(request).await?;
            decision.mark(&fields, response.headers_mut());
            Ok(response)
        })
    }
}
