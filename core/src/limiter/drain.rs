//! Draining: the current window counts as full from now on.

use core::time::Duration;

use crate::clock::Clock;
use crate::limiter::RateLimiter;

impl<C: Clock> RateLimiter<C> {
    /// Uses up the rest of the current window: from now until it ends, every call is
    /// rejected (or waits for the next window), as when the window's permits are all taken.
    /// For when the upstream answers "too many requests": no more calls go out until the
    /// next window. Emits no event (nothing is granted). Returns the time until the next
    /// window opens (`Duration::MAX` if none does).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let clock = ManualClock::new();
    /// let limiter = RateLimiter::of("upstream", 10, Duration::from_secs(1))?.with_clock(clock.clone());
    /// clock.advance(Duration::from_millis(300));
    /// assert_eq!(limiter.try_acquire().map(|permit| permit.remaining()).ok(), Some(9));
    /// assert_eq!(limiter.drain(), Duration::from_millis(700));
    /// assert_eq!(limiter.try_acquire().unwrap_err().retry_after(), Duration::from_millis(700));
    /// clock.advance(Duration::from_millis(700));
    /// // The next window is whole.
    /// assert_eq!(limiter.try_acquire().map(|permit| permit.remaining()).ok(), Some(9));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn drain(&self) -> Duration {
        self.policy.drain(&self.state, || self.clock.now())
    }
}
