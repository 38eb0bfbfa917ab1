//! Asking what the current window has left, taking nothing.

use crate::clock::Clock;
use crate::instant::Instant;
use crate::limiter::RateLimiter;
use crate::peek::Peek;

impl<C: Clock> RateLimiter<C> {
    /// The permits the current window has left and the time until it ends, taking nothing:
    /// the state word is only loaded, no event is emitted, and a call made right after sees
    /// the window as if the peek had not happened. The answer is what a call at the same
    /// reading would have found (see [`Peek`] for how far it may be trusted).
    ///
    /// # Examples
    ///
    /// Peeks answer the same however many are made; a permit lowers the answer.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 2, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// for _ in 0..10 {
    ///     assert_eq!(limiter.peek().remaining(), 2);
    /// }
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(limiter.peek().remaining(), 1);
    /// assert_eq!(limiter.peek().resets_in(), Duration::from_secs(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn peek(&self) -> Peek {
        self.peek_at(self.clock.now())
    }

    /// [`peek`](RateLimiter::peek) at `now`, without reading the clock: the sans-IO form, as
    /// [`attempt`](RateLimiter::attempt) is for a claim.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(limiter.peek_at(Instant::from_nanos(400_000_000)).remaining(), 0);
    /// // In the next window the count has restarted, though no call has moved the word on.
    /// assert_eq!(limiter.peek_at(Instant::from_nanos(1_000_000_000)).remaining(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn peek_at(&self, now: Instant) -> Peek {
        self.policy.budget.peek(&self.state, now)
    }
}
