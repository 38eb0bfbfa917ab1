//! How a call to a planted limiter ends.

use core::time::Duration;

use fixed_window::Instant;

/// A permit: the reading it was claimed at and the permits the limiter says remain.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Instant, ManualClock, Settings};
/// use fixed_window_broken::{PlantedLimiter, PlantedBug, Grant, Wide};
///
/// let limiter: PlantedLimiter<Wide, _> =
///     PlantedLimiter::new(PlantedBug::CarryOver, Settings::new("api", 2, Duration::from_nanos(10))?, ManualClock::new());
/// assert_eq!(limiter.try_acquire(), Ok(Grant { at: Instant::ZERO, remaining: 1 }));
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Grant {
    /// The clock's reading when the permit was claimed.
    pub at: Instant,
    /// Permits left in its window, as the limiter counts them.
    pub remaining: u32,
}

/// A call that ended without a permit.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Instant, ManualClock, Settings};
/// use fixed_window_broken::{PlantedLimiter, PlantedBug, Refusal, Wide};
///
/// let limiter: PlantedLimiter<Wide, _> =
///     PlantedLimiter::new(PlantedBug::FalseRejection, Settings::new("api", 1, Duration::from_nanos(10))?, ManualClock::new());
/// let refused = Refusal::Rejected { at: Instant::ZERO, retry_after: Duration::from_nanos(10) };
/// assert_eq!(limiter.try_acquire(), Err(refused));
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// Rejected at the reading `at`, with the estimated wait for the next window.
    Rejected {
        /// The clock's reading when the call was rejected.
        at: Instant,
        /// From `at` to the next window's start; `Duration::MAX` if none starts.
        retry_after: Duration,
    },
    /// A sleep was interrupted.
    Interrupted,
    /// More permits at once than `limit`, the limit in force at a decision, lets a window
    /// hold: a waiting call meets it after the limit was lowered below its weight.
    TooMany {
        /// The limit the decision read.
        limit: u32,
    },
}
