//! Limits per key: the limiter's limit is the default, and a map given at build (changed
//! live) or a function of the key gives some keys a limit of their own. Periods stay one per
//! limiter: every key keeps the one grid.

use core::hash::{BuildHasher, Hash};
use core::num::NonZeroU32;

use crate::error::{ConfigError, RateLimiterError};
use crate::keyed::KeyedRateLimiter;
use crate::weight::Units;

use super::builder::KeyedBuilder;

impl<K, C, S> KeyedBuilder<K, C, S>
where
    K: Hash + Eq,
{
    /// Gives `key` a limit of its own, `limit` permits per window, in place of the limiter's
    /// (which stays every other key's). A later entry for the same key replaces an earlier
    /// one. The keys' state words are made to count up to the largest limit given here, so
    /// none is ever above [`limit_ceiling`](KeyedRateLimiter::limit_ceiling).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0.
    ///
    /// # Examples
    ///
    /// A paid tenant with ten times the default.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::builder("tenants", 100, Duration::from_secs(3600))?
    ///     .key_limit("paid", 1000)?
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert_eq!(limiter.try_acquire(&"paid")?.remaining(), 999);
    /// assert_eq!(limiter.try_acquire(&"free")?.remaining(), 99);
    /// assert!(KeyedRateLimiter::<&str>::builder("t", 1, Duration::from_secs(1))?.key_limit("k", 0).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn key_limit(mut self, key: K, limit: u32) -> Result<Self, ConfigError> {
        let limit = NonZeroU32::new(limit).ok_or(ConfigError::ZeroLimit)?;
        self.options.limits.insert(key, limit);
        Ok(self)
    }

    /// Asks `rule` for the limit of each key that has none of its own in the map
    /// ([`key_limit`](KeyedBuilder#method.key_limit),
    /// [`set_key_limit`](KeyedRateLimiter::set_key_limit)); `None` leaves the key the
    /// limiter's limit. The rule is asked on every decision for such a key, so it should be
    /// cheap and give a key the same answer each time; an answer above
    /// [`limit_ceiling`](KeyedRateLimiter::limit_ceiling) counts as the ceiling.
    ///
    /// # Examples
    ///
    /// Keys named `admin-*` get 50 permits a window, every other key 5.
    ///
    /// ```
    /// use core::num::NonZeroU32;
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::builder("users", 5, Duration::from_secs(1))?
    ///     .key_limits(|key: &String| key.starts_with("admin-").then_some(NonZeroU32::new(50)?))
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert_eq!(limiter.key_limit(&"admin-ada".to_string()), 50);
    /// let bob = "bob".to_string();
    /// assert_eq!(limiter.try_acquire(&bob).map(|permit| permit.remaining()).ok(), Some(4));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn key_limits(
        mut self,
        rule: impl Fn(&K) -> Option<NonZeroU32> + Send + Sync + 'static,
    ) -> Self {
        self.options.limits.set_rule(Box::new(rule));
        self
    }
}

impl<K, C, S> KeyedRateLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    S: BuildHasher,
{
    /// The limit in force for `key`: its own (set by
    /// [`set_key_limit`](KeyedRateLimiter::set_key_limit) or at build, else given by the
    /// builder's [`key_limits`](KeyedBuilder#method.key_limits) rule), or the limiter's
    /// [`limit`](KeyedRateLimiter::limit).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::KeyedRateLimiter;
    ///
    /// let limiter = KeyedRateLimiter::builder("api", 10, Duration::from_secs(1))?.key_limit(7, 3)?.build();
    /// assert_eq!((limiter.key_limit(&7), limiter.key_limit(&8)), (3, 10));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn key_limit(&self, key: &K) -> u32 {
        self.words.limit_of(&self.policy.budget, key)
    }

    /// Puts `limit` in force for `key` alone, at once and for its current window too, as
    /// [`set_limit`](KeyedRateLimiter::set_limit) does for every key: the permits the key has
    /// taken in its window count against its new limit, so a lower one can leave it full at
    /// once and a higher one frees room. A call racing the change is decided wholly under the
    /// key's old limit or wholly under its new one. The limiter's own limit, and every other
    /// key's, are unchanged; a later [`set_limit`](KeyedRateLimiter::set_limit) does not
    /// change this key's.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0; [`ConfigError::LimitAboveCeiling`] if it is
    /// above [`limit_ceiling`](KeyedRateLimiter::limit_ceiling). Either way the key's limit is
    /// unchanged.
    ///
    /// # Examples
    ///
    /// A tenant that took two permits of three is full once lowered to two, and has room
    /// again, in the same window, once raised to five.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("tenants", 3, Duration::from_secs(60))?.with_clock(ManualClock::new());
    /// limiter.try_acquire_n(&"acme", 2)?;
    /// limiter.set_key_limit("acme", 2)?;
    /// assert!(limiter.try_acquire(&"acme").is_err());
    /// assert_eq!(limiter.try_acquire(&"globex")?.remaining(), 2);
    /// limiter.set_key_limit("acme", 5)?;
    /// assert_eq!(limiter.try_acquire(&"acme")?.remaining(), 2);
    /// assert_eq!(limiter.set_key_limit("acme", 0), Err(ConfigError::ZeroLimit));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_key_limit(&self, key: K, limit: u32) -> Result<(), ConfigError> {
        self.words.limits().set(key, limit, self.words.ceiling())
    }

    /// Takes away the limit `key` was given by [`set_key_limit`](KeyedRateLimiter::set_key_limit)
    /// or at build: from then on the rule of the builder's
    /// [`key_limits`](KeyedBuilder#method.key_limits), if any, or else the limiter's limit
    /// applies to it, at once, as a change of its limit does. The limit it had, if it had one.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::KeyedRateLimiter;
    ///
    /// let limiter = KeyedRateLimiter::builder("api", 10, Duration::from_secs(1))?.key_limit("k", 3)?.build();
    /// assert_eq!(limiter.clear_key_limit(&"k"), Some(3));
    /// assert_eq!(limiter.key_limit(&"k"), 10);
    /// assert_eq!(limiter.clear_key_limit(&"k"), None);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn clear_key_limit(&self, key: &K) -> Option<u32> {
        self.words.limits().remove(key)
    }

    /// `n` permits for `key` as a weight to claim, or the error if no window of the key's
    /// can hold them under its limit now in force.
    pub(super) fn units(&self, key: &K, n: u32) -> Result<Units, RateLimiterError> {
        self.policy.settings.units(n, self.key_limit(key))
    }
}
