//! A limiter's configuration as the specification lists it: name, limit, period, max wait.

use core::num::NonZeroU32;
use core::time::Duration;

use crate::error::{ConfigError, RateLimiterError};
use crate::instant::{Instant, saturating_nanos};

/// The configured values a limiter reports in its errors and reads back through its getters.
///
/// Kept apart from the listeners, the clock and the state word so that a
/// [`Rejection`](crate::Rejection) can borrow them instead of copying them into every
/// rejection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Settings {
    pub(crate) name: &'static str,
    pub(crate) limit: NonZeroU32,
    /// Never zero: checked where the settings are made.
    pub(crate) period: Duration,
    /// Private, so that [`Settings::with_max_wait`] keeps `max_wait_nanos` in step.
    max_wait: Duration,
    /// `max_wait` in nanoseconds, saturated at `u64::MAX`, so a call's deadline is one
    /// saturating addition.
    max_wait_nanos: u64,
}

impl Settings {
    /// The settings of a limiter that rejects excess calls at once.
    pub(crate) fn new(name: &'static str, limit: NonZeroU32, period: Duration) -> Settings {
        Settings {
            name,
            limit,
            period,
            max_wait: Duration::ZERO,
            max_wait_nanos: 0,
        }
    }

    /// These settings with excess calls waiting up to `max_wait`.
    pub(crate) fn with_max_wait(self, max_wait: Duration) -> Settings {
        Settings {
            max_wait,
            max_wait_nanos: saturating_nanos(max_wait),
            ..self
        }
    }

    /// How long an excess call may wait.
    pub(crate) fn max_wait(&self) -> Duration {
        self.max_wait
    }

    /// The deadline of a call that starts at `start`.
    #[inline]
    pub(crate) fn deadline(&self, start: Instant) -> Instant {
        Instant::from_nanos(start.as_nanos().saturating_add(self.max_wait_nanos))
    }

    /// The full error for a call rejected `retry_after` before the next window.
    pub(crate) fn rejected(&self, retry_after: Duration) -> RateLimiterError {
        RateLimiterError::Rejected {
            name: self.name,
            limit: self.limit.get(),
            period: self.period,
            max_wait: self.max_wait,
            retry_after,
        }
    }

    /// The error for a call whose wait was interrupted.
    pub(crate) fn interrupted(&self) -> RateLimiterError {
        RateLimiterError::Interrupted { name: self.name }
    }
}

/// `limit`, if the rules allow it.
pub(crate) fn checked_limit(limit: u32) -> Result<NonZeroU32, ConfigError> {
    NonZeroU32::new(limit).ok_or(ConfigError::ZeroLimit)
}

/// `period`, if the rules allow it.
pub(crate) fn checked_period(period: Duration) -> Result<Duration, ConfigError> {
    if period.is_zero() {
        Err(ConfigError::ZeroPeriod)
    } else {
        Ok(period)
    }
}
