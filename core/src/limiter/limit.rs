//! Changing the limit of a running limiter, its current window's count kept.

use crate::error::ConfigError;
use crate::limiter::RateLimiter;

impl<C> RateLimiter<C> {
    /// Puts `limit` permits per window in force at once, for the current window too: the
    /// permits already taken in it count against the new limit. A lower limit can leave the
    /// current window full at once; a higher one frees room in it at once. Unlike
    /// [`with_limit`](RateLimiter::with_limit), the window and its count are kept.
    ///
    /// A call that races `set_limit` is decided wholly under the old limit or wholly under
    /// the new one, and a window never holds more permits than the limit in force when the
    /// last of them was taken. Errors report the limit their decision used, and a permit's
    /// `remaining` is counted under it.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0; [`ConfigError::LimitAboveCeiling`] if it is
    /// above [`limit_ceiling`](RateLimiter::limit_ceiling), the most the limiter's state word
    /// can count (a limiter built with that limit holds it). Either way the limit is unchanged.
    ///
    /// # Examples
    ///
    /// Three of four permits taken; lowered to two, the window is full at once; raised to
    /// five, two more fit in the same window.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 4, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// for _ in 0..3 {
    ///     assert!(limiter.try_acquire().is_ok());
    /// }
    /// limiter.set_limit(2)?;
    /// assert_eq!(limiter.limit(), 2);
    /// assert_eq!(limiter.try_acquire().unwrap_err().limit(), 2);
    /// limiter.set_limit(5)?;
    /// assert_eq!(limiter.try_acquire().map(|permit| permit.remaining()).ok(), Some(1));
    /// assert_eq!(limiter.try_acquire().map(|permit| permit.remaining()).ok(), Some(0));
    /// assert!(limiter.try_acquire().is_err());
    ///
    /// assert_eq!(limiter.set_limit(0), Err(ConfigError::ZeroLimit));
    /// let ceiling = limiter.limit_ceiling();
    /// assert_eq!(
    ///     limiter.set_limit(ceiling + 1),
    ///     Err(ConfigError::LimitAboveCeiling { limit: ceiling + 1, ceiling })
    /// );
    /// assert_eq!(limiter.limit(), 5);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_limit(&self, limit: u32) -> Result<(), ConfigError> {
        self.policy.budget.set_limit(limit, self.state.ceiling())
    }

    /// The largest limit [`set_limit`](RateLimiter::set_limit) accepts: what the limiter's
    /// state word can count up to. For every configuration whose window index leaves 32 bits
    /// of the 64-bit word free (a period of at least about 4.3 seconds from the clock's zero,
    /// or shorter ones on a clock that started recently), that is `u32::MAX`.
    ///
    /// # Examples
    ///
    /// A limiter can always be raised to its ceiling, which is at least the limit it was built
    /// with.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::RateLimiter;
    ///
    /// let limiter = RateLimiter::of("api", 10, Duration::from_millis(1))?;
    /// assert!(limiter.limit_ceiling() >= 10);
    /// limiter.set_limit(limiter.limit_ceiling())?;
    /// assert_eq!(limiter.limit(), limiter.limit_ceiling());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limit_ceiling(&self) -> u32 {
        self.state.ceiling()
    }
}
