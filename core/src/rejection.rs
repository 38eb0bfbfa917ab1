//! A rejection as `try_acquire` returns it: the estimated wait, borrowing the rest from the
//! limiter.

use core::fmt;
use core::num::NonZeroU64;
use core::time::Duration;

use crate::error::RateLimiterError;
use crate::settings::Settings;

/// [`RateLimiter::try_acquire`](crate::RateLimiter::try_acquire) found the window's permits
/// used up: the time until the next window, and the limiter's settings, borrowed.
///
/// A rejection is the common case when a service is flooded, so it is made as cheaply as a
/// permit: three words (the wait, the limit the decision read, and the settings, borrowed),
/// the rest of the configuration read from the limiter only when asked. It carries
/// everything [`RateLimiterError::Rejected`] does (name, limit, period, max wait, retry after)
/// and becomes one with [`to_error`](Rejection::to_error) or `?` in a function returning
/// `RateLimiterError`, when it must outlive the borrow.
///
/// # Examples
///
/// A rejection's estimate and its full error.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ManualClock, RateLimiter, RateLimiterError};
///
/// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(60))?
///     .clock(ManualClock::new())
///     .build();
/// assert!(limiter.try_acquire().is_ok());
/// let rejection = limiter.try_acquire().unwrap_err();
/// assert_eq!(rejection.retry_after(), Duration::from_secs(60));
/// assert!(matches!(
///     rejection.to_error(),
///     RateLimiterError::Rejected { name: "api", limit: 1, .. }
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rejection<'a> {
    settings: &'a Settings,
    /// The limit the decision read, which `set_limit` may since have changed. A full word,
    /// as a permit's `remaining`, which it shares its place in a `Result` with: with a `u32`,
    /// every rejection written to memory kept the other 4 bytes by masking them in
    /// (callgrind: the rejection path on the manual clock 7 instructions more).
    limit: u64,
    /// Nanoseconds until the next window opens, or `None` if it never does. A full window
    /// always ends after the reading that found it full, so the wait is never zero.
    wait: Option<NonZeroU64>,
}

impl<'a> Rejection<'a> {
    /// A rejection by a limiter with `settings` under `limit`, whose next window opens `wait`
    /// nanoseconds after the reading that found its window full (`None`: never, it would
    /// start past [`Instant::MAX`](crate::Instant::MAX)).
    #[inline]
    pub(crate) fn new(settings: &'a Settings, limit: u32, wait: Option<NonZeroU64>) -> Self {
        Rejection {
            settings,
            limit: u64::from(limit),
            wait,
        }
    }

    /// The time until the next window opens; `Duration::MAX` if it never does (it would start
    /// past [`Instant::MAX`](crate::Instant::MAX)).
    ///
    /// # Examples
    ///
    /// Half a second into a one-second window, the next opens in half a second.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let clock = ManualClock::new();
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .clock(clock.clone())
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// clock.advance(Duration::from_millis(500));
    /// assert_eq!(limiter.try_acquire().unwrap_err().retry_after(), Duration::from_millis(500));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retry_after(&self) -> Duration {
        retry_after(self.wait)
    }

    /// The limiter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::builder("search", 1, Duration::from_secs(1))?
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(limiter.try_acquire().unwrap_err().name(), "search");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self) -> &'static str {
        self.settings.name
    }

    /// The limiter's permits per window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::builder("api", 2, Duration::from_secs(1))?
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(limiter.try_acquire().unwrap_err().limit(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limit(&self) -> u32 {
        // Made from a `u32` in `new`.
        #[allow(clippy::cast_possible_truncation)]
        let limit = self.limit as u32;
        limit
    }

    /// The limiter's window length.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_millis(100))?
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(limiter.try_acquire().unwrap_err().period(), Duration::from_millis(100));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn period(&self) -> Duration {
        self.settings.period
    }

    /// How long the limiter lets a waiting call wait; `try_acquire` itself never waits.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .max_wait(Duration::from_secs(3))
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(limiter.try_acquire().unwrap_err().max_wait(), Duration::from_secs(3));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_wait(&self) -> Duration {
        self.settings.max_wait()
    }

    /// The full [`RateLimiterError::Rejected`], which owns its fields and so outlives the
    /// limiter's borrow.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter, RateLimiterError};
    ///
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// let error = limiter.try_acquire().unwrap_err().to_error();
    /// drop(limiter);
    /// assert_eq!(
    ///     error,
    ///     RateLimiterError::Rejected {
    ///         name: "api",
    ///         limit: 1,
    ///         period: Duration::from_secs(1),
    ///         max_wait: Duration::ZERO,
    ///         retry_after: Duration::from_secs(1),
    ///     }
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    // Inline, handing the rejection's parts to the out-of-line half in registers: whole, its
    // three words went through memory (callgrind: the keyed rejection on the manual clock about
    // 5 instructions fewer; inlined whole, the error's construction cost the keyed permit 13).
    #[inline]
    pub fn to_error(self) -> RateLimiterError {
        error(self.settings, self.limit(), self.wait)
    }
}

/// [`Rejection::to_error`] out of line, from the rejection's parts.
#[inline(never)]
fn error(settings: &Settings, limit: u32, wait: Option<NonZeroU64>) -> RateLimiterError {
    settings.rejected(limit, retry_after(wait))
}

/// The time until the next window opens, `wait` nanoseconds away; `Duration::MAX` if it never
/// does.
#[inline]
fn retry_after(wait: Option<NonZeroU64>) -> Duration {
    wait.map_or(Duration::MAX, |nanos| Duration::from_nanos(nanos.get()))
}

impl From<Rejection<'_>> for RateLimiterError {
    fn from(rejection: Rejection<'_>) -> RateLimiterError {
        rejection.to_error()
    }
}

impl fmt::Display for Rejection<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_error(), f)
    }
}

impl std::error::Error for Rejection<'_> {}
