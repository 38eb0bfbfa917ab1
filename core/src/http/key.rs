//! Which key an HTTP request is limited under: everyone's one key, the peer's address, a
//! header's value, or what a function reads.

use core::fmt;
use core::marker::PhantomData;
use std::net::{IpAddr, SocketAddr};

use http::header::{HeaderName, InvalidHeaderName};
use http::{Request, StatusCode};

/// Reads the key a request is limited under.
///
/// Implemented by [`AllRequests`] (one key for every request, for a plain
/// [`RateLimiter`](crate::RateLimiter)), [`PeerIp`], [`Header`] and [`FromFn`]; implement it
/// for keys of your own.
///
/// # Errors
///
/// [`KeyRejection`] when the request has no usable key: the layer answers with its status
/// and reason, and the request never reaches the service.
///
/// # Examples
///
/// ```
/// use fixed_window::http::{Header, KeyExtractor};
/// use http::Request;
///
/// let request = Request::builder().header("x-api-key", "k-42").body(()).unwrap();
/// assert_eq!(Header::new("x-api-key")?.extract(&request).unwrap(), "k-42");
/// # Ok::<(), http::header::InvalidHeaderName>(())
/// ```
pub trait KeyExtractor<B>: Send + Sync + 'static {
    /// The key: what one window count is kept for.
    type Key: Send + 'static;

    /// The key of `request`.
    ///
    /// # Errors
    ///
    /// [`KeyRejection`] when the request has no usable key.
    fn extract(&self, request: &Request<B>) -> Result<Self::Key, KeyRejection>;
}

/// Why a request could not be limited: the status and the reason it is answered with.
///
/// # Examples
///
/// ```
/// use fixed_window::http::KeyRejection;
/// use http::StatusCode;
///
/// let rejection = KeyRejection::new(StatusCode::BAD_REQUEST, "no x-api-key header");
/// assert_eq!(rejection.status(), StatusCode::BAD_REQUEST);
/// assert_eq!(rejection.to_string(), "no x-api-key header");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRejection {
    status: StatusCode,
    reason: String,
}

impl KeyRejection {
    /// A rejection answered with `status` and `reason`.
    ///
    /// # Examples
    ///
    /// See [`KeyRejection`].
    ///
    /// ```
    /// use fixed_window::http::KeyRejection;
    /// use http::StatusCode;
    ///
    /// assert_eq!(KeyRejection::new(StatusCode::UNAUTHORIZED, "who?").status(), 401);
    /// ```
    pub fn new(status: StatusCode, reason: impl Into<String>) -> KeyRejection {
        KeyRejection {
            status,
            reason: reason.into(),
        }
    }

    /// The status the request is answered with.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::http::KeyRejection;
    /// use http::StatusCode;
    ///
    /// assert_eq!(KeyRejection::new(StatusCode::BAD_REQUEST, "").status(), StatusCode::BAD_REQUEST);
    /// ```
    pub fn status(&self) -> StatusCode {
        self.status
    }
}

impl fmt::Display for KeyRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for KeyRejection {}

/// Every request under one key: one budget for the whole service, as a plain
/// [`RateLimiter`](crate::RateLimiter) keeps.
///
/// # Examples
///
/// ```
/// use fixed_window::http::{AllRequests, KeyExtractor};
///
/// assert_eq!(AllRequests.extract(&http::Request::new(())), Ok(()));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AllRequests;

impl<B> KeyExtractor<B> for AllRequests {
    type Key = ();

    fn extract(&self, _request: &Request<B>) -> Result<(), KeyRejection> {
        Ok(())
    }
}

/// The address of the peer that sent the request: a limit per client IP.
///
/// The server puts the address in the request's extensions: hyper-based servers as a
/// [`SocketAddr`], axum when served with `into_make_service_with_connect_info::<SocketAddr>()`
/// (read with the `axum` feature). Behind a proxy the peer is the proxy: read the proxy's
/// forwarding header with [`Header`] instead, from a proxy you trust.
///
/// # Errors
///
/// `500 Internal Server Error` when the server put no address in the request (a server
/// set-up error, not the client's).
///
/// # Examples
///
/// ```
/// use std::net::SocketAddr;
/// use fixed_window::http::{KeyExtractor, PeerIp};
///
/// let mut request = http::Request::new(());
/// assert_eq!(PeerIp.extract(&request).unwrap_err().status(), 500);
/// request.extensions_mut().insert("192.0.2.7:4321".parse::<SocketAddr>().unwrap());
/// assert_eq!(PeerIp.extract(&request).unwrap().to_string(), "192.0.2.7");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PeerIp;

impl<B> KeyExtractor<B> for PeerIp {
    type Key = IpAddr;

    fn extract(&self, request: &Request<B>) -> Result<IpAddr, KeyRejection> {
        let extensions = request.extensions();
        if let Some(peer) = extensions.get::<SocketAddr>() {
            return Ok(peer.ip());
        }
        #[cfg(feature = "axum")]
        if let Some(axum::extract::ConnectInfo(peer)) =
            extensions.get::<axum::extract::ConnectInfo<SocketAddr>>()
        {
            return Ok(peer.ip());
        }
        Err(KeyRejection::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the server recorded no peer address for this request",
        ))
    }
}

/// The value of one request header: a limit per API key, user or tenant header, or per
/// forwarded client address behind a trusted proxy.
///
/// # Errors
///
/// `400 Bad Request` when the header is missing, empty, or not visible ASCII.
///
/// # Examples
///
/// ```
/// use fixed_window::http::{Header, KeyExtractor};
/// use http::Request;
///
/// let key = Header::new("x-tenant")?;
/// let missing = key.extract(&Request::new(())).unwrap_err();
/// assert_eq!((missing.status().as_u16(), missing.to_string()), (400, "the request has no x-tenant header".to_owned()));
/// # Ok::<(), http::header::InvalidHeaderName>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    name: HeaderName,
}

impl Header {
    /// The value of header `name` (any case: header names are compared lower-cased).
    ///
    /// # Errors
    ///
    /// [`InvalidHeaderName`] if `name` is not a header name.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::http::Header;
    ///
    /// assert_eq!(Header::new("X-Api-Key")?.name(), "x-api-key");
    /// assert!(Header::new("no spaces").is_err());
    /// # Ok::<(), http::header::InvalidHeaderName>(())
    /// ```
    pub fn new(name: &str) -> Result<Header, InvalidHeaderName> {
        HeaderName::from_bytes(name.as_bytes()).map(Header::from_name)
    }

    /// The value of header `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::http::Header;
    /// use http::header::AUTHORIZATION;
    ///
    /// assert_eq!(Header::from_name(AUTHORIZATION).name(), "authorization");
    /// ```
    pub fn from_name(name: HeaderName) -> Header {
        Header { name }
    }

    /// The header's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::header::{HeaderName, InvalidHeaderName};
    ///
    /// let header = fixed_window::http::Header::from_name(HeaderName::from_static("x-user"));
    /// assert_eq!(header.name(), "x-user");
    /// ```
    pub fn name(&self) -> &HeaderName {
        &self.name
    }
}

impl<B> KeyExtractor<B> for Header {
    type Key = String;

    fn extract(&self, request: &Request<B>) -> Result<String, KeyRejection> {
        let value = request.headers().get(&self.name).ok_or_else(|| {
            KeyRejection::new(
                StatusCode::BAD_REQUEST,
                format!("the request has no {} header", self.name),
            )
        })?;
        match value.to_str() {
            Ok(text) if !text.is_empty() => Ok(text.to_owned()),
            _ => Err(KeyRejection::new(
                StatusCode::BAD_REQUEST,
                format!("the {} header is empty or not visible ASCII", self.name),
            )),
        }
    }
}

/// A key read by a function of the request; `None` answers `400 Bad Request`.
///
/// # Examples
///
/// A limit per first path segment:
///
/// ```
/// use fixed_window::http::{FromFn, KeyExtractor};
/// use http::Request;
///
/// let segment = FromFn::new(|request: &Request<()>| {
///     request.uri().path().split('/').nth(1).filter(|s| !s.is_empty()).map(str::to_owned)
/// });
/// let request = Request::builder().uri("/orders/7").body(()).unwrap();
/// assert_eq!(segment.extract(&request).unwrap(), "orders");
/// assert_eq!(segment.extract(&Request::new(())).unwrap_err().status(), 400);
/// ```
pub struct FromFn<F, K> {
    read: F,
    key: PhantomData<fn() -> K>,
}

impl<F, K> FromFn<F, K> {
    /// Keys read by `read`.
    ///
    /// # Examples
    ///
    /// See [`FromFn`].
    ///
    /// ```
    /// use fixed_window::http::{FromFn, KeyExtractor};
    ///
    /// let method = FromFn::new(|request: &http::Request<()>| Some(request.method().clone()));
    /// assert_eq!(method.extract(&http::Request::new(())).unwrap(), http::Method::GET);
    /// ```
    pub fn new(read: F) -> FromFn<F, K> {
        FromFn {
            read,
            key: PhantomData,
        }
    }
}

impl<F: Clone, K> Clone for FromFn<F, K> {
    fn clone(&self) -> Self {
        FromFn::new(self.read.clone())
    }
}

impl<F, K> fmt::Debug for FromFn<F, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFn")
            .field("key", &core::any::type_name::<K>())
            .finish_non_exhaustive()
    }
}

impl<B, F, K> KeyExtractor<B> for FromFn<F, K>
where
    F: Fn(&Request<B>) -> Option<K> + Send + Sync + 'static,
    K: Send + 'static,
{
    type Key = K;

    fn extract(&self, request: &Request<B>) -> Result<K, KeyRejection> {
        (self.read)(request).ok_or_else(|| {
            KeyRejection::new(
                StatusCode::BAD_REQUEST,
                "the request carries no rate-limit key",
            )
        })
    }
}
