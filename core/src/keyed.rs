//! The keyed rate limiter: one window count per key, every key on the limiter's one grid, in a
//! table whose memory is bounded by the keys in use.

use core::fmt;
use core::future::IntoFuture;
use core::hash::{BuildHasher, Hash};
use core::time::Duration;

use crate::attempt::Attempt;
use crate::backoff::Backoff;
#[cfg(doc)]
use crate::builder::LimiterBuilder;
use crate::clock::{Clock, SystemClock};
use crate::error::ConfigError;
#[cfg(doc)]
use crate::error::RateLimiterError;
use crate::event::RateLimiterEvent;
use crate::instant::Instant;
use crate::interrupt::Interrupt;
use crate::permit::Permit;
use crate::policy::Policy;
use crate::settings::Settings;
use crate::waiting;
use crate::weight::One;

mod builder;
pub use self::builder::{KeyedBuilder, KeyedOptions};
mod error;
pub use self::error::KeyedRateLimiterError;
mod hasher;
pub use self::hasher::KeyHasher;
#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
mod hashed;
#[cfg(any(fixed_window_loom, fixed_window_shuttle))]
mod listed;
#[cfg(any(fixed_window_loom, fixed_window_shuttle))]
use self::listed as table;
#[cfg(feature = "tower")]
mod service;
#[cfg(feature = "tower")]
pub use self::service::{KeyedRateLimitLayer, KeyedRateLimitService, KeyedServiceError};
#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
mod shards;
#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
use self::shards as table;
mod drain;
mod limit;
mod own_limits;
mod peek;
mod per_key;
mod slot;
mod sweep;
mod weighted;
mod words;
use self::words::{KeyWord, KeyedListener, KeyedWords};

/// A fixed-window rate limiter per key: at most `limit` calls per `period` for each key (a
/// client address, a user, an API token, a tenant), in windows aligned to the limiter's
/// creation on its clock.
///
/// One configuration serves every key, and every key lives on the limiter's one grid of
/// windows, so a key's state is the plain [`RateLimiter`](crate::RateLimiter)'s one state word,
/// claimed by the same compare-and-set loop, and decided by the same step and waiting loops
/// (only which word they claim from, and what the listeners are told, differ). Keys never seen
/// before start with their full `limit`; a key behaves exactly as its own `RateLimiter` created
/// with this one would (the property tests check it). The same operations take the key:
/// [`try_acquire`], [`acquire`], [`acquire_interruptible`], [`call`], [`call_interruptible`],
/// [`acquire_async`], [`call_async`], and the sans-IO step [`attempt`].
///
/// # Memory
///
/// A key whose window has ended holds nothing worth keeping (its next call starts a fresh
/// window anyway), so the limiter reclaims such keys by itself, as it is used: no background
/// thread and no call to remember. Keys live in 64 shards; when a window opens, each of its
/// first 64 calls also sweeps one shard, in turn, removing the keys whose window has ended.
/// So:
///
/// - once 64 calls have been made in a window, the table holds only keys that took a permit
///   in that window;
/// - before that, it also holds keys of earlier windows in the shards not yet swept, which
///   the last window's calls put there (or earlier windows', if a window saw fewer than 64
///   calls);
/// - between sweeps a call pays one relaxed atomic load; a sweeping call pays for its shard
///   (about 1/64 of the keys).
///
/// [`len`](KeyedRateLimiter::len) counts the keys held and [`shrink`](KeyedRateLimiter::shrink)
/// sweeps every shard at once. Each key costs one heap entry (the key, its hash, and an 8-byte
/// state word, 16 bytes where the configuration needs the wide word) and a slot of its shard's
/// table; the `keyed` benchmarks measure the bytes.
///
/// A removal never loses a claim: a key is reclaimed only by a compare-and-set from the exact
/// ended state word its sweep found, so a permit claimed on that word in the meantime keeps the
/// key, and once reclaimed a word takes no more claims: callers then add the key anew, in a
/// window no earlier than the reclaimed one's.
///
/// # Events and errors
///
/// Listeners receive the key with each event, by reference: `Fn(&K, &RateLimiterEvent)`.
/// Errors carry the key too, borrowed ([`KeyedRateLimiterError<&K>`]). The key is cloned only
/// when it is first added to the table, never on the permit or rejection path of a key already
/// there.
///
/// Every method returns the full error, [`try_acquire`] included: unlike
/// [`RateLimiter::try_acquire`](crate::RateLimiter::try_acquire), whose rejection borrows the
/// limiter ([`Rejection`](crate::Rejection)), a keyed rejection owns its
/// [`RateLimiterError`]. A keyed permit costs about 245 instructions under callgrind, most of
/// them finding the key in the table and pinning it against reclamation; the full error adds
/// about 40 to a rejection. A borrowed rejection would save most of those at the price of a
/// second error type, whereas one error type for every keyed method keeps `?`,
/// [`cloned`](KeyedRateLimiterError::cloned) and the tower layer simple.
///
/// # Hashing
///
/// Keys are hashed with `S`, by default a [`KeyHasher`]: `foldhash`, fast, with a seed drawn at
/// random for each limiter, so that no fixed set of keys collides in every limiter. It makes
/// no claim against an attacker who learns the seed from timings; std's `RandomState`
/// (`SipHash` with random keys, about 170 instructions more a call) does, and
/// [`with_hasher`](KeyedRateLimiter::with_hasher) takes it, or any other hasher (see
/// [`KeyHasher`] for the trade).
///
/// # Configuration
///
/// Made with [`builder`](KeyedRateLimiter::builder) (or [`of`](KeyedRateLimiter::of)); each
/// setting is described once, on the builder's setter of the same name ([`LimiterBuilder`],
/// whose [`KeyedBuilder`] form adds [`listener`](KeyedBuilder#method.listener) and
/// [`hasher`](KeyedBuilder#method.hasher)), and its rules live in [`Settings`]. Each
/// `with_*` is a shorthand for building a new limiter from this one's configuration with one
/// setting changed: its grid starts afresh at the clock's reading now, with no keys. To
/// change several settings, the builder makes the table once instead of once per `with_*`.
///
/// # Examples
///
/// Two permits per client per second: one client's calls do not use up another's.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{KeyedRateLimiter, ManualClock};
///
/// let clock = ManualClock::new();
/// let limiter = KeyedRateLimiter::of("per-client", 2, Duration::from_secs(1))?.with_clock(clock.clone());
/// assert!(limiter.call(&"alice", || ()).is_ok());
/// assert!(limiter.call(&"alice", || ()).is_ok());
/// assert!(limiter.call(&"alice", || ()).is_err());
/// assert!(limiter.call(&"bob", || ()).is_ok());
/// clock.advance(Duration::from_secs(1));
/// assert!(limiter.call(&"alice", || ()).is_ok());
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
///
/// [`try_acquire`]: KeyedRateLimiter::try_acquire
/// [`acquire`]: KeyedRateLimiter::acquire
/// [`acquire_interruptible`]: KeyedRateLimiter::acquire_interruptible
/// [`call`]: KeyedRateLimiter::call
/// [`call_interruptible`]: KeyedRateLimiter::call_interruptible
/// [`acquire_async`]: KeyedRateLimiter::acquire_async
/// [`call_async`]: KeyedRateLimiter::call_async
/// [`attempt`]: KeyedRateLimiter::attempt
pub struct KeyedRateLimiter<K, C = SystemClock, S = KeyHasher> {
    /// The plain limiter's policy (settings, listeners, claim rules), deciding for every key.
    policy: Policy<KeyedListener<K>>,
    /// One state word per key in use.
    words: KeyedWords<K>,
    clock: C,
    hasher: S,
}

impl<K> KeyedRateLimiter<K>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    /// A keyed limiter named `name` allowing each key `limit` calls per `period`, on the
    /// system clock, rejecting excess calls at once: shorthand for
    /// `builder(name, limit, period)?.build()`.
    ///
    /// `name` is `&'static str`: the specification requires a static, compile-time-known
    /// name, since it keys metrics and logs whose cardinality must stay bounded (the keys,
    /// which may be many, are never part of it).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0, [`ConfigError::ZeroPeriod`] if `period` is
    /// zero.
    ///
    /// # Examples
    ///
    /// The configuration reads back as given, and the table starts empty.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, KeyedRateLimiter};
    ///
    /// let limiter = KeyedRateLimiter::<u64>::of("api", 100, Duration::from_secs(1))?;
    /// assert_eq!((limiter.name(), limiter.limit(), limiter.period()), ("api", 100, Duration::from_secs(1)));
    /// assert!(limiter.is_empty());
    /// assert_eq!(KeyedRateLimiter::<u64>::of("api", 0, Duration::from_secs(1)).unwrap_err(), ConfigError::ZeroLimit);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn of(
        name: &'static str,
        limit: u32,
        period: Duration,
    ) -> Result<KeyedRateLimiter<K>, ConfigError> {
        Ok(Self::builder(name, limit, period)?.build())
    }

    /// The configuration of a keyed limiter named `name` allowing each key `limit` calls per
    /// `period`: set the optional settings ([`max_wait`](LimiterBuilder::max_wait),
    /// [`listener`](KeyedBuilder#method.listener), [`clock`](LimiterBuilder::clock),
    /// [`hasher`](KeyedBuilder#method.hasher), [`backoff`](LimiterBuilder::backoff)), then
    /// [`build`](KeyedBuilder#method.build) it. The table is made, and the clock read, once, by
    /// `build`; each `with_*` instead makes a whole new limiter.
    ///
    /// `name` is `&'static str` because the specification requires a static,
    /// compile-time-known name: it keys metrics and logs, whose cardinality must stay bounded.
    /// [`Settings`] made elsewhere give a builder too: `KeyedBuilder::from(settings)`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0, [`ConfigError::ZeroPeriod`] if `period` is
    /// zero.
    ///
    /// # Examples
    ///
    /// One permit per key per second on a manual clock; a key's second call in the same second
    /// waits for its next window, since it may wait up to two seconds.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .max_wait(Duration::from_secs(2))
    ///     .clock(ManualClock::new())
    ///     .build();
    /// limiter.acquire(&"alice")?;
    /// assert_eq!(limiter.acquire(&"alice")?.at(), Instant::from_nanos(1_000_000_000));
    /// assert_eq!(
    ///     KeyedRateLimiter::<u64>::builder("api", 0, Duration::from_secs(1)).unwrap_err(),
    ///     ConfigError::ZeroLimit
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(
        name: &'static str,
        limit: u32,
        period: Duration,
    ) -> Result<KeyedBuilder<K>, ConfigError> {
        Settings::new(name, limit, period).map(KeyedBuilder::from)
    }
}

impl<K, C, S> KeyedRateLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: Clock,
    S: BuildHasher,
{
    /// This limiter with `limit` calls per period for each key (see
    /// [`LimiterBuilder::limit`]), its grid starting afresh (see
    /// [Configuration](KeyedRateLimiter#configuration)).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, KeyedRateLimiter};
    ///
    /// let limiter = KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?.with_limit(50)?;
    /// assert_eq!(limiter.limit(), 50);
    /// assert_eq!(limiter.with_limit(0).unwrap_err(), ConfigError::ZeroLimit);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_limit(self, limit: u32) -> Result<Self, ConfigError> {
        self.into_builder().limit(limit).map(KeyedBuilder::build)
    }

    /// This limiter with windows `period` long (see [`LimiterBuilder::period`]), its grid
    /// starting afresh (see [Configuration](KeyedRateLimiter#configuration)).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroPeriod`] if `period` is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, KeyedRateLimiter};
    ///
    /// let limiter = KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?
    ///     .with_period(Duration::from_millis(250))?;
    /// assert_eq!(limiter.period(), Duration::from_millis(250));
    /// assert_eq!(limiter.with_period(Duration::ZERO).unwrap_err(), ConfigError::ZeroPeriod);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_period(self, period: Duration) -> Result<Self, ConfigError> {
        self.into_builder().period(period).map(KeyedBuilder::build)
    }

    /// This limiter letting an excess call wait up to `max_wait` for its key's next window
    /// (see [`LimiterBuilder::max_wait`]), its grid starting afresh (see
    /// [Configuration](KeyedRateLimiter#configuration)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(5));
    /// assert_eq!(limiter.max_wait(), Duration::from_secs(5));
    /// limiter.acquire(&1)?;
    /// assert_eq!(limiter.acquire(&1)?.at(), Instant::from_nanos(1_000_000_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_max_wait(self, max_wait: Duration) -> Self {
        self.into_builder().max_wait(max_wait).build()
    }

    /// This limiter with `listener` also receiving every event, with the key it concerns (see
    /// [`KeyedBuilder::listener`](KeyedBuilder#method.listener)), its grid starting afresh (see
    /// [Configuration](KeyedRateLimiter#configuration)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::{Arc, Mutex};
    /// use fixed_window::{KeyedRateLimiter, ManualClock, RateLimiterEvent};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_listener(move |key: &&str, event| log.lock().unwrap().push((*key, *event)));
    /// limiter.try_acquire(&"alice")?;
    /// let _ = limiter.try_acquire(&"alice");
    /// let seen = seen.lock().unwrap();
    /// assert!(matches!(seen[0], ("alice", RateLimiterEvent::Permitted { remaining: 0, .. })));
    /// assert!(matches!(seen[1], ("alice", RateLimiterEvent::Rejected { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_listener(
        self,
        listener: impl Fn(&K, &RateLimiterEvent) + Send + Sync + 'static,
    ) -> Self {
        self.into_builder().listener(listener).build()
    }

    /// This limiter reading time from, and sleeping through, `clock` (see
    /// [`LimiterBuilder::clock`]); its grid starts at `clock.now()`, with no keys.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(500));
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(clock);
    /// assert_eq!(limiter.try_acquire(&'k')?.at(), Instant::from_nanos(500));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_clock<D: Clock>(self, clock: D) -> KeyedRateLimiter<K, D, S> {
        self.into_builder().clock(clock).build()
    }

    /// This limiter hashing keys with `hasher` instead of a [`KeyHasher`] (see
    /// [`KeyedBuilder::hasher`](KeyedBuilder#method.hasher) for when to), its grid starting
    /// afresh (see [Configuration](KeyedRateLimiter#configuration)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::hash::RandomState;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("per-address", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_hasher(RandomState::new());
    /// assert!(limiter.try_acquire(&42_u64).is_ok());
    /// assert!(limiter.try_acquire(&42_u64).is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn with_hasher<T: BuildHasher>(self, hasher: T) -> KeyedRateLimiter<K, C, T> {
        self.into_builder().hasher(hasher).build()
    }

    /// This limiter with `backoff` governing retries after a lost compare-and-set (see
    /// [`LimiterBuilder::backoff`]), its grid starting afresh (see
    /// [Configuration](KeyedRateLimiter#configuration)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Backoff, KeyedRateLimiter};
    ///
    /// let limiter = KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?.with_backoff(Backoff::new(0));
    /// assert_eq!(limiter.backoff(), Backoff::new(0));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_backoff(self, backoff: Backoff) -> Self {
        self.into_builder().backoff(backoff).build()
    }

    /// The limiter's name, used in events and errors.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let limiter = fixed_window::KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(limiter.name(), "api");
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn name(&self) -> &'static str {
        self.policy.settings.name
    }

    /// Permits per window, for each key, as now in force (see
    /// [`set_limit`](KeyedRateLimiter::set_limit)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let limiter = fixed_window::KeyedRateLimiter::<u64>::of("api", 7, Duration::from_secs(1))?;
    /// assert_eq!(limiter.limit(), 7);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limit(&self) -> u32 {
        self.policy.budget.limit()
    }

    /// The window's length, as configured.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let limiter = fixed_window::KeyedRateLimiter::<u64>::of("api", 1, Duration::from_millis(10))?;
    /// assert_eq!(limiter.period(), Duration::from_millis(10));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn period(&self) -> Duration {
        self.policy.settings.period
    }

    /// How long an excess call may wait for its key's next window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let limiter = fixed_window::KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(limiter.max_wait(), Duration::ZERO);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn max_wait(&self) -> Duration {
        self.policy.settings.max_wait()
    }

    /// The retry policy after a lost compare-and-set.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Backoff, KeyedRateLimiter};
    ///
    /// let limiter = KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(limiter.backoff(), Backoff::default());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn backoff(&self) -> Backoff {
        self.policy.budget.backoff()
    }

    /// How many compare-and-set attempts on the keys' state words lost to another caller and
    /// were retried, since this limiter was made (feature `stats`).
    ///
    /// # Examples
    ///
    /// A single thread never loses a race.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::KeyedRateLimiter;
    ///
    /// let limiter = KeyedRateLimiter::of("api", 10, Duration::from_secs(1))?;
    /// for key in 0..20_u64 {
    ///     let _ = limiter.try_acquire(&(key % 3));
    /// }
    /// assert_eq!(limiter.cas_retries(), 0);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    #[cfg(feature = "stats")]
    #[cfg_attr(docsrs, doc(cfg(feature = "stats")))]
    pub fn cas_retries(&self) -> u64 {
        self.policy.budget.cas_retries()
    }

    /// The clock the limiter reads and sleeps through.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// limiter.clock().advance(Duration::from_nanos(3));
    /// assert_eq!(limiter.clock().now(), Instant::from_nanos(3));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// How many keys the limiter holds a state word for (exact when no call is in flight).
    ///
    /// Keys whose window has ended are reclaimed as the limiter is used (see
    /// [Memory](KeyedRateLimiter#memory)), so this counts the keys in use, plus those not yet
    /// swept.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 5, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// for key in [1, 2, 2, 3] {
    ///     assert!(limiter.try_acquire(&key).is_ok());
    /// }
    /// assert_eq!(limiter.len(), 3);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the limiter holds no key.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let limiter = fixed_window::KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?;
    /// assert!(limiter.is_empty());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every key whose window ended before the clock's current reading, at once,
    /// instead of waiting for calls to sweep them; returns how many it removed.
    ///
    /// Never needed for the memory bound (calls sweep as they go), but useful after a burst
    /// of keys, before a quiet spell. Safe to call concurrently with anything.
    ///
    /// # Examples
    ///
    /// Three keys used in the first second are all gone once a second has passed.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// let limiter = KeyedRateLimiter::of("api", 5, Duration::from_secs(1))?.with_clock(clock.clone());
    /// for key in ["a", "b", "c"] {
    ///     limiter.try_acquire(&key).map_err(|err| err.cloned())?;
    /// }
    /// assert_eq!(limiter.shrink(), 0);
    /// clock.advance(Duration::from_secs(1));
    /// assert_eq!(limiter.shrink(), 3);
    /// assert!(limiter.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shrink(&self) -> usize {
        self.words.shrink(&self.policy.budget, self.clock.now())
    }

    /// The deadline of a call that starts at `start`: `start + max_wait`, clamped to
    /// [`Instant::MAX`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, KeyedRateLimiter};
    ///
    /// let limiter = KeyedRateLimiter::<u64>::of("api", 1, Duration::from_secs(1))?.with_max_wait(Duration::MAX);
    /// assert_eq!(limiter.deadline(Instant::from_nanos(9)), Instant::MAX);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn deadline(&self, start: Instant) -> Instant {
        self.policy.settings.deadline(start)
    }

    /// One acquire step for `key`, without reading the clock or sleeping: at `now`, for a call
    /// whose wait must end by `deadline`, claim a permit from the key's window, or say when to
    /// try again, or reject.
    ///
    /// The step every keyed acquire method drives, as [`RateLimiter::attempt`] is for the
    /// plain limiter; a custom runtime or a simulator can drive it too. `Permitted` and
    /// `Rejected` outcomes emit their event (with the key) to the listeners; `Wait` emits
    /// nothing and writes nothing. If a new window's sweeping has a turn left, the step takes
    /// it first (see [Memory](KeyedRateLimiter#memory)).
    ///
    /// [`RateLimiter::attempt`]: crate::RateLimiter::attempt
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Attempt, Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_nanos(10))?.with_clock(ManualClock::new());
    /// let (now, deadline) = (Instant::ZERO, Instant::from_nanos(15));
    /// assert_eq!(limiter.attempt(&"a", now, deadline), Attempt::Permitted { remaining: 0 });
    /// assert_eq!(limiter.attempt(&"a", now, deadline), Attempt::Wait { until: Instant::from_nanos(10) });
    /// assert_eq!(limiter.attempt(&"b", now, now), Attempt::Permitted { remaining: 0 });
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    #[inline]
    pub fn attempt(&self, key: &K, now: Instant, deadline: Instant) -> Attempt {
        let Ok(attempt) = self.policy.attempt(&self.source(key), now, deadline, One);
        attempt
    }

    /// Takes a permit for `key` if its current window has one, never waiting.
    ///
    /// The same decision as [`RateLimiter::try_acquire`](crate::RateLimiter::try_acquire), by
    /// the same policy, on the key's word; the rejection is the full error (see
    /// [Events and errors](KeyedRateLimiter#events-and-errors)).
    ///
    /// # Errors
    ///
    /// A [`RateLimiterError::Rejected`] for `key` if its window's permits are used up.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert!(limiter.try_acquire(&"10.0.0.1").is_ok());
    /// assert!(limiter.try_acquire(&"10.0.0.1").is_err());
    /// assert!(limiter.try_acquire(&"10.0.0.2").is_ok());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    #[inline]
    pub fn try_acquire<'k>(&self, key: &'k K) -> Result<Permit, KeyedRateLimiterError<&'k K>> {
        self.policy
            .try_acquire(&self.source(key), || self.clock.now(), One)
            .map_err(|rejection| KeyedRateLimiterError::new(key, rejection.to_error()))
    }

    /// Takes a permit for `key`, waiting (blocking the thread, through the clock) up to
    /// `max_wait` for the key's next window if the current one is used up.
    ///
    /// # Errors
    ///
    /// As [`RateLimiter::acquire`](crate::RateLimiter::acquire), for `key`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_millis(999));
    /// limiter.acquire(&1)?;
    /// // The key's next window opens 1 s from now, after the 999 ms deadline.
    /// assert!(limiter.acquire(&1).is_err());
    /// assert!(limiter.acquire(&2).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire<'k>(&self, key: &'k K) -> Result<Permit, KeyedRateLimiterError<&'k K>> {
        waiting::wait_blocking(&self.policy, &self.source(key), &self.clock, None, One)
            .map_err(|error| KeyedRateLimiterError::new(key, error))
    }

    /// Like [`acquire`](KeyedRateLimiter::acquire), but a wait ends at once when `interrupt` is
    /// interrupted (from any thread), and the call fails.
    ///
    /// # Errors
    ///
    /// As [`acquire`](KeyedRateLimiter::acquire); [`RateLimiterError::Interrupted`] when
    /// `interrupt` is interrupted before or during a wait.
    ///
    /// # Examples
    ///
    /// An already interrupted handle fails a call that would have to wait.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, KeyedRateLimiter, ManualClock, RateLimiterError};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(1));
    /// let interrupt = Interrupt::new();
    /// interrupt.interrupt();
    /// assert!(limiter.acquire_interruptible(&"k", &interrupt).is_ok());
    /// let err = limiter.acquire_interruptible(&"k", &interrupt).unwrap_err();
    /// assert_eq!(err.error(), RateLimiterError::Interrupted { name: "api" });
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn acquire_interruptible<'k>(
        &self,
        key: &'k K,
        interrupt: &Interrupt,
    ) -> Result<Permit, KeyedRateLimiterError<&'k K>> {
        waiting::wait_blocking(
            &self.policy,
            &self.source(key),
            &self.clock,
            Some(interrupt),
            One,
        )
        .map_err(|error| KeyedRateLimiterError::new(key, error))
    }

    /// Runs `op` if a permit for `key` is granted (waiting up to `max_wait`), returning its
    /// result as it is; the `Permitted` event is emitted before `op` runs.
    ///
    /// # Errors
    ///
    /// As [`acquire`](KeyedRateLimiter::acquire); `op` does not run.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// assert_eq!(limiter.call(&"tenant-a", || "42".parse::<u8>()), Ok(Ok(42)));
    /// assert!(limiter.call(&"tenant-a", || unreachable!("no permit, so this never runs")).is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn call<'k, T>(
        &self,
        key: &'k K,
        op: impl FnOnce() -> T,
    ) -> Result<T, KeyedRateLimiterError<&'k K>> {
        self.acquire(key)?;
        Ok(op())
    }

    /// Like [`call`](KeyedRateLimiter::call), with waits interruptible through `interrupt`.
    ///
    /// # Errors
    ///
    /// As [`acquire_interruptible`](KeyedRateLimiter::acquire_interruptible); `op` does not
    /// run.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let interrupt = Interrupt::new();
    /// assert_eq!(limiter.call_interruptible(&7, &interrupt, || 1), Ok(1));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn call_interruptible<'k, T>(
        &self,
        key: &'k K,
        interrupt: &Interrupt,
        op: impl FnOnce() -> T,
    ) -> Result<T, KeyedRateLimiterError<&'k K>> {
        self.acquire_interruptible(key, interrupt)?;
        Ok(op())
    }

    /// Takes a permit for `key`, awaiting the clock's asynchronous sleep up to `max_wait` for
    /// the key's next window; cancel-safe, as
    /// [`RateLimiter::acquire_async`](crate::RateLimiter::acquire_async).
    ///
    /// # Errors
    ///
    /// As [`acquire`](KeyedRateLimiter::acquire); `Interrupted` if the clock's asynchronous
    /// sleep reports an interruption.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(1));
    /// futures::executor::block_on(async {
    ///     limiter.acquire_async(&"k").await.unwrap();
    ///     let second = limiter.acquire_async(&"k").await.unwrap();
    ///     assert_eq!(second.at(), Instant::from_nanos(1_000_000_000));
    /// });
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn acquire_async<'k>(
        &self,
        key: &'k K,
    ) -> Result<Permit, KeyedRateLimiterError<&'k K>> {
        waiting::wait_async(&self.policy, &self.source(key), &self.clock, One)
            .await
            .map_err(|error| KeyedRateLimiterError::new(key, error))
    }

    /// Runs the future `op` if a permit for `key` is granted (awaiting up to `max_wait`),
    /// returning its output as it is; `op` is not polled at all without a permit.
    ///
    /// # Errors
    ///
    /// As [`acquire_async`](KeyedRateLimiter::acquire_async); `op` is dropped unpolled.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{KeyedRateLimiter, ManualClock};
    ///
    /// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let first = futures::executor::block_on(limiter.call_async(&1, async { 7 }));
    /// let second = futures::executor::block_on(limiter.call_async(&1, async { 8 }));
    /// assert_eq!(first, Ok(7));
    /// assert!(second.is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn call_async<'k, F: IntoFuture>(
        &self,
        key: &'k K,
        op: F,
    ) -> Result<F::Output, KeyedRateLimiterError<&'k K>> {
        self.acquire_async(key).await?;
        Ok(op.await)
    }

    /// `key`'s word, hashed once for the whole call, as the step's source.
    #[inline]
    fn source<'a>(&'a self, key: &'a K) -> KeyWord<'a, K> {
        self.words.word_of(self.hasher.hash_one(key), key)
    }
}

#[cfg(feature = "http")]
impl<K, C, S> KeyedRateLimiter<K, C, S> {
    /// Time from `at` until the window holding it ends, for the HTTP fields.
    pub(crate) fn reset_after(&self, at: Instant) -> Duration {
        self.policy.reset_after(at)
    }
}

impl<K, C, S> fmt::Debug for KeyedRateLimiter<K, C, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &self.policy.settings;
        f.debug_struct("KeyedRateLimiter")
            .field("name", &settings.name)
            .field("limit", &self.policy.budget.limit())
            .field("period", &settings.period)
            .field("max_wait", &settings.max_wait())
            .field("listeners", &self.policy.listeners.len())
            .field("clock", &core::any::type_name::<C>())
            .field("hasher", &core::any::type_name::<S>())
            .field("keys", &self.words.len())
            .field("budget", &self.policy.budget)
            .field("words", &self.words)
            .finish()
    }
}
