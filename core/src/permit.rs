//! Proof of a granted permit.

use crate::instant::Instant;

/// A permit granted by [`RateLimiter::try_acquire`](crate::RateLimiter::try_acquire) or one of
/// the acquire methods.
///
/// There is nothing to give back: a fixed window's permits are spent when granted and the
/// window's count restarts when the next window opens.
///
/// # Examples
///
/// The last permit of a window leaves zero remaining.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Instant, ManualClock, RateLimiter};
///
/// let limiter = RateLimiter::of("api", 2, Duration::from_secs(1))?.with_clock(ManualClock::new());
/// assert_eq!(limiter.acquire()?.remaining(), 1);
/// let last = limiter.acquire()?;
/// assert_eq!((last.remaining(), last.at()), (0, Instant::ZERO));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Permit {
    pub(crate) at: Instant,
    // A full word, so that a permit fills its 16 bytes: with a `u32` and 4 bytes of padding,
    // every permit written to memory kept the old padding by masking it in.
    remaining: u64,
}

impl Permit {
    #[inline]
    pub(crate) fn new(at: Instant, remaining: u32) -> Permit {
        Permit {
            at,
            remaining: u64::from(remaining),
        }
    }

    /// The clock's reading when the permit was claimed.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, RateLimiter};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(7));
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(clock);
    /// assert_eq!(limiter.acquire()?.at(), Instant::from_nanos(7));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn at(&self) -> Instant {
        self.at
    }

    /// Permits left in the window after this one (`limit − used`).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 5, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.acquire()?.remaining(), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remaining(&self) -> u32 {
        // Made from a `u32` in `new`.
        #[allow(clippy::cast_possible_truncation)]
        let remaining = self.remaining as u32;
        remaining
    }
}
