//! Building a keyed limiter: what only it has (listeners that take the key, the key hasher) on
//! top of the builder both limiters share; the table made once, when the limiter is built.

use core::fmt;
use core::hash::{BuildHasher, Hash};

use crate::builder::{LimiterBuilder, policy};
use crate::clock::{Clock, SystemClock};
use crate::event::RateLimiterEvent;
use crate::settings::Settings;

use super::KeyedRateLimiter;
use super::hasher::KeyHasher;
use super::own_limits::OwnLimits;
use super::words::{KeyedListener, KeyedWords};

/// The builder of a [`KeyedRateLimiter`] for keys `K` on clock `C`, hashing keys with `S`,
/// from [`KeyedRateLimiter::builder`]; its setters are [`LimiterBuilder`]'s, with
/// [`listener`](KeyedBuilder#method.listener) and [`hasher`](KeyedBuilder#method.hasher)
/// its own.
///
/// The key table (64 shards) is made by [`build`](KeyedBuilder#method.build), once, and the
/// clock read there once. Each `with_*` of a limiter instead makes a new limiter, table
/// included, so a configuration of several options is cheaper set here.
///
/// # Examples
///
/// A builder named by its type, handed to code that finishes it.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{KeyedBuilder, KeyedRateLimiter, ManualClock};
///
/// fn finish(builder: KeyedBuilder<u64, ManualClock>) -> KeyedRateLimiter<u64, ManualClock> {
///     builder.max_wait(Duration::from_millis(5)).build()
/// }
/// let limiter = finish(KeyedRateLimiter::builder("api", 1, Duration::from_secs(1))?.clock(ManualClock::new()));
/// assert_eq!(limiter.max_wait(), Duration::from_millis(5));
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub type KeyedBuilder<K, C = SystemClock, S = KeyHasher> = LimiterBuilder<KeyedOptions<K, S>, C>;

/// What only a [`KeyedRateLimiter`]'s builder holds: its listeners, which take the key with
/// the event, and the hasher of its keys.
///
/// It appears only as the first parameter of a [`LimiterBuilder`]: a [`KeyedBuilder`] is a
/// `LimiterBuilder<KeyedOptions<K, S>, C>`.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{KeyedOptions, KeyedRateLimiter, LimiterBuilder};
///
/// let builder: LimiterBuilder<KeyedOptions<&str>> = KeyedRateLimiter::builder("api", 1, Duration::from_secs(1))?;
/// assert!(builder.build().try_acquire(&"alice").is_ok());
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub struct KeyedOptions<K, S = KeyHasher> {
    listeners: Vec<KeyedListener<K>>,
    hasher: S,
    /// The limits some keys have of their own.
    pub(super) limits: OwnLimits<K>,
}

impl<K> From<Settings> for KeyedBuilder<K> {
    /// The builder of a [`KeyedRateLimiter`] with `settings`, on the system clock, hashing with
    /// a fresh [`KeyHasher`]: the same as [`KeyedRateLimiter::builder`] with the settings'
    /// name, limit and period, then their `max_wait`.
    fn from(settings: Settings) -> KeyedBuilder<K> {
        LimiterBuilder::with_options(
            settings,
            KeyedOptions {
                listeners: Vec::new(),
                hasher: KeyHasher::default(),
                limits: OwnLimits::new(),
            },
        )
    }
}

impl<K, C, S> KeyedBuilder<K, C, S> {
    /// Adds `listener` to receive every event, with the key it concerns; listeners run in the
    /// order they were added, on the calling thread, and a listener that panics is contained,
    /// as [`Builder::listener`](crate::Builder#method.listener) describes.
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
        self.options.listeners.push(Box::new(listener));
        self
    }

    /// Hashes keys with `hasher` instead of a [`KeyHasher`].
    ///
    /// std's `RandomState` (`SipHash`) resists keys chosen to collide by an attacker who can
    /// time many calls, for about 170 instructions more a call; a fixed hasher suits keys no
    /// one else chooses, and deterministic tests. Whatever the hasher, a table whose keys all
    /// collide turns every lookup into a scan. See [`KeyHasher`] for the trade.
    ///
    /// # Examples
    ///
    /// Client addresses hashed with `SipHash`:
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
        LimiterBuilder {
            settings: self.settings,
            options: KeyedOptions {
                listeners: self.options.listeners,
                hasher,
                limits: self.options.limits,
            },
            clock: self.clock,
            backoff: self.backoff,
            origin: self.origin,
        }
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
        let policy = policy(
            self.settings,
            self.options.listeners,
            self.backoff,
            (self.origin, &self.clock),
        );
        KeyedRateLimiter {
            words: KeyedWords::new(&policy.budget, self.options.limits),
            policy,
            clock: self.clock,
            hasher: self.options.hasher,
        }
    }
}

impl<K, C, S> KeyedRateLimiter<K, C, S> {
    /// This limiter's configuration, to build a new limiter from: every `with_*` is a
    /// shorthand for building one, with a new grid starting now on its clock and no keys.
    pub(super) fn into_builder(self) -> KeyedBuilder<K, C, S> {
        LimiterBuilder {
            settings: self.policy.current_settings(),
            options: KeyedOptions {
                listeners: self.policy.listeners,
                hasher: self.hasher,
                limits: self.words.into_limits(),
            },
            clock: self.clock,
            backoff: self.policy.budget.backoff(),
            origin: self.policy.origin,
        }
    }
}

impl<K, S> fmt::Debug for KeyedOptions<K, S> {
    // The hasher by its type alone: a seeded hasher's seed stays out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedOptions")
            .field("listeners", &self.listeners.len())
            .field("hasher", &core::any::type_name::<S>())
            .field("limits", &self.limits)
            .finish()
    }
}
