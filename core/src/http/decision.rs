//! What a limiter decided for one HTTP request, and the answer each decision becomes.

use core::time::Duration;

use http::{HeaderMap, Response, StatusCode, header};

use super::fields::{RATELIMIT, RATELIMIT_POLICY, RateLimitFields, retry_after, seconds_up};

/// A limiter's decision on one request, as [`HttpRateLimitLayer`](super::HttpRateLimitLayer)
/// answers it.
///
/// # Examples
///
/// A rejection becomes `429 Too Many Requests` with `Retry-After` in whole seconds, rounded
/// up, and the draft's fields.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::http::{Decision, RateLimitFields};
///
/// let fields = RateLimitFields::new("api", 10, Duration::from_secs(60));
/// let rejected = Decision::Rejected { retry_after: Duration::from_millis(2_500) };
/// let answer = rejected.answer::<String>(&fields).expect("a rejection is answered");
/// assert_eq!(answer.status(), 429);
/// assert_eq!(answer.headers()["retry-after"], "3");
/// assert_eq!(answer.headers()["ratelimit-policy"], "\"api\";q=10;w=60");
/// assert_eq!(answer.headers()["ratelimit"], "\"api\";r=0;t=3");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// A permit counted in the current window: the request goes on, and its response carries
    /// the `RateLimit` field.
    Permitted {
        /// Permits left in the window after this one.
        remaining: u32,
        /// Time until the next window opens.
        reset: Duration,
    },
    /// A permit nobody counted (a shared limiter failing open while its server is
    /// unreachable): the request goes on, and its response carries only the policy.
    Uncounted,
    /// No permit within the limiter's `max_wait`: `429 Too Many Requests`.
    Rejected {
        /// Time until the next window opens.
        retry_after: Duration,
    },
    /// The limiter could not decide and fails closed (a shared limiter whose server is
    /// unreachable): `503 Service Unavailable`.
    Unavailable {
        /// A hint for `Retry-After`, if the limiter has one.
        retry_after: Option<Duration>,
    },
    /// The request cannot be limited as it is (no key, or a key the limiter cannot use): the
    /// status and the reason.
    Refused(super::KeyRejection),
}

impl Decision {
    /// Whether the request goes on to the service.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::http::Decision;
    ///
    /// assert!(Decision::Uncounted.is_permit());
    /// assert!(!Decision::Rejected { retry_after: Duration::ZERO }.is_permit());
    /// ```
    pub fn is_permit(&self) -> bool {
        matches!(self, Decision::Permitted { .. } | Decision::Uncounted)
    }

    /// Adds this decision's fields to the headers of the response to a permitted request:
    /// `RateLimit-Policy`, and `RateLimit` for a counted permit. Fields are appended, so the
    /// layers of several limiters each add their own policy. Nothing is added for a decision
    /// that is not a permit.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::http::{Decision, RateLimitFields};
    /// use http::HeaderMap;
    ///
    /// let fields = RateLimitFields::new("api", 10, Duration::from_secs(60));
    /// let mut headers = HeaderMap::new();
    /// Decision::Permitted { remaining: 9, reset: Duration::from_secs(60) }.mark(&fields, &mut headers);
    /// assert_eq!(headers["ratelimit"], "\"api\";r=9;t=60");
    /// ```
    pub fn mark(&self, fields: &RateLimitFields, headers: &mut HeaderMap) {
        match *self {
            Decision::Permitted { remaining, reset } => {
                headers.append(RATELIMIT_POLICY, fields.policy());
                headers.append(RATELIMIT, fields.rate_limit(remaining, reset));
            }
            Decision::Uncounted => {
                headers.append(RATELIMIT_POLICY, fields.policy());
            }
            Decision::Rejected { .. } | Decision::Unavailable { .. } | Decision::Refused(_) => {}
        }
    }

    /// The response that answers the request in place of the service, for a decision that is
    /// not a permit; `None` for a permit.
    ///
    /// - `Rejected`: `429 Too Many Requests`, `Retry-After`, `RateLimit-Policy` and
    ///   `RateLimit` with no permits left;
    /// - `Unavailable`: `503 Service Unavailable`, with `Retry-After` when there is a hint;
    /// - `Refused`: its status and reason.
    ///
    /// The body is a short plain-text reason.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::http::{Decision, RateLimitFields};
    ///
    /// let fields = RateLimitFields::new("api", 10, Duration::from_secs(60));
    /// let down = Decision::Unavailable { retry_after: Some(Duration::from_millis(250)) };
    /// let answer = down.answer::<String>(&fields).expect("answered");
    /// assert_eq!(answer.status(), 503);
    /// assert_eq!(answer.headers()["retry-after"], "1");
    /// assert!(Decision::Uncounted.answer::<String>(&fields).is_none());
    /// ```
    pub fn answer<B: From<String>>(&self, fields: &RateLimitFields) -> Option<Response<B>> {
        let (status, body) = match self {
            Decision::Permitted { .. } | Decision::Uncounted => return None,
            Decision::Rejected { retry_after } => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many requests: rate limit '{}' is used up; retry after {} s\n",
                    fields.name(),
                    seconds_up(*retry_after)
                ),
            ),
            Decision::Unavailable { .. } => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "service unavailable: rate limit '{}' cannot be checked\n",
                    fields.name()
                ),
            ),
            Decision::Refused(rejection) => (rejection.status(), rejection.to_string() + "\n"),
        };
        let mut response = Response::new(B::from(body));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        match *self {
            Decision::Rejected { retry_after: wait } => {
                headers.insert(header::RETRY_AFTER, retry_after(wait));
                headers.append(RATELIMIT_POLICY, fields.policy());
                headers.append(RATELIMIT, fields.rate_limit(0, wait));
            }
            Decision::Unavailable {
                retry_after: Some(wait),
            } => {
                headers.insert(header::RETRY_AFTER, retry_after(wait));
            }
            _ => {}
        }
        Some(response)
    }
}
