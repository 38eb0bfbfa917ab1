//! A limiter's configuration as the specification lists it: name, limit, period, max wait.

use core::num::NonZeroU32;
use core::time::Duration;

use crate::error::RateLimiterError;
use crate::instant::Instant;

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
    pub(crate) max_wait: Duration,
}

impl Settings {
    /// The deadline of a call that starts at `start`.
    #[inline]
    pub(crate) fn deadline(&self, start: Instant) -> Instant {
        start.saturating_add(self.max_wait)
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
