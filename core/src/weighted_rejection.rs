//! A rejection as `try_acquire_n` returns it: the window short of the weight (the same
//! [`Rejection`] `try_acquire` answers), or a weight no window can ever grant.

use core::fmt;
use core::time::Duration;

use crate::error::RateLimiterError;
use crate::rejection::Rejection;
use crate::settings::Settings;
use crate::weight::{Excess, Units, Weight};

/// [`RateLimiter::try_acquire_n`](crate::RateLimiter::try_acquire_n) took nothing: the window
/// has fewer than `n` permits left, or `n` is more than any window holds.
///
/// The two are told apart in the type because they call for different answers: a full window
/// ends (retry after [`Rejection::retry_after`], always known), a weight above the limit is
/// never granted as the limit stands (the caller must split it, or the limit must change).
/// A full window is the very [`Rejection`] that
/// [`try_acquire`](crate::RateLimiter::try_acquire) answers, borrowing the limiter as it does;
/// [`to_error`](WeightedRejection::to_error) or `?` in a function returning
/// [`RateLimiterError`] turns either into the owned error
/// ([`Rejected`](RateLimiterError::Rejected) or [`TooMany`](RateLimiterError::TooMany), the
/// variant every limiter reports a weight above the limit with).
///
/// # Examples
///
/// Three of five taken: four more find the window short, six never fit.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ManualClock, RateLimiter, RateLimiterError, WeightedRejection};
///
/// let limiter = RateLimiter::of("bytes", 5, Duration::from_secs(1))?.with_clock(ManualClock::new());
/// assert_eq!(limiter.try_acquire_n(3).map(|permit| permit.remaining()), Ok(2));
/// match limiter.try_acquire_n(4) {
///     Err(WeightedRejection::Full(rejection)) => {
///         assert_eq!(rejection.retry_after(), Duration::from_secs(1));
///     }
///     other => panic!("expected a full window, got {other:?}"),
/// }
/// let too_many = limiter.try_acquire_n(6).unwrap_err();
/// assert_eq!(
///     too_many,
///     WeightedRejection::TooMany { name: "bytes", limit: 5, requested: 6 }
/// );
/// assert_eq!(
///     too_many.to_error(),
///     RateLimiterError::TooMany { name: "bytes", limit: 5, requested: 6 }
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
// Not `non_exhaustive`: a window short of the weight and a weight above the limit are the
// only two ways a weighted call can find no room, and a caller's `match` may rely on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WeightedRejection<'a> {
    /// The window has fewer permits left than the call asked for; none were taken.
    Full(Rejection<'a>),
    /// The call asked for more permits at once than a window holds under the limit its
    /// decision read, so no window could grant them: nothing was counted.
    TooMany {
        /// The limiter's name.
        name: &'static str,
        /// Permits per window.
        limit: u32,
        /// The permits the call asked for.
        requested: u32,
    },
}

impl<'a> WeightedRejection<'a> {
    /// A weight above the limit, on a limiter with `settings`.
    #[cold]
    pub(crate) fn too_many(settings: &Settings, excess: Excess) -> WeightedRejection<'a> {
        WeightedRejection::TooMany {
            name: settings.name,
            limit: excess.limit,
            requested: excess.requested,
        }
    }

    /// What a weighted call that found its window full ends with: `TooMany` if a lowering
    /// since the call began put its weight above the limit the decision read, else the
    /// rejection as it is.
    #[cold]
    pub(crate) fn refused(
        settings: &Settings,
        rejection: Rejection<'a>,
        units: Units,
    ) -> WeightedRejection<'a> {
        match units.fits(rejection.limit()) {
            Ok(()) => WeightedRejection::Full(rejection),
            Err(excess) => WeightedRejection::too_many(settings, excess),
        }
    }

    /// The limiter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::RateLimiter;
    ///
    /// let limiter = RateLimiter::of("bytes", 5, Duration::from_secs(1))?;
    /// assert_eq!(limiter.try_acquire_n(9).unwrap_err().name(), "bytes");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            WeightedRejection::Full(rejection) => rejection.name(),
            WeightedRejection::TooMany { name, .. } => name,
        }
    }

    /// The limit the decision read: permits per window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("bytes", 5, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.try_acquire_n(9).unwrap_err().limit(), 5);
    /// assert!(limiter.try_acquire_n(5).is_ok());
    /// assert_eq!(limiter.try_acquire_n(1).unwrap_err().limit(), 5);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limit(&self) -> u32 {
        match self {
            WeightedRejection::Full(rejection) => rejection.limit(),
            WeightedRejection::TooMany { limit, .. } => *limit,
        }
    }

    /// The time until the next window opens, if the window was short of the weight; `None`
    /// for a weight above the limit, which no later window grants either.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("bytes", 5, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert!(limiter.try_acquire_n(4).is_ok());
    /// assert_eq!(limiter.try_acquire_n(2).unwrap_err().retry_after(), Some(Duration::from_secs(1)));
    /// assert_eq!(limiter.try_acquire_n(6).unwrap_err().retry_after(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            WeightedRejection::Full(rejection) => Some(rejection.retry_after()),
            WeightedRejection::TooMany { .. } => None,
        }
    }

    /// The owned [`RateLimiterError`]: [`Rejected`](RateLimiterError::Rejected) for a full
    /// window, [`TooMany`](RateLimiterError::TooMany) for a weight above the limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter, RateLimiterError};
    ///
    /// let limiter = RateLimiter::of("bytes", 5, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert!(limiter.try_acquire_n(5).is_ok());
    /// let error = limiter.try_acquire_n(1).unwrap_err().to_error();
    /// drop(limiter);
    /// assert!(matches!(error, RateLimiterError::Rejected { name: "bytes", limit: 5, .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_error(self) -> RateLimiterError {
        match self {
            WeightedRejection::Full(rejection) => rejection.to_error(),
            WeightedRejection::TooMany {
                name,
                limit,
                requested,
            } => RateLimiterError::TooMany {
                name,
                limit,
                requested,
            },
        }
    }
}

impl From<WeightedRejection<'_>> for RateLimiterError {
    fn from(rejection: WeightedRejection<'_>) -> RateLimiterError {
        rejection.to_error()
    }
}

impl fmt::Display for WeightedRejection<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_error(), f)
    }
}

impl std::error::Error for WeightedRejection<'_> {}
