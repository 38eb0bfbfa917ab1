//! A configuration refused, and which setting it names.

use core::fmt;
use core::time::Duration;

use fixed_window::Instant;

use crate::config::{MAX_NAME_LEN, MAX_PERIOD};
use crate::origin::MAX_ORIGIN_MICROS;

/// A configuration the rules forbid; the message names the field.
///
/// The rules every limiter shares (a positive limit and period) are core's, checked by
/// [`Settings`](fixed_window::Settings) and reported as its [`fixed_window::ConfigError`] inside
/// [`ConfigError::Settings`]: one implementation of each rule, whichever limiter is
/// configured. The other variants are the rules of the server alone.
///
/// # Examples
///
/// A zero limit breaks a shared rule, a period of 1.5 µs one of the server's; each error names
/// its field.
///
/// ```
/// use core::time::Duration;
/// use fixed_window_redis::{Config, ConfigError};
///
/// let err = Config::of("api", 0, Duration::from_secs(1)).unwrap_err();
/// assert_eq!(err, ConfigError::Settings(fixed_window::ConfigError::ZeroLimit));
/// assert_eq!((err.field(), err.to_string()), ("limit", "limit must be at least 1, got 0".into()));
///
/// let err = Config::of("api", 10, Duration::from_nanos(1_500)).unwrap_err();
/// assert_eq!(err, ConfigError::PeriodNotWholeMicros(Duration::from_nanos(1_500)));
/// assert_eq!(err.field(), "period");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigError {
    /// A rule every limiter shares, as core checks and words it: `limit` was 0, or `period`
    /// was zero.
    Settings(fixed_window::ConfigError),
    /// `period` was not a whole number of microseconds, the resolution of the server's clock.
    PeriodNotWholeMicros(Duration),
    /// `period` was longer than [`MAX_PERIOD`].
    PeriodTooLong(Duration),
    /// The name was empty.
    EmptyName,
    /// The name had a character that cannot be part of the limiter's Redis keys (`{`, `}`, a
    /// control character) or was longer than [`MAX_NAME_LEN`] bytes.
    InvalidName(&'static str),
    /// The timeout was zero.
    ZeroTimeout,
    /// The time key was empty.
    EmptyTimeKey,
    /// A fixed origin ([`Origin::At`](fixed_window::Origin::At)) was not a whole number of microseconds, the resolution
    /// of the server's clock.
    OriginNotWholeMicros(Instant),
    /// A fixed origin was later than [`MAX_ORIGIN_MICROS`](crate::MAX_ORIGIN_MICROS) after the
    /// Unix epoch.
    OriginTooLate(Instant),
    /// A client given to a running limiter
    /// ([`set_client`](crate::SharedRateLimiter::set_client)) was of another kind than the one
    /// it was built with (a cluster's for a node's, or the reverse): the limiter's keys would
    /// not be where it sends them.
    OtherServerKind,
    /// A lease's largest share ([`Lease::new`](crate::Lease::new)) was 0.
    ZeroLeaseShare,
    /// A lease's divisor ([`Lease::with_divisor`](crate::Lease::with_divisor)) was 0.
    ZeroLeaseDivisor,
}

impl ConfigError {
    /// The name of the offending configuration field.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(fixed_window_redis::ConfigError::ZeroTimeout.field(), "timeout");
    /// ```
    pub fn field(&self) -> &'static str {
        match self {
            ConfigError::Settings(err) => err.field(),
            ConfigError::PeriodNotWholeMicros(_) | ConfigError::PeriodTooLong(_) => "period",
            ConfigError::EmptyName | ConfigError::InvalidName(_) => "name",
            ConfigError::ZeroTimeout => "timeout",
            ConfigError::EmptyTimeKey => "time_key",
            ConfigError::OriginNotWholeMicros(_) | ConfigError::OriginTooLate(_) => "origin",
            ConfigError::OtherServerKind => "server",
            ConfigError::ZeroLeaseShare | ConfigError::ZeroLeaseDivisor => "lease",
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Settings(err) => err.fmt(f),
            ConfigError::PeriodNotWholeMicros(period) => write!(
                f,
                "period must be a whole number of microseconds (the server clock's resolution), got {period:?}"
            ),
            ConfigError::PeriodTooLong(period) => {
                write!(f, "period must be at most {MAX_PERIOD:?}, got {period:?}")
            }
            ConfigError::EmptyName => f.write_str("name must not be empty"),
            ConfigError::InvalidName(name) => write!(
                f,
                "name must be at most {MAX_NAME_LEN} bytes without '{{', '}}' or control characters, got {name:?}"
            ),
            ConfigError::ZeroTimeout => f.write_str("timeout must be positive, got 0ns"),
            ConfigError::EmptyTimeKey => f.write_str("time key must not be empty"),
            ConfigError::OriginNotWholeMicros(at) => write!(
                f,
                "origin must be a whole number of microseconds since the Unix epoch (the server clock's resolution), got {} ns",
                at.as_nanos()
            ),
            ConfigError::OriginTooLate(at) => write!(
                f,
                "origin must be at most {MAX_ORIGIN_MICROS} µs after the Unix epoch, got {} ns",
                at.as_nanos()
            ),
            ConfigError::OtherServerKind => f.write_str(
                "server must be of the kind the limiter was built with (one node, or a cluster)",
            ),
            ConfigError::ZeroLeaseShare => {
                f.write_str("lease's largest share must be at least 1 permit, got 0")
            }
            ConfigError::ZeroLeaseDivisor => {
                f.write_str("lease's divisor must be at least 1, got 0")
            }
        }
    }
}

// Transparent for a shared rule: the message is core's, so the core error is not also its
// source, which would print the same words twice in a chain of causes.
impl std::error::Error for ConfigError {}

impl From<fixed_window::ConfigError> for ConfigError {
    fn from(err: fixed_window::ConfigError) -> ConfigError {
        ConfigError::Settings(err)
    }
}
