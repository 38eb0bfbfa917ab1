//! HTTP answers by the standard (feature `http`): a tower layer that limits requests and
//! answers the way HTTP clients expect, with no code of the user's own.
//!
//! - A rejected request: `429 Too Many Requests`, `Retry-After` (RFC 9110; whole seconds,
//!   rounded up), and the IETF httpapi draft's `RateLimit-Policy` and `RateLimit` fields
//!   as revision 10 of the draft (draft-ietf-httpapi-ratelimit-headers-10, the newest) defines
//!   them: `RateLimit-Policy: "name";q=limit;w=period` and `RateLimit: "name";r=0;t=seconds`,
//!   structured-field lists (RFC 9651), one member per stacked layer.
//! - A permitted request: the service's response, with `RateLimit-Policy` and
//!   `RateLimit: "name";r=remaining;t=seconds-to-the-next-window`.
//! - A limiter that cannot decide and fails closed (`fixed-window-redis` without its server):
//!   `503 Service Unavailable` with `Retry-After`.
//!
//! [`HttpRateLimitLayer`] is one layer for every [`HttpLimiter`]; which key a request is
//! limited under is a [`KeyExtractor`]: [`AllRequests`] (one budget), [`PeerIp`], [`Header`],
//! [`FromFn`].
//!
//! ```
//! use core::time::Duration;
//! use std::sync::Arc;
//! use fixed_window::KeyedRateLimiter;
//! use fixed_window::http::{Header, HttpRateLimitLayer};
//! use http::{Request, Response};
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! // 100 requests per API key per minute.
//! let per_key = Arc::new(KeyedRateLimiter::of("per-api-key", 100, Duration::from_secs(60))?);
//! let service = ServiceBuilder::new()
//!     .layer(HttpRateLimitLayer::new(per_key, Header::new("x-api-key")?))
//!     .service_fn(|_: Request<String>| async { Ok::<_, std::convert::Infallible>(Response::new(String::new())) });
//! futures::executor::block_on(async {
//!     let request = Request::builder().header("x-api-key", "k-1").body(String::new()).unwrap();
//!     let response = service.clone().oneshot(request).await.unwrap();
//!     assert_eq!(response.headers()["ratelimit-policy"], "\"per-api-key\";q=100;w=60");
//!     let anonymous = service.oneshot(Request::new(String::new())).await.unwrap();
//!     assert_eq!(anonymous.status(), 400);
//! });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decision;
pub use self::decision::Decision;
mod fields;
pub use self::fields::{MAX_SECONDS, RATELIMIT, RATELIMIT_POLICY, RateLimitFields, retry_after};
mod key;
pub use self::key::{AllRequests, FromFn, Header, KeyExtractor, KeyRejection, PeerIp};
mod layer;
pub use self::layer::{HttpRateLimitLayer, HttpRateLimitService};
mod limiter;
pub use self::limiter::HttpLimiter;
