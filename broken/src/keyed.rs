//! The planted keyed limiter: one count per key on one grid, in a table that reclaims ended
//! keys as it is used, with each [`KeyedPlantedBug`] planted in the one place it breaks.

use core::fmt;
use core::time::Duration;

use fixed_window::{Clock, ConfigError, Instant, Interrupt, Peek, Settings};
use fixed_window_spec::{Decision, Grid, NEVER, deadline};

use crate::limiter::nanos;
use crate::outcome::{Grant, Refusal};
use crate::pause::{Async, Blocking, Pause, block_on};
use crate::sync::atomic::{AtomicU32, Ordering};
use crate::sync::hint;
use crate::waiting::{Steps, call};

pub(crate) mod planted_bug;
pub use self::planted_bug::{KeyedPlantedBug, UnknownKeyedPlantedBug};
mod own_limits;
mod table;
use self::own_limits::OwnLimits;
use self::table::Table;

/// A keyed fixed-window limiter with one [`KeyedPlantedBug`], on clock `C`, its keys `u64`.
///
/// Everything but the bug is the spec crate's rules and `fixed-window`'s documented keyed
/// behaviour, written independently of it: each key's count is a spec [`Count`] on the
/// limiter's one [`Grid`], claimed by compare-and-set of the count read; the keys live in 64
/// shards, and each of the first 64 calls of a new window sweeps one shard, in turn, removing
/// the keys whose window has ended by marking their count reclaimed (a claim on a marked
/// count fails, and the caller looks again); a key added anew starts no earlier than the
/// latest window swept for. The waiting call is the spec's [`Waiting`], as for
/// [`PlantedLimiter`](crate::PlantedLimiter).
///
/// [`Count`]: fixed_window_spec::Count
/// [`Waiting`]: fixed_window_spec::Waiting
///
/// # Examples
///
/// One count shared by every key: a second key is refused in a window the first used up.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ManualClock, Settings};
/// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
///
/// let limiter =
///     PlantedKeyedLimiter::new(KeyedPlantedBug::SharedCount, Settings::new("api", 1, Duration::from_nanos(10))?, ManualClock::new());
/// assert!(limiter.try_acquire(1).is_ok());
/// assert!(limiter.try_acquire(2).is_err());
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub struct PlantedKeyedLimiter<C> {
    bug: KeyedPlantedBug,
    /// Permits per window for every key, as [`PlantedKeyedLimiter::set_limit`] last put it.
    limit: AtomicU32,
    grid: Grid,
    max_wait: Duration,
    clock: C,
    table: Table,
    /// The limits some keys have of their own.
    own: OwnLimits,
}

impl<C: Clock> PlantedKeyedLimiter<C> {
    /// A keyed limiter with `bug`, `settings`' limit permits per period for each key, excess
    /// calls waiting up to their max wait, on `clock`; its windows start at the clock's
    /// reading now. The settings are the real limiter's, checked by its rules.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
    ///
    /// let settings = Settings::new("api", 2, Duration::from_secs(1))?;
    /// let limiter = PlantedKeyedLimiter::new(KeyedPlantedBug::ReclaimLive, settings, ManualClock::new());
    /// assert_eq!(limiter.try_acquire(7).map(|grant| grant.remaining), Ok(1));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn new(bug: KeyedPlantedBug, settings: Settings, clock: C) -> PlantedKeyedLimiter<C> {
        let origin = clock.now();
        PlantedKeyedLimiter::starting_at(bug, settings, clock, origin)
    }

    /// [`PlantedKeyedLimiter::new`], its windows aligned to `origin` (`Origin::At`) instead: a
    /// boundary of its grid, which has boundaries whole periods before it too.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let clock = ManualClock::new();
    /// let settings = Settings::new("api", 1, Duration::from_nanos(10))?;
    /// let limiter =
    ///     PlantedKeyedLimiter::starting_at(KeyedPlantedBug::ReclaimLive, settings, clock.clone(), Instant::from_nanos(4));
    /// assert!(limiter.try_acquire(1).is_ok());
    /// clock.set(Instant::from_nanos(14));
    /// assert!(limiter.try_acquire(1).is_ok());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn starting_at(
        bug: KeyedPlantedBug,
        settings: Settings,
        clock: C,
        origin: Instant,
    ) -> PlantedKeyedLimiter<C> {
        let period = nanos(settings.period());
        let reading = u128::from(clock.now().as_nanos());
        let grid = Grid::through(u128::from(origin.as_nanos()), false, period, reading);
        PlantedKeyedLimiter::on_grid(bug, settings, clock, grid)
    }

    /// [`PlantedKeyedLimiter::new`], on `grid` (its period is the settings'), as
    /// [`Grid::unix`] makes for windows at whole periods of Unix time.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::num::NonZeroU128;
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    /// use fixed_window_spec::Grid;
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(2));
    /// let settings = Settings::new("api", 1, Duration::from_nanos(10))?;
    /// let grid = Grid::through(3, true, NonZeroU128::new(10).expect("positive"), 2);
    /// let limiter =
    ///     PlantedKeyedLimiter::on_grid(KeyedPlantedBug::ReclaimLive, settings, clock.clone(), grid);
    /// assert!(limiter.try_acquire(1).is_ok());
    /// clock.set(Instant::from_nanos(7));
    /// assert!(limiter.try_acquire(1).is_ok());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn on_grid(
        bug: KeyedPlantedBug,
        settings: Settings,
        clock: C,
        grid: Grid,
    ) -> PlantedKeyedLimiter<C> {
        PlantedKeyedLimiter {
            bug,
            limit: AtomicU32::new(settings.limit()),
            max_wait: settings.max_wait(),
            clock,
            table: Table::new(&grid),
            grid,
            own: OwnLimits::new(),
        }
    }

    /// The planted bug.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
    ///
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::NeverReclaims, Settings::new("api", 1, Duration::from_secs(1))?, ManualClock::new());
    /// assert_eq!(limiter.bug(), KeyedPlantedBug::NeverReclaims);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn bug(&self) -> KeyedPlantedBug {
        self.bug
    }

    /// The clock the limiter reads and sleeps on.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, ManualClock, Settings};
    /// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(3));
    /// let limiter = PlantedKeyedLimiter::new(KeyedPlantedBug::SharedCount, Settings::new("api", 1, Duration::from_secs(1))?, clock);
    /// assert_eq!(limiter.clock().now(), Instant::from_nanos(3));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// How many keys the table holds.
    ///
    /// # Examples
    ///
    /// A limiter that never reclaims still holds a key whose window ended long ago.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
    ///
    /// let clock = ManualClock::new();
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::NeverReclaims, Settings::new("api", 1, Duration::from_nanos(10))?, clock.clone());
    /// limiter.try_acquire(1).expect("a fresh key");
    /// clock.advance(Duration::from_nanos(100));
    /// limiter.try_acquire(2).expect("a fresh key");
    /// assert_eq!(limiter.len(), 2);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the table holds no key.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
    ///
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::SharedCount, Settings::new("api", 1, Duration::from_secs(1))?, ManualClock::new());
    /// assert!(limiter.is_empty());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes a permit for `key` if its current window has one, never waiting.
    ///
    /// # Errors
    ///
    /// [`Refusal::Rejected`] when the limiter, bug and all, finds no permit.
    ///
    /// # Examples
    ///
    /// A key reclaimed while its window runs is granted its limit again.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
    ///
    /// let clock = ManualClock::new();
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::ReclaimLive, Settings::new("api", 1, Duration::from_nanos(1_000))?, clock.clone());
    /// clock.advance(Duration::from_nanos(1_000));
    /// // Every one of the window's first 64 calls sweeps a shard, its own window included.
    /// let granted = (0..64).filter(|_| limiter.try_acquire(7).is_ok()).count();
    /// assert!(granted > 1);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn try_acquire(&self, key: u64) -> Result<Grant, Refusal> {
        block_on(call(&self.for_key(key), false, 1, &mut Blocking::new(None)))
    }

    /// Takes a permit for `key`, sleeping in the clock's blocking sleep for a later window
    /// within the max wait. `interrupt` may interrupt the sleeps.
    ///
    /// # Errors
    ///
    /// [`Refusal::Rejected`] when no permit comes by the deadline, [`Refusal::Interrupted`]
    /// when a sleep is interrupted.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, Settings};
    /// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
    ///
    /// let period = Duration::from_nanos(10);
    /// let limiter = PlantedKeyedLimiter::new(KeyedPlantedBug::NeverReclaims, Settings::new("api", 1, period)?.with_max_wait(period), ManualClock::new());
    /// assert!(limiter.try_acquire(3).is_ok());
    /// assert_eq!(limiter.acquire(3, None).map(|grant| grant.at), Ok(Instant::from_nanos(10)));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn acquire(&self, key: u64, interrupt: Option<&Interrupt>) -> Result<Grant, Refusal> {
        block_on(call(
            &self.for_key(key),
            true,
            1,
            &mut Blocking::new(interrupt),
        ))
    }

    /// Takes a permit for `key`, awaiting the clock's asynchronous sleep for a later window
    /// within the max wait. For a bug that [races only](KeyedPlantedBug::races_only) it yields to
    /// its executor between reading the key's count and claiming from it.
    ///
    /// # Errors
    ///
    /// As [`PlantedKeyedLimiter::acquire`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedKeyedLimiter, KeyedPlantedBug};
    ///
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::SharedCount, Settings::new("api", 2, Duration::from_secs(1))?, ManualClock::new());
    /// let grant = futures::executor::block_on(limiter.acquire_async(9)).expect("a fresh key");
    /// assert_eq!(grant.remaining, 1);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn acquire_async(&self, key: u64) -> Result<Grant, Refusal> {
        call(&self.for_key(key), true, 1, &mut Async).await
    }

    /// Takes `n` permits of one window for `key` if its window in effect has them now, as
    /// [`PlantedKeyedLimiter::try_acquire`] takes one. Zero permits are granted without
    /// counting.
    ///
    /// # Errors
    ///
    /// [`Refusal::Rejected`] if the key's window has fewer than `n` left.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::SharedCount, Settings::new("api", 3, Duration::from_secs(1))?, ManualClock::new());
    /// assert_eq!(limiter.try_acquire_n(9, 2).map(|grant| grant.remaining), Ok(1));
    /// assert!(limiter.try_acquire_n(9, 2).is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn try_acquire_n(&self, key: u64, n: u32) -> Result<Grant, Refusal> {
        block_on(call(&self.for_key(key), false, n, &mut Blocking::new(None)))
    }

    /// Takes `n` permits of one window for `key`, awaiting the clock's asynchronous sleep for
    /// a later window within the max wait.
    ///
    /// # Errors
    ///
    /// As [`PlantedKeyedLimiter::acquire_async`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::SharedCount, Settings::new("api", 3, Duration::from_secs(1))?, ManualClock::new());
    /// let grant = futures::executor::block_on(limiter.acquire_n_async(9, 3)).expect("a fresh key");
    /// assert_eq!(grant.remaining, 0);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn acquire_n_async(&self, key: u64, n: u32) -> Result<Grant, Refusal> {
        call(&self.for_key(key), true, n, &mut Async).await
    }

    /// What `key`'s window in effect has left under the limit and the time to its end,
    /// taking nothing and adding no key (`docs/rules.md`: Peeking), as `KeyedRateLimiter::peek`
    /// answers; a key absent, or whose slot was reclaimed, counts from the horizon's window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let clock = ManualClock::new();
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::ReclaimLive, Settings::new("api", 3, Duration::from_nanos(10))?, clock.clone());
    /// assert!(limiter.try_acquire(9).is_ok());
    /// clock.advance(Duration::from_nanos(4));
    /// let peek = limiter.peek(9);
    /// assert_eq!((peek.remaining(), peek.resets_in()), (2, Duration::from_nanos(6)));
    /// assert_eq!(limiter.peek(8).remaining(), 3);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn peek(&self, key: u64) -> Peek {
        let now = u128::from(self.clock.now().as_nanos());
        let stored = match self.bug {
            KeyedPlantedBug::SharedCount => 0,
            _ => key,
        };
        let limit = self.limit();
        crate::limiter::peek_of(
            self.table.count_of(stored).peek(&self.grid, limit, now),
            limit,
        )
    }

    /// Drains `key`'s window in effect now: it counts as full until it ends (`docs/rules.md`:
    /// Draining), the key added if absent, after a turn at sweeping if one is due. Returns the
    /// time from the reading until the window holding it ends, `Duration::MAX` if none follows.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let clock = ManualClock::new();
    /// let limiter =
    ///     PlantedKeyedLimiter::new(KeyedPlantedBug::ReclaimLive, Settings::new("api", 3, Duration::from_nanos(10))?, clock.clone());
    /// clock.advance(Duration::from_nanos(4));
    /// assert_eq!(limiter.drain(9), Duration::from_nanos(6));
    /// assert!(limiter.try_acquire(9).is_err());
    /// assert!(limiter.try_acquire(8).is_ok());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn drain(&self, key: u64) -> Duration {
        let reading = self.clock.now();
        let now = u128::from(reading.as_nanos());
        self.table.take_turn(&self.grid, now, self.bug);
        let stored = match self.bug {
            KeyedPlantedBug::SharedCount => 0,
            _ => key,
        };
        loop {
            let (slot, _) = self.table.slot(stored);
            let seen = slot.load();
            let Some(count) = seen else {
                self.table.remove_reclaimed(stored, &slot);
                continue;
            };
            let mut drained = count;
            // The limit is read after the count, as a claim reads it.
            drained.drain(&self.grid, self.key_limit(key), now);
            if slot.compare_exchange(seen, Some(drained)) {
                break;
            }
            hint::spin_loop();
        }
        let end = self
            .grid
            .end(self.grid.index_of(now))
            .map_or(NEVER, |end| end - now);
        u64::try_from(end).map_or(Duration::MAX, Duration::from_nanos)
    }

    /// Permits per window for every key, as now in force.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let settings = Settings::new("keyed", 2, Duration::from_secs(1))?;
    /// let limiter = PlantedKeyedLimiter::new(KeyedPlantedBug::NeverReclaims, settings, ManualClock::new());
    /// assert_eq!(limiter.limit(), 2);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limit(&self) -> u32 {
        self.limit.load(Ordering::SeqCst)
    }

    /// Puts `limit` permits per window in force at once for every key, each key's current
    /// count kept (`docs/rules.md`: Changing the limit), as `KeyedRateLimiter::set_limit` does.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] for 0; the limit is then unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let settings = Settings::new("keyed", 2, Duration::from_secs(1))?;
    /// let limiter = PlantedKeyedLimiter::new(KeyedPlantedBug::NeverReclaims, settings, ManualClock::new());
    /// assert!(limiter.try_acquire(7).is_ok());
    /// limiter.set_limit(1)?;
    /// assert!(limiter.try_acquire(7).is_err());
    /// assert!(limiter.try_acquire(8).is_ok());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn set_limit(&self, limit: u32) -> Result<(), ConfigError> {
        if limit == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        self.limit.store(limit, Ordering::SeqCst);
        Ok(())
    }

    /// The limit in force for `key`: its own, or the limiter's.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let settings = Settings::new("keyed", 2, Duration::from_secs(1))?;
    /// let limiter = PlantedKeyedLimiter::new(KeyedPlantedBug::NeverReclaims, settings, ManualClock::new());
    /// limiter.set_key_limit(7, Some(5))?;
    /// assert_eq!((limiter.key_limit(7), limiter.key_limit(8)), (5, 2));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn key_limit(&self, key: u64) -> u32 {
        match self.bug {
            // The bug: a key's own limit is never read.
            KeyedPlantedBug::DefaultLimitForOwnKey => self.limit(),
            _ => self.own.of(key).unwrap_or_else(|| self.limit()),
        }
    }

    /// Gives `key` a limit of its own (`Some`), or takes it away (`None`), at once and for
    /// its current window too, its count kept, as `KeyedRateLimiter::set_key_limit` and
    /// `clear_key_limit` do.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] for `Some(0)`; the key's limit is then unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};
    ///
    /// let settings = Settings::new("keyed", 1, Duration::from_secs(1))?;
    /// let limiter = PlantedKeyedLimiter::new(KeyedPlantedBug::NeverReclaims, settings, ManualClock::new());
    /// limiter.set_key_limit(7, Some(2))?;
    /// assert!(limiter.try_acquire(7).is_ok());
    /// assert!(limiter.try_acquire(7).is_ok());
    /// assert!(limiter.try_acquire(7).is_err());
    /// assert!(limiter.set_key_limit(7, Some(0)).is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn set_key_limit(&self, key: u64, limit: Option<u32>) -> Result<(), ConfigError> {
        self.own.set(key, limit)
    }

    fn for_key(&self, key: u64) -> ForKey<'_, C> {
        ForKey { limiter: self, key }
    }

    /// One attempt for `key` at `now` by a call whose deadline is `deadline`: take a turn at
    /// sweeping if one is due, then read the key's count (adding it if absent), decide, and
    /// claim; again if the claim lost to another caller or to a sweep.
    async fn attempt(
        &self,
        key: u64,
        now: u128,
        deadline: u128,
        n: u32,
        pause: &mut impl Pause,
    ) -> Decision {
        self.table.take_turn(&self.grid, now, self.bug);
        let own_key = key;
        let key = match self.bug {
            // The bug: every key claims from the same count.
            KeyedPlantedBug::SharedCount => 0,
            _ => key,
        };
        loop {
            let (slot, added) = self.table.slot(key);
            // The bug: the limit is read before the count, so the count can hold claims
            // decided under a limit set after the one this attempt decides under.
            let early =
                (self.bug == KeyedPlantedBug::LimitReadBeforeWord).then(|| self.key_limit(own_key));
            let seen = slot.load();
            let limit = early.unwrap_or_else(|| self.key_limit(own_key));
            // A count found in the table may be swept before the claim; one just added is
            // claimed at once, as its adder is the only one to know it yet.
            if self.bug.races_only() && !added {
                pause.between_read_and_write().await;
            }
            let Some(count) = seen else {
                self.table.remove_reclaimed(key, &slot);
                continue;
            };
            let decision = count.decide_n(&self.grid, limit, now, deadline, n);
            if !matches!(decision, Decision::Permit { .. }) {
                return decision;
            }
            let mut claimed = count;
            claimed.apply_n(decision, n);
            if slot.compare_exchange(seen, Some(claimed)) {
                return decision;
            }
            hint::spin_loop();
        }
    }
}

/// One key of a planted keyed limiter, as the waiting loop drives it.
struct ForKey<'a, C> {
    limiter: &'a PlantedKeyedLimiter<C>,
    key: u64,
}

impl<C: Clock> Steps for ForKey<'_, C> {
    type Clock = C;

    fn clock(&self) -> &C {
        &self.limiter.clock
    }

    fn deadline(&self, start: Instant) -> u128 {
        deadline(
            u128::from(start.as_nanos()),
            self.limiter.max_wait.as_nanos(),
        )
    }

    async fn attempt(&self, now: u128, deadline: u128, n: u32, pause: &mut impl Pause) -> Decision {
        self.limiter
            .attempt(self.key, now, deadline, n, pause)
            .await
    }
}

impl<C> fmt::Debug for PlantedKeyedLimiter<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlantedKeyedLimiter")
            .field("bug", &self.bug)
            .field("limit", &self.limit.load(Ordering::SeqCst))
            .field("grid", &self.grid)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}
