//! The planted limiter: one fixed-window algorithm, written once on the spec crate's grid and
//! decision, with each [`PlantedBug`] planted in the one place it breaks.

use core::fmt;
use core::num::NonZeroU128;
use core::time::Duration;

use fixed_window::{Clock, ConfigError, Instant, Peek, Settings};
use fixed_window_spec::{Count, Decision, Grid, NEVER, Peeked, deadline};

use crate::cell::{Cell, Window};
use crate::pause::Pause;
use crate::planted_bug::PlantedBug;
use crate::sync::atomic::{AtomicU32, Ordering};
use crate::sync::hint;

/// A fixed-window limiter with one [`PlantedBug`], its state in a [`Cell`] `S`, on clock `C`.
///
/// Everything but the bug is the spec crate's: the window in effect, the permit, the wait and
/// the rejection come from its [`Count`] on its [`Grid`], the deadline from its [`deadline`],
/// the waiting call from its [`Waiting`](fixed_window_spec::Waiting). So the only arithmetic of
/// its own is the bug's, and a checker that flags it has found the bug.
///
/// The state is read, then the limit, decided on, then written with a compare-and-set, retried
/// if another caller wrote in between; the racing bugs write otherwise. The limit can change
/// while callers claim ([`PlantedLimiter::set_limit`]).
///
/// # Examples
///
/// A limiter that carries over an unused permit grants three in a window of two.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ManualClock, Settings};
/// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
///
/// let clock = ManualClock::new();
/// let limiter: PlantedLimiter<Wide, _> =
///     PlantedLimiter::new(PlantedBug::CarryOver, Settings::new("api", 2, Duration::from_nanos(10))?, clock.clone());
/// assert!(limiter.try_acquire().is_ok());
/// clock.advance(Duration::from_nanos(10));
/// let granted = (0..3).filter(|_| limiter.try_acquire().is_ok()).count();
/// assert_eq!(granted, 3);
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub struct PlantedLimiter<S, C> {
    bug: PlantedBug,
    /// Permits per window, as [`PlantedLimiter::set_limit`] last put it.
    limit: AtomicU32,
    period: NonZeroU128,
    max_wait: Duration,
    /// The limiter's grid, numbered from the window holding the clock's reading when the
    /// limiter was made.
    grid: Grid,
    pub(crate) clock: C,
    state: S,
}

impl<S: Cell, C: Clock> PlantedLimiter<S, C> {
    /// A limiter with `bug`, `settings`' limit permits per period, excess calls waiting up
    /// to their max wait, on `clock`; its windows start at the clock's reading now.
    ///
    /// The settings are the real limiter's [`Settings`], so a configuration it refuses cannot
    /// reach here, and the rules of one are checked in one place.
    ///
    /// # Panics
    ///
    /// If the cell has no room for the limit or the clock's reading (see [`Packed`]).
    ///
    /// [`Packed`]: crate::Packed
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let settings = Settings::new("api", 3, Duration::from_secs(1))?;
    /// let limiter = PlantedLimiter::<Wide, _>::new(PlantedBug::CarryOver, settings, ManualClock::new());
    /// assert_eq!(limiter.try_acquire().map(|grant| grant.remaining), Ok(2));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn new(bug: PlantedBug, settings: Settings, clock: C) -> PlantedLimiter<S, C> {
        let origin = clock.now();
        PlantedLimiter::starting_at(bug, settings, clock, origin)
    }

    /// [`PlantedLimiter::new`], its windows aligned to `origin` (`Origin::At`) instead: a
    /// boundary of its grid, which has boundaries whole periods before it too.
    ///
    /// # Panics
    ///
    /// As [`PlantedLimiter::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let clock = ManualClock::new();
    /// let settings = Settings::new("api", 1, Duration::from_nanos(10))?;
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::starting_at(PlantedBug::CarryOver, settings, clock.clone(), Instant::from_nanos(4));
    /// assert!(limiter.try_acquire().is_ok());
    /// clock.set(Instant::from_nanos(14));
    /// assert!(limiter.try_acquire().is_ok());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn starting_at(
        bug: PlantedBug,
        settings: Settings,
        clock: C,
        origin: Instant,
    ) -> PlantedLimiter<S, C> {
        let reading = u128::from(clock.now().as_nanos());
        let grid = Grid::through(
            u128::from(origin.as_nanos()),
            false,
            nanos(settings.period()),
            reading,
        );
        PlantedLimiter::on_grid(bug, settings, clock, grid)
    }

    /// [`PlantedLimiter::new`], on `grid`, numbered from the window holding the clock's
    /// reading now (as [`Grid::through`] and [`Grid::unix`] number it); its period is the
    /// settings'.
    ///
    /// # Panics
    ///
    /// As [`PlantedLimiter::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::num::NonZeroU128;
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    /// use fixed_window_spec::Grid;
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(2));
    /// let settings = Settings::new("api", 1, Duration::from_nanos(10))?;
    /// // Boundaries 3 before the timeline's start and every 10 ns on: the first window ends at 7.
    /// let grid = Grid::through(3, true, NonZeroU128::new(10).expect("positive"), 2);
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::on_grid(PlantedBug::CarryOver, settings, clock.clone(), grid);
    /// assert!(limiter.try_acquire().is_ok());
    /// clock.set(Instant::from_nanos(7));
    /// assert!(limiter.try_acquire().is_ok());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn on_grid(
        bug: PlantedBug,
        settings: Settings,
        clock: C,
        grid: Grid,
    ) -> PlantedLimiter<S, C> {
        let limit = settings.limit();
        PlantedLimiter {
            bug,
            limit: AtomicU32::new(limit),
            period: nanos(settings.period()),
            max_wait: settings.max_wait(),
            grid,
            clock,
            state: S::new(Window::first(grid.start(0)), limit),
        }
    }

    /// The grid of the stored window `seen`: the limiter's, numbered from it, for a window on
    /// it (the first one included, cut at the timeline's start if it began before it); one
    /// starting at the window's start for a window started off it (`AdvanceFromNow`).
    fn stored_grid(&self, seen: &Window) -> Grid {
        if self.grid.start(self.grid.index_of(seen.start)) == seen.start {
            self.grid.numbered_from(seen.start)
        } else {
            Grid::new(seen.start, self.period)
        }
    }

    /// [`PlantedLimiter::new`], its windows at whole periods of Unix time
    /// (`Origin::UnixEpoch`), the clock's reading matched with [`Clock::unix_time`] as the
    /// rule says ([`Grid::unix`]); under [`PlantedBug::EpochOffByOnePeriod`], at the boundary
    /// after the reading instead; under [`PlantedBug::EpochNextBoundaryWhenYoung`], at the
    /// boundary after the reading if the one before it is before the clock's timeline.
    ///
    /// # Panics
    ///
    /// As [`PlantedLimiter::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let settings = Settings::new("api", 1, Duration::from_secs(1))?;
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::aligned_to_unix_time(PlantedBug::CarryOver, settings, ManualClock::new());
    /// assert!(limiter.try_acquire().is_ok());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn aligned_to_unix_time(
        bug: PlantedBug,
        settings: Settings,
        clock: C,
    ) -> PlantedLimiter<S, C> {
        let reading = u128::from(clock.now().as_nanos());
        let period = nanos(settings.period());
        let unix = clock.unix_time().as_nanos();
        let last = u128::from(Instant::MAX.as_nanos());
        let into = unix % period.get();
        // The boundary after the reading, or the reading if that is past the timeline's end:
        // window 0 starts there, and readings before it belong to it.
        let after = || {
            let after = reading.saturating_add(period.get() - into);
            Grid::new(if after > last { reading } else { after }, period)
        };
        let grid = match bug {
            // Rounds up to the next boundary where the rule rounds down.
            PlantedBug::EpochOffByOnePeriod => after(),
            // Rounds up where the boundary before is not a reading of the clock.
            PlantedBug::EpochNextBoundaryWhenYoung if into > reading => after(),
            _ => Grid::unix(reading, period, unix),
        };
        PlantedLimiter::on_grid(bug, settings, clock, grid)
    }

    /// The planted bug.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::Overcount, Settings::new("api", 1, Duration::from_secs(1))?, ManualClock::new());
    /// assert_eq!(limiter.bug(), PlantedBug::Overcount);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn bug(&self) -> PlantedBug {
        self.bug
    }

    /// The clock the limiter reads and sleeps on.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(3));
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::Overcount, Settings::new("api", 1, Duration::from_secs(1))?, clock);
    /// assert_eq!(limiter.clock().now(), Instant::from_nanos(3));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The deadline of a waiting call that starts at `start`.
    pub(crate) fn deadline(&self, start: Instant) -> u128 {
        if self.bug == PlantedBug::OverflowPanic {
            // The bug: conversions and a sum that panic near the end of the timeline.
            let wait = u64::try_from(self.max_wait.as_nanos()).expect("max wait overflowed");
            let end = start
                .as_nanos()
                .checked_add(wait)
                .expect("deadline overflowed");
            return u128::from(end);
        }
        deadline(u128::from(start.as_nanos()), self.max_wait.as_nanos())
    }

    /// One attempt for `n` permits at `now` by a call whose deadline is `deadline`: read the
    /// state, decide, write the claim; again if the claim lost a race. A racing bug lets
    /// `pause` in between the read and the write.
    pub(crate) async fn attempt(
        &self,
        now: u128,
        deadline: u128,
        n: u32,
        pause: &mut impl Pause,
    ) -> Decision {
        loop {
            // The bug: the limit is read before the state, so the state can hold claims
            // decided under a limit set after the one this attempt decides under.
            let early = (self.bug == PlantedBug::LimitReadBeforeWord).then(|| self.limit());
            let seen = self.state.load();
            let limit = early.unwrap_or_else(|| self.limit());
            if self.bug.races_only() {
                pause.between_read_and_write().await;
            }
            if let Some(decision) = self.settle(seen, limit, now, deadline, n) {
                return decision;
            }
            hint::spin_loop();
        }
    }

    /// The decision for `n` permits on the state as read (`seen`) under `limit`, read after
    /// it, with the claim of its permits written; `None` if the claim lost a race.
    fn settle(
        &self,
        seen: Window,
        limit: u32,
        now: u128,
        deadline: u128,
        n: u32,
    ) -> Option<Decision> {
        // The stored window is window 0 of a grid anchored at its start. For a window on the
        // limiter's grid that is the limiter's grid from there on; a window started off it
        // (`AdvanceFromNow`) carries its own.
        let grid = self.stored_grid(&seen);
        let at = match self.bug {
            // The bug: the stored window's end still belongs to it.
            PlantedBug::BoundaryOffByOne if grid.end(0) == Some(now) => now - 1,
            _ => now,
        };
        let (index, used) = Count::stored(0, seen.used).at(&grid, at);
        let extra = match (index, self.bug) {
            (0, _) => seen.extra,
            // The bug: the next window inherits what this one left unused.
            (1, PlantedBug::CarryOver) => (limit.saturating_add(seen.extra))
                .saturating_sub(seen.used)
                .min(limit),
            _ => 0,
        };
        let capacity = match self.bug {
            // The bug: one permit short (the limit is at least one).
            PlantedBug::FalseRejection => limit - 1,
            _ => limit.saturating_add(extra),
        };
        let deadline = match self.bug {
            // The bug: a window up to a period late is still worth the wait.
            PlantedBug::DeadlineOvershoot => deadline.saturating_add(self.period.get()),
            _ => deadline,
        };
        let count = Count::stored(index, used);
        let decision = if n > limit {
            Decision::TooMany { limit }
        } else if n > capacity {
            // Room a bug took away: the window is full to this call, not too small for it.
            count.when_full(&grid, at, deadline)
        } else {
            count.decide_n(&grid, capacity, at, deadline, n)
        };
        let full = !matches!(decision, Decision::Permit { .. });
        if self.bug == PlantedBug::OverflowPanic && full {
            // The bug: the next window's start as a sum that panics past the end of time.
            let start = u64::try_from(grid.start(index)).unwrap_or(u64::MAX);
            let period = u64::try_from(self.period.get()).unwrap_or(u64::MAX);
            start.checked_add(period).expect("next window overflowed");
        }
        // Zero permits are granted without writing anything.
        if full || n == 0 {
            return Some(decision);
        }
        let start = match (index, self.bug) {
            (0, _) => seen.start,
            // The bug: the new window starts at the reading, off the grid.
            (_, PlantedBug::AdvanceFromNow) => now,
            _ => grid.start(index),
        };
        let counted = match self.bug {
            // The bug: however many permits were asked for, one is counted.
            PlantedBug::WeightCountedAsOne => 1,
            _ => n,
        };
        match self.claim(seen, Window { start, used, extra }, counted) {
            Claim::Won => Some(decision),
            Claim::Counted { before } => Some(Decision::Permit {
                index,
                remaining: capacity.saturating_sub(before.used.saturating_add(1)),
            }),
            // The bug: a lost race taken for a full window.
            Claim::Lost if self.bug == PlantedBug::GiveUpOnLostRace => Some(Decision::Reject {
                retry_after: grid.end(index).map_or(NEVER, |end| end.saturating_sub(now)),
            }),
            Claim::Lost => None,
        }
    }

    /// Writes the claim of `n` permits in `current`, the window in effect as read in `seen`.
    fn claim(&self, seen: Window, current: Window, n: u32) -> Claim {
        let claimed = Window {
            used: current.used + n,
            ..current
        };
        match self.bug {
            PlantedBug::LostUpdate => {
                // The bug: a plain write over whatever another caller wrote since the read.
                self.state.store(claimed);
                Claim::Won
            }
            // The bug's separate add counts one permit: a weighted claim takes the correct path.
            PlantedBug::Overcount if n == 1 => {
                // The bug: the check was on the read; the count goes up regardless.
                if current != seen && !self.state.compare_exchange(seen, current) {
                    return Claim::Lost;
                }
                Claim::Counted {
                    before: self.state.add_one(),
                }
            }
            _ if self.state.compare_exchange(seen, claimed) => Claim::Won,
            _ => Claim::Lost,
        }
    }
}

impl<S: Cell, C: Clock> PlantedLimiter<S, C> {
    /// What the window in effect has left under the limit and the time to its end, taking
    /// nothing (`docs/rules.md`: Peeking), as `RateLimiter::peek` answers; under
    /// [`PlantedBug::PeekFromStaleWindow`], from the stored window even once it has ended.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedBug, PlantedLimiter, Wide};
    ///
    /// let clock = ManualClock::new();
    /// let settings = Settings::new("api", 2, Duration::from_nanos(10))?;
    /// let limiter: PlantedLimiter<Wide, _> = PlantedLimiter::new(PlantedBug::CarryOver, settings, clock.clone());
    /// assert!(limiter.try_acquire().is_ok());
    /// clock.advance(Duration::from_nanos(3));
    /// assert_eq!((limiter.peek().remaining(), limiter.peek().resets_in()), (1, Duration::from_nanos(7)));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn peek(&self) -> Peek {
        let now = u128::from(self.clock.now().as_nanos());
        let seen = self.state.load();
        let limit = self.limit();
        let grid = self.stored_grid(&seen);
        let (index, used) = match self.bug {
            // The bug: the stored window is taken for the one in effect, though it has ended.
            PlantedBug::PeekFromStaleWindow => (0, seen.used),
            _ => Count::stored(0, seen.used).at(&grid, now),
        };
        let extra = if index == 0 { seen.extra } else { 0 };
        let remaining = limit.saturating_add(extra).saturating_sub(used);
        let resets_in = grid.end(index).map_or(NEVER, |end| end.saturating_sub(now));
        Peek::new(
            remaining,
            limit,
            u64::try_from(resets_in).map_or(Duration::MAX, Duration::from_nanos),
        )
    }

    /// Drains the window in effect now: it counts as full until it ends (`docs/rules.md`:
    /// Draining). Returns the time from the reading until the window holding it ends,
    /// `Duration::MAX` if none follows it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let clock = ManualClock::new();
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::CarryOver, Settings::new("api", 2, Duration::from_nanos(10))?, clock.clone());
    /// clock.advance(Duration::from_nanos(3));
    /// assert_eq!(limiter.drain(), Duration::from_nanos(7));
    /// assert!(limiter.try_acquire().is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn drain(&self) -> Duration {
        let now = u128::from(self.clock.now().as_nanos());
        loop {
            let seen = self.state.load();
            let limit = self.limit();
            let grid = self.stored_grid(&seen);
            let (index, used) = Count::stored(0, seen.used).at(&grid, now);
            let (start, extra) = match index {
                0 => (seen.start, seen.extra),
                _ => (grid.start(index), 0),
            };
            let capacity = limit.saturating_add(extra);
            // A drain never lowers the count, which a lowered limit can leave above it.
            let used = match self.bug {
                // The bug: one permit is left behind.
                PlantedBug::DrainLeavesOne => used.max(capacity - 1),
                _ => used.max(capacity),
            };
            if self
                .state
                .compare_exchange(seen, Window { start, used, extra })
            {
                break;
            }
            hint::spin_loop();
        }
        let grid = self.grid;
        let end = grid.end(grid.index_of(now)).map_or(NEVER, |end| end - now);
        u64::try_from(end).map_or(Duration::MAX, Duration::from_nanos)
    }
}

impl<S: Cell, C> PlantedLimiter<S, C> {
    /// Permits per window, as now in force.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::CarryOver, Settings::new("api", 3, Duration::from_secs(1))?, ManualClock::new());
    /// assert_eq!(limiter.limit(), 3);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limit(&self) -> u32 {
        self.limit.load(Ordering::SeqCst)
    }

    /// Puts `limit` permits per window in force at once, the current window's count kept
    /// (`docs/rules.md`: Changing the limit), as `RateLimiter::set_limit` does.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] for 0, [`ConfigError::LimitAboveCeiling`] above what the
    /// cell counts ([`Cell::ceiling`]); the limit is then unchanged.
    ///
    /// # Examples
    ///
    /// Two of three permits taken; lowered to two, the window is full.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::CarryOver, Settings::new("api", 3, Duration::from_secs(1))?, ManualClock::new());
    /// assert!(limiter.try_acquire_n(2).is_ok());
    /// limiter.set_limit(2)?;
    /// assert!(limiter.try_acquire().is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn set_limit(&self, limit: u32) -> Result<(), ConfigError> {
        let ceiling = self.limit_ceiling();
        if limit == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        if limit > ceiling {
            return Err(ConfigError::LimitAboveCeiling { limit, ceiling });
        }
        self.limit.store(limit, Ordering::SeqCst);
        if self.bug == PlantedBug::LimitChangeAppliedToPastWindow {
            // The bug: the window's count is closed as a past window's would be, and the
            // window grants the new limit afresh on top of what it granted.
            loop {
                let seen = self.state.load();
                let closed = Window {
                    used: 0,
                    extra: 0,
                    ..seen
                };
                if self.state.compare_exchange(seen, closed) {
                    break;
                }
                hint::spin_loop();
            }
        }
        Ok(())
    }

    /// The largest limit [`set_limit`](PlantedLimiter::set_limit) takes: what the cell counts
    /// up to.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::CarryOver, Settings::new("api", 3, Duration::from_secs(1))?, ManualClock::new());
    /// assert_eq!(limiter.limit_ceiling(), u32::MAX);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limit_ceiling(&self) -> u32 {
        self.state.ceiling()
    }
}

/// How a claim went.
enum Claim {
    /// The permit is taken as decided.
    Won,
    /// Another caller wrote since the read.
    Lost,
    /// The count was raised from `before`, whatever it had become.
    Counted {
        /// The window as it was just before the raise.
        before: Window,
    },
}

impl<S, C> fmt::Debug for PlantedLimiter<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlantedLimiter")
            .field("bug", &self.bug)
            .field("limit", &self.limit.load(Ordering::SeqCst))
            .field("period", &self.period)
            .field("max_wait", &self.max_wait)
            .finish_non_exhaustive()
    }
}

/// `period` in nanoseconds, positive since [`Settings`] checked it.
pub(crate) fn nanos(period: Duration) -> NonZeroU128 {
    // The fallback is never taken: a settings' period is positive.
    NonZeroU128::new(period.as_nanos()).unwrap_or(NonZeroU128::MIN)
}

/// The spec's answer to a peek as the limiters give it, under `limit`.
pub(crate) fn peek_of(peeked: Peeked, limit: u32) -> Peek {
    let resets_in = u64::try_from(peeked.resets_in).map_or(Duration::MAX, Duration::from_nanos);
    Peek::new(peeked.remaining, limit, resets_in)
}
