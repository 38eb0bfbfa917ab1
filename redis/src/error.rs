//! What can go wrong with a shared limiter's call.

use core::fmt;
use core::time::Duration;

use fixed_window::RateLimiterError;

use crate::config::ConfigError;
use crate::key::KeyError;
use crate::unavailable::Unavailable;

/// The configuration stored on the server for a limiter's name differs from this process's:
/// two deployments disagree on the limit, the period or a fixed origin
/// ([`Config::with_origin`](crate::Config::with_origin)). Nothing was counted.
///
/// Or, for one key, the limit its current window is counted by differs from this process's
/// limit for the key (one of them a limit of the key's own,
/// [`Config::key_limit`](crate::Config::key_limit)): `limit` is this process's limit for the
/// key, `stored_limit` the one its window is counted by; the period and origin are the
/// stored ones. It lasts until the key's window ends, and concerns that key alone.
///
/// Retire the old configuration by deleting its key (the [`Config::config_key`](crate::Config::config_key))
/// once no process uses it, or use a new name.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window_redis::Conflict;
///
/// let conflict = Conflict {
///     name: "api",
///     limit: 10,
///     period: Duration::from_secs(1),
///     origin: None,
///     stored_limit: 20,
///     stored_period: Duration::from_secs(1),
///     stored_origin: 1_700_000_000_000_000,
/// };
/// assert!(conflict.to_string().contains("stored 20 per 1s"));
/// let epoch = Conflict { limit: 20, origin: Some(0), ..conflict };
/// assert!(epoch.to_string().contains("aligned to 0 µs here but to 1700000000000000 µs"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Conflict {
    /// The limiter's name.
    pub name: &'static str,
    /// This process's limit (for a key's conflict, its limit for the key).
    pub limit: u32,
    /// This process's period.
    pub period: Duration,
    /// This process's fixed origin in microseconds on the server's clock, `None` if it aligns
    /// to the first registration.
    pub origin: Option<u64>,
    /// The limit stored on the server (for a key's conflict, the one the key's window is
    /// counted by).
    pub stored_limit: u64,
    /// The period stored on the server.
    pub stored_period: Duration,
    /// The origin stored on the server, in microseconds on its clock.
    pub stored_origin: u64,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let same = u64::from(self.limit) == self.stored_limit && self.period == self.stored_period;
        match self.origin {
            Some(origin) if same => write!(
                f,
                "shared rate limiter '{}' is aligned to {origin} µs here but to {} µs on the server",
                self.name, self.stored_origin
            ),
            _ => write!(
                f,
                "shared rate limiter '{}' is configured with {} per {:?} here but stored {} per {:?} on the server",
                self.name, self.limit, self.period, self.stored_limit, self.stored_period
            ),
        }
    }
}

impl std::error::Error for Conflict {}

/// Why a shared limiter's call did not get a permit.
///
/// # Examples
///
/// A rejection is core's error, with the same fields and the estimated wait.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::RateLimiterError;
/// use fixed_window_redis::SharedError;
///
/// let err = SharedError::Limited(RateLimiterError::Rejected {
///     name: "api",
///     limit: 1,
///     period: Duration::from_secs(1),
///     max_wait: Duration::ZERO,
///     retry_after: Duration::from_millis(300),
/// });
/// assert_eq!(err.retry_after(), Some(Duration::from_millis(300)));
/// assert_eq!(err.name(), "api");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SharedError {
    /// No permit within `max_wait` ([`RateLimiterError::Rejected`]), the wait was
    /// interrupted ([`RateLimiterError::Interrupted`]), or more permits at once than a window
    /// holds ([`RateLimiterError::TooMany`], refused without a round trip), exactly as the
    /// in-process limiters report them.
    Limited(RateLimiterError),
    /// The server could not decide (see [`Unavailable`]) and the policy is
    /// [`FailPolicy::Closed`](crate::FailPolicy::Closed).
    Unavailable {
        /// The limiter's name.
        name: &'static str,
        /// What went wrong.
        cause: Unavailable,
    },
    /// The server holds a different configuration for this name.
    Conflict(Conflict),
    /// The key cannot name a counter.
    InvalidKey {
        /// The limiter's name.
        name: &'static str,
        /// What is wrong with the key.
        error: KeyError,
    },
    /// A setting the rules forbid, given after build: a limit of 0 for
    /// [`set_limit`](crate::SharedRateLimiter::set_limit). Nothing was sent.
    Config {
        /// The limiter's name.
        name: &'static str,
        /// What is wrong, naming the field.
        error: ConfigError,
    },
}

impl SharedError {
    /// The limiter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{KeyError, SharedError};
    ///
    /// assert_eq!(SharedError::InvalidKey { name: "api", error: KeyError::Empty }.name(), "api");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            SharedError::Limited(err) => err.name(),
            SharedError::Unavailable { name, .. }
            | SharedError::InvalidKey { name, .. }
            | SharedError::Config { name, .. } => name,
            SharedError::Conflict(conflict) => conflict.name,
        }
    }

    /// The estimated wait until the next window, for a rejection.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{SharedError, Unavailable, UnavailableKind};
    ///
    /// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// assert_eq!(SharedError::Unavailable { name: "api", cause }.retry_after(), None);
    /// ```
    pub fn retry_after(&self) -> Option<core::time::Duration> {
        match self {
            SharedError::Limited(err) => err.retry_after(),
            _ => None,
        }
    }

    /// The cause, if the server could not decide.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{SharedError, Unavailable, UnavailableKind};
    ///
    /// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// let err = SharedError::Unavailable { name: "api", cause: cause.clone() };
    /// assert_eq!(err.unavailable(), Some(&cause));
    /// ```
    pub fn unavailable(&self) -> Option<&Unavailable> {
        match self {
            SharedError::Unavailable { cause, .. } => Some(cause),
            _ => None,
        }
    }
}

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SharedError::Limited(err) => err.fmt(f),
            SharedError::Unavailable { name, cause } => {
                write!(
                    f,
                    "shared rate limiter '{name}': the server could not decide ({cause})"
                )
            }
            SharedError::Conflict(conflict) => conflict.fmt(f),
            SharedError::InvalidKey { name, error } => {
                write!(f, "shared rate limiter '{name}': {error}")
            }
            SharedError::Config { name, error } => {
                write!(f, "shared rate limiter '{name}': {error}")
            }
        }
    }
}

impl std::error::Error for SharedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SharedError::Limited(err) => Some(err),
            SharedError::Unavailable { cause, .. } => Some(cause),
            SharedError::Conflict(conflict) => Some(conflict),
            SharedError::InvalidKey { error, .. } => Some(error),
            SharedError::Config { error, .. } => Some(error),
        }
    }
}
