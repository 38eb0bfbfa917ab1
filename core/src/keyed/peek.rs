//! Asking what a key's current window has left, taking nothing and adding no key.

use core::hash::{BuildHasher, Hash};

use crate::clock::Clock;
use crate::instant::Instant;
use crate::keyed::KeyedRateLimiter;
use crate::peek::Peek;

impl<K, C, S> KeyedRateLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: Clock,
    S: BuildHasher,
{
    /// The permits `key`'s current window has left and the time until it ends, taking
    /// nothing: no count changes, no event is emitted, and a key the limiter does not hold
    /// is not added (it answers the full limit), so peeks at any number of keys use no
    /// memory. The answer is what a call for `key` at the same reading would have found
    /// (see [`Peek`] for how far it may be trusted).
    ///
    /// # Examples
    ///
    /// A key never seen answers the whole window and stays unknown to the limiter.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 3, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.peek(&"alice").remaining(), 3);
    /// assert!(limiter.is_empty());
    /// limiter.try_acquire(&"alice")?;
    /// assert_eq!(limiter.peek(&"alice").remaining(), 2);
    /// assert_eq!(limiter.peek(&"bob").remaining(), 3);
    /// assert_eq!(limiter.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn peek(&self, key: &K) -> Peek {
        self.peek_at(key, self.clock().now())
    }

    /// [`peek`](KeyedRateLimiter::peek) at `now`, without reading the clock: the sans-IO
    /// form, as [`attempt`](KeyedRateLimiter::attempt) is for a claim.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// limiter.try_acquire(&7)?;
    /// let peek = limiter.peek_at(&7, Instant::from_nanos(250_000_000));
    /// assert_eq!((peek.remaining(), peek.resets_in()), (0, Duration::from_millis(750)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn peek_at(&self, key: &K, now: Instant) -> Peek {
        let hash = self.hasher.hash_one(key);
        self.words.peek(&self.policy.budget, hash, key, now)
    }
}
