//! Building a keyed limiter: the configuration set once, the table made once, when the limiter
//! is built.

use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::time::Duration;

use crate::backoff::Backoff;
use crate::clock::{Clock, SystemClock};
use crate::error::ConfigError;
use crate::event::RateLimiterEvent;
use crate::settings::{Settings, checked_limit, checked_period};

use super::KeyedRateLimiter;
use super::hasher::KeyHasher;
use super::words::KeyedListener;

/// The settings of a [`KeyedRateLimiter`] not yet built, from
/// [`KeyedRateLimiter::builder`]: name, limit and period already checked, the rest optional.
///
/// Nothing is made or read until [`build`](KeyedBuilder::build): the key table (64 shards) is
/// made there, once, and the clock read once, the first window starting at that reading.
/// Each `with_*` of a limiter instead makes a new limiter, table included, so a configuration
/// of several options is cheaper set here.
///
/// # Examples
///
/// 100 calls per client per second, excess calls waiting up to 250 ms, on a manual clock.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Instant, KeyedRateLimiter, ManualClock};
///
/// let clock = ManualClock::starting_at(Instant::from_nanos(40));
/// let limiter = KeyedRateLimiter::builder("per-client", 100, Duration::from_secs(1))?
///     .max_wait(Duration::from_millis(250))
///     .clock(clock)
///     .build();
/// assert_eq!(limiter.max_wait(), Duration::from_millis(250));
/// assert_eq!(limiter.acquire(&"alice")?.at(), Instant::from_nanos(40));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "a builder does nothing until `build` makes the limiter"]
pub struct KeyedBuilder<K, C = SystemClock, S = KeyHasher> {
    pub(super) settings: Settings,
    pub(super) listeners: Vec<KeyedListener<K>>,
    pub(super) clock: C,
    pub(super) hasher: S,
    pub(super) backoff: Backoff,
}

impl<K> KeyedBuilder<K> {
    /// The settings of a keyed limiter named `name` allowing each key `limit` calls per
    /// `period`, on the system clock, hashing with a fresh [`KeyHasher`], rejecting excess
    /// calls at once.
    pub(super) fn new(
        name: &'static str,
        limit: u32,
        period: Duration,
    ) -> Result<KeyedBuilder<K>, ConfigError> {
        Ok(KeyedBuilder {
            settings: Settings::new(name, checked_limit(limit)?, checked_period(period)?),
            listeners: Vec::new(),
            clock: SystemClock,
            hasher: KeyHasher::default(),
            backoff: Backoff::default(),
        })
    }
}

impl<K, C, S> KeyedBuilder<K, C, S> {
    /// `limit` calls per period for each key instead.
    pub(super) fn limit(mut self, limit: u32) -> Result<Self, ConfigError> {
        self.settings.limit = checked_limit(limit)?;
        Ok(self)
    }

    /// Windows `period` long instead.
    pub(super) fn period(mut self, period: Duration) -> Result<Self, ConfigError> {
        self.settings.period = checked_period(period)?;
        Ok(self)
    }

    /// Lets an excess call wait up to `max_wait` for its key's next window before it is
    /// rejected. Zero (the default) rejects at once.
    ///
    /// # Examples
    ///
    /// A waiting call sleeps (on the manual clock, instantly) until the key's next window.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .max_wait(Duration::from_secs(5))
    ///     .clock(ManualClock::new())
    ///     .build();
    /// limiter.acquire(&7)?;
    /// assert_eq!(limiter.acquire(&7)?.at(), Instant::from_nanos(1_000_000_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_wait(mut self, max_wait: Duration) -> Self {
        self.settings = self.settings.with_max_wait(max_wait);
        self
    }

    /// Adds `listener` to receive every event, with the key it concerns; listeners run in the
    /// order they were added, on the calling thread, and a listener that panics is contained.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::{Arc, Mutex};
    /// use fixed_window::{KeyedRateLimiter, ManualClock, RateLimiterEvent};
    ///
    /// let rejected = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&rejected);
    /// let limiter = KeyedRateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .clock(ManualClock::new())
    ///     .listener(move |key: &&str, event| {
    ///         if let RateLimiterEvent::Rejected { .. } = event {
    ///             log.lock().unwrap().push(*key);
    ///         }
    ///     })
    ///     .build();
    /// for key in ["alice", "alice", "bob"] {
    ///     let _ = limiter.try_acquire(&key);
    /// }
    /// assert_eq!(*rejected.lock().unwrap(), ["alice"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn listener(
        mut self,
        listener: impl Fn(&K, &RateLimiterEvent) + Send + Sync + 'static,
    ) -> Self {
        self.listeners.push(Box::new(listener));
        self
    }

    /// Reads time from, and sleeps through, `clock` instead of the [`SystemClock`].
    ///
    /// # Examples
    ///
    /// The first window starts at the clock's reading when the limiter is built.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// let builder = KeyedRateLimiter::builder("api", 1, Duration::from_secs(1))?.clock(clock.clone());
    /// clock.advance(Duration::from_millis(300));
    /// let limiter = builder.build();
    /// assert!(limiter.try_acquire(&1).is_ok());
    /// let rejected = limiter.try_acquire(&1).unwrap_err();
    /// assert_eq!(rejected.retry_after(), Some(Duration::from_secs(1)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clock<D: Clock>(self, clock: D) -> KeyedBuilder<K, D, S> {
        KeyedBuilder {
            settings: self.settings,
            listeners: self.listeners,
            clock,
            hasher: self.hasher,
            backoff: self.backoff,
        }
    }

    /// Hashes keys with `hasher` instead of a [`KeyHasher`] (see
    /// [`KeyedRateLimiter::with_hasher`] for when to).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::hash::RandomState;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::builder("per-address", 1, Duration::from_secs(1))?
    ///     .hasher(RandomState::new())
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert!(limiter.try_acquire(&"10.0.0.1").is_ok());
    /// assert!(limiter.try_acquire(&"10.0.0.1").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> KeyedBuilder<K, C, T> {
        KeyedBuilder {
            settings: self.settings,
            listeners: self.listeners,
            clock: self.clock,
            hasher,
            backoff: self.backoff,
        }
    }

    /// Retries after a lost compare-and-set under `backoff` instead of
    /// [`Backoff::default`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Backoff, KeyedRateLimiter};
    ///
    /// let limiter = KeyedRateLimiter::<u64>::builder("api", 1, Duration::from_secs(1))?
    ///     .backoff(Backoff::new(0))
    ///     .build();
    /// assert_eq!(limiter.backoff(), Backoff::new(0));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn backoff(self, backoff: Backoff) -> Self {
        KeyedBuilder { backoff, ..self }
    }
}

impl<K, C, S> KeyedBuilder<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: Clock,
    S: BuildHasher,
{
    /// The limiter, with no keys, its first window starting at the clock's reading now: the
    /// only moment the builder reads the clock, and the one moment it makes the table.
    ///
    /// # Examples
    ///
    /// Two permits per key per second from the moment of building.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::builder("api", 2, Duration::from_secs(1))?
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert_eq!(limiter.try_acquire(&'a').map(|permit| permit.remaining()), Ok(1));
    /// assert_eq!(limiter.try_acquire(&'a').map(|permit| permit.remaining()), Ok(0));
    /// assert!(limiter.try_acquire(&'a').is_err());
    /// assert_eq!(limiter.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(self) -> KeyedRateLimiter<K, C, S> {
        KeyedRateLimiter::build(
            self.settings,
            self.listeners,
            self.backoff,
            self.clock,
            self.hasher,
        )
    }
}

impl<K, C, S> fmt::Debug for KeyedBuilder<K, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedBuilder")
            .field("name", &self.settings.name)
            .field("limit", &self.settings.limit)
            .field("period", &self.settings.period)
            .field("max_wait", &self.settings.max_wait())
            .field("listeners", &self.listeners.len())
            .field("clock", &core::any::type_name::<C>())
            .field("hasher", &core::any::type_name::<S>())
            .field("backoff", &self.backoff)
            .finish()
    }
}
