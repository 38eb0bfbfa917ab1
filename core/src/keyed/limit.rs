//! Changing the limit of a running keyed limiter, every key's current count kept.

use core::hash::{BuildHasher, Hash};

use crate::error::ConfigError;
use crate::keyed::KeyedRateLimiter;

impl<K, C, S> KeyedRateLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    S: BuildHasher,
{
    /// Puts `limit` permits per window in force at once for every key, for the keys' current
    /// windows too: the permits a key has already taken in its window count against the new
    /// limit, as for [`RateLimiter::set_limit`](crate::RateLimiter::set_limit), whose rules
    /// these are.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0; [`ConfigError::LimitAboveCeiling`] if it is
    /// above [`limit_ceiling`](KeyedRateLimiter::limit_ceiling). Either way the limit is
    /// unchanged.
    ///
    /// # Examples
    ///
    /// Lowered to one, a key that took a permit is full at once, while a new key gets one;
    /// raised to three, the first key has room again in the same window.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("tenants", 2, Duration::from_secs(60))?
    ///     .with_clock(ManualClock::new());
    /// assert!(limiter.try_acquire(&"acme").is_ok());
    /// limiter.set_limit(1)?;
    /// assert!(limiter.try_acquire(&"acme").is_err());
    /// assert!(limiter.try_acquire(&"globex").is_ok());
    /// limiter.set_limit(3)?;
    /// assert_eq!(limiter.try_acquire(&"acme").map(|permit| permit.remaining()).ok(), Some(1));
    ///
    /// assert_eq!(limiter.set_limit(0), Err(ConfigError::ZeroLimit));
    /// let ceiling = limiter.limit_ceiling();
    /// assert!(ceiling < u32::MAX || limiter.set_limit(u32::MAX).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_limit(&self, limit: u32) -> Result<(), ConfigError> {
        self.policy.budget.set_limit(limit, self.words.ceiling())
    }

    /// The largest limit [`set_limit`](KeyedRateLimiter::set_limit) accepts: what each key's
    /// state word can count up to (see
    /// [`RateLimiter::limit_ceiling`](crate::RateLimiter::limit_ceiling)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::KeyedRateLimiter;
    ///
    /// let limiter = KeyedRateLimiter::<u64>::of("tenants", 10, Duration::from_millis(1))?;
    /// assert!(limiter.limit_ceiling() >= 10);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limit_ceiling(&self) -> u32 {
        self.words.ceiling()
    }
}
