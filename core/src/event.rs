//! What the limiter tells its listeners.

use core::time::Duration;

use crate::instant::Instant;

/// A subscriber to a limiter's events.
pub(crate) type Listener = Box<dyn Fn(&RateLimiterEvent) + Send + Sync>;

/// An event emitted to the listeners added with
/// [`RateLimiter::with_listener`](crate::RateLimiter::with_listener).
///
/// # Examples
///
/// A listener that counts rejections.
///
/// ```
/// use core::time::Duration;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use fixed_window::{ManualClock, RateLimiter, RateLimiterEvent};
///
/// let rejected = Arc::new(AtomicU32::new(0));
/// let counter = Arc::clone(&rejected);
/// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?
///     .with_clock(ManualClock::new())
///     .with_listener(move |event| {
///         if let RateLimiterEvent::Rejected { .. } = event {
///             counter.fetch_add(1, Ordering::Relaxed);
///         }
///     });
/// let _ = limiter.try_acquire();
/// let _ = limiter.try_acquire();
/// assert_eq!(rejected.load(Ordering::Relaxed), 1);
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RateLimiterEvent {
    /// A permit was granted; the call proceeds. Emitted before the operation runs.
    Permitted {
        /// The clock's reading when the permit was claimed.
        at: Instant,
        /// The limiter's name.
        name: &'static str,
        /// Permits left in the current window after this one (`limit − used`).
        remaining: u32,
    },
    /// No permit was available within the call's wait; the operation does not run.
    Rejected {
        /// The clock's reading when the call was rejected.
        at: Instant,
        /// The limiter's name.
        name: &'static str,
        /// Time from `at` until the next window opens; `Duration::MAX` if it never does.
        retry_after: Duration,
    },
}

impl RateLimiterEvent {
    /// The limiter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::{Instant, RateLimiterEvent};
    ///
    /// let event = RateLimiterEvent::Permitted { at: Instant::ZERO, name: "api", remaining: 2 };
    /// assert_eq!(event.name(), "api");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            RateLimiterEvent::Permitted { name, .. } | RateLimiterEvent::Rejected { name, .. } => {
                name
            }
        }
    }

    /// When the event happened, on the limiter's clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, RateLimiterEvent};
    ///
    /// let at = Instant::from_nanos(5);
    /// let event = RateLimiterEvent::Rejected { at, name: "api", retry_after: Duration::ZERO };
    /// assert_eq!(event.at(), at);
    /// ```
    pub fn at(&self) -> Instant {
        match self {
            RateLimiterEvent::Permitted { at, .. } | RateLimiterEvent::Rejected { at, .. } => *at,
        }
    }
}
