//! Draining a key: its current window counts as full from now on.

use core::hash::{BuildHasher, Hash};
use core::time::Duration;

use crate::clock::Clock;
use crate::keyed::KeyedRateLimiter;

impl<K, C, S> KeyedRateLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: Clock,
    S: BuildHasher,
{
    /// Uses up the rest of `key`'s current window: until it ends, every call for `key` is
    /// rejected (or waits), as when its permits are all taken; other keys are untouched. A key
    /// the limiter does not hold yet is added, full. Emits no event. Returns the time until
    /// the key's next window opens (`Duration::MAX` if none does).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// let limiter = KeyedRateLimiter::of("tenants", 5, Duration::from_secs(60))?.with_clock(clock.clone());
    /// clock.advance(Duration::from_secs(20));
    /// assert_eq!(limiter.drain(&"acme"), Duration::from_secs(40));
    /// assert!(limiter.try_acquire(&"acme").is_err());
    /// assert!(limiter.try_acquire(&"globex").is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn drain(&self, key: &K) -> Duration {
        self.policy.drain(&self.source(key), || self.clock.now())
    }
}
