//! What can go wrong: an invalid configuration, a rejected call, an interrupted wait.

use core::fmt;
use core::time::Duration;

/// A configuration the specification forbids; the message names the field.
///
/// # Examples
///
/// A zero limit is refused with a message naming `limit`.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ConfigError, RateLimiter};
///
/// let err = RateLimiter::of("api", 0, Duration::from_secs(1)).unwrap_err();
/// assert_eq!(err, ConfigError::ZeroLimit);
/// assert_eq!(err.field(), "limit");
/// assert_eq!(err.to_string(), "limit must be at least 1, got 0");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigError {
    /// `limit` was 0; a window must allow at least one call.
    ZeroLimit,
    /// `period` was zero; a window must have a positive length.
    ZeroPeriod,
    /// A running limiter's new `limit` is above `ceiling`, the largest count its state word
    /// can hold (see `RateLimiter::set_limit`); a limiter built with the limit holds it.
    LimitAboveCeiling {
        /// The limit asked for.
        limit: u32,
        /// The largest limit the limiter's state word can count up to.
        ceiling: u32,
    },
}

impl ConfigError {
    /// The name of the offending configuration field.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(fixed_window::ConfigError::ZeroPeriod.field(), "period");
    /// ```
    pub fn field(&self) -> &'static str {
        match self {
            ConfigError::ZeroLimit | ConfigError::LimitAboveCeiling { .. } => "limit",
            ConfigError::ZeroPeriod => "period",
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::ZeroLimit => f.write_str("limit must be at least 1, got 0"),
            ConfigError::ZeroPeriod => f.write_str("period must be positive, got 0ns"),
            ConfigError::LimitAboveCeiling { limit, ceiling } => write!(
                f,
                "limit must be at most {ceiling} on this running limiter, got {limit}"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Why a call did not run.
///
/// # Examples
///
/// A rejection carries the configuration and the estimated wait, e.g. for a `Retry-After`
/// header.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ManualClock, RateLimiter, RateLimiterError};
///
/// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(60))?
///     .clock(ManualClock::new())
///     .build();
/// assert_eq!(limiter.call(|| "ran"), Ok("ran"));
/// let err = limiter.call(|| "ran").unwrap_err();
/// assert_eq!(err.retry_after(), Some(Duration::from_secs(60)));
/// assert!(matches!(err, RateLimiterError::Rejected { name: "api", limit: 1, .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RateLimiterError {
    /// No permit became available within `max_wait`; the operation did not run.
    Rejected {
        /// The limiter's name.
        name: &'static str,
        /// Permits per window.
        limit: u32,
        /// The window's length.
        period: Duration,
        /// How long a call may wait for the next window.
        max_wait: Duration,
        /// Time from the rejection until the next window opens; `Duration::MAX` if it never
        /// does (the next window would start past [`Instant::MAX`](crate::Instant::MAX)).
        retry_after: Duration,
    },
    /// The call's wait was interrupted; the operation did not run and no permit was taken.
    Interrupted {
        /// The limiter's name.
        name: &'static str,
    },
    /// The call asked for more permits at once than a window holds, so no window could ever
    /// grant them: nothing was counted and nothing waited for.
    TooMany {
        /// The limiter's name.
        name: &'static str,
        /// Permits per window.
        limit: u32,
        /// The permits the call asked for.
        requested: u32,
    },
}

impl RateLimiterError {
    /// The limiter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::RateLimiterError;
    ///
    /// assert_eq!(RateLimiterError::Interrupted { name: "api" }.name(), "api");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            RateLimiterError::Rejected { name, .. }
            | RateLimiterError::Interrupted { name }
            | RateLimiterError::TooMany { name, .. } => name,
        }
    }

    /// The estimated wait until the next window, for a rejection.
    ///
    /// # Examples
    ///
    /// An interruption has no estimate.
    ///
    /// ```
    /// use fixed_window::RateLimiterError;
    ///
    /// assert_eq!(RateLimiterError::Interrupted { name: "api" }.retry_after(), None);
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            RateLimiterError::Rejected { retry_after, .. } => Some(*retry_after),
            RateLimiterError::Interrupted { .. } | RateLimiterError::TooMany { .. } => None,
        }
    }
}

impl fmt::Display for RateLimiterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateLimiterError::Rejected {
                name,
                limit,
                period,
                max_wait,
                retry_after,
            } => {
                write!(
                    f,
                    "rate limiter '{name}' rejected the call: {limit} permits per {period:?} used up, \
                     max wait {max_wait:?}, next window in {retry_after:?}"
                )
            }
            RateLimiterError::Interrupted { name } => {
                write!(
                    f,
                    "rate limiter '{name}': the wait for a permit was interrupted"
                )
            }
            RateLimiterError::TooMany {
                name,
                limit,
                requested,
            } => {
                write!(
                    f,
                    "rate limiter '{name}' cannot grant {requested} permits at once: a window \
                     holds {limit}"
                )
            }
        }
    }
}

impl std::error::Error for RateLimiterError {}
