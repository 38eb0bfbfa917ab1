//! Where the limiter reads time and how it sleeps: the [`Clock`] trait and the two clocks that
//! ship with the crate.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::time::Duration;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::instant::{Instant, saturating_nanos};
use crate::interrupt::{Interrupt, Interrupted};
use crate::sync::Arc;
use crate::sync::atomic::{AtomicU64, Ordering};

/// The future a clock returns from [`Clock::sleep_async`].
///
/// Boxed so that `Clock` stays object-safe and a clock can be chosen at run time; the box is
/// only allocated when a call actually has to wait, never on the permit or rejection path.
pub type Sleep<'a> = Pin<Box<dyn Future<Output = Result<(), Interrupted>> + Send + 'a>>;

/// A source of time for a [`RateLimiter`](crate::RateLimiter), and the way its waiting calls
/// sleep.
///
/// The limiter reads [`now`](Clock::now) once per attempt and never assumes that readings
/// increase: a clock that stands still or steps backwards is handled without panicking (see
/// the crate documentation). Sleeping is part of the clock so that a virtual clock makes waits
/// free and deterministic.
///
/// # Examples
///
/// A clock that always reads the same instant and refuses to sleep.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Clock, Instant, Interrupt, Interrupted, RateLimiter, Sleep};
///
/// #[derive(Debug)]
/// struct Frozen;
///
/// impl Clock for Frozen {
///     fn now(&self) -> Instant {
///         Instant::from_nanos(1_000)
///     }
///     fn sleep(&self, _: Duration, _: &Interrupt) -> Result<(), Interrupted> {
///         Err(Interrupted)
///     }
///     fn sleep_async(&self, _: Duration) -> Sleep<'_> {
///         Box::pin(async { Err(Interrupted) })
///     }
/// }
///
/// let limiter = RateLimiter::of("frozen", 1, Duration::from_secs(1))?.with_clock(Frozen);
/// assert!(limiter.try_acquire().is_ok());
/// assert!(limiter.try_acquire().is_err());
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub trait Clock: Send + Sync {
    /// The current instant on this clock's timeline.
    fn now(&self) -> Instant;

    /// Blocks the calling thread for `duration` of this clock's time.
    ///
    /// A clock that really sleeps should wake early when `interrupt` is interrupted (see
    /// [`Interrupt::wait_timeout`]). Waking early without an interruption is allowed: the
    /// limiter reads the clock again after every sleep.
    ///
    /// # Errors
    ///
    /// [`Interrupted`] if the wait was interrupted; the limiter then fails the call with
    /// [`RateLimiterError::Interrupted`](crate::RateLimiterError::Interrupted).
    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted>;

    /// A future that completes after `duration` of this clock's time.
    ///
    /// Dropping the future cancels the wait. It may also resolve to `Err(Interrupted)` if the
    /// clock has a way to interrupt asynchronous waits.
    fn sleep_async(&self, duration: Duration) -> Sleep<'_>;

    /// How long after the Unix epoch (1970-01-01T00:00:00Z) this clock's reading is now: the
    /// one moment a limiter built with [`Origin::UnixEpoch`](crate::Origin::UnixEpoch) matches
    /// with [`now`](Clock::now) to align its windows. The system's wall clock by default (zero
    /// if it reads before 1970); a clock of its own timeline, a test's or a simulation's, says
    /// what Unix time its readings stand for.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, Interrupt, Interrupted, Origin, RateLimiter, Sleep};
    ///
    /// /// Reads 10 s, which it says is 25 s into a minute of Unix time.
    /// struct At10;
    ///
    /// impl Clock for At10 {
    ///     fn now(&self) -> Instant {
    ///         Instant::from_nanos(10_000_000_000)
    ///     }
    ///     fn sleep(&self, _: Duration, _: &Interrupt) -> Result<(), Interrupted> {
    ///         Err(Interrupted)
    ///     }
    ///     fn sleep_async(&self, _: Duration) -> Sleep<'_> {
    ///         Box::pin(async { Err(Interrupted) })
    ///     }
    ///     fn unix_time(&self) -> Duration {
    ///         Duration::from_secs(1_800_000_025)
    ///     }
    /// }
    ///
    /// // The minute began 25 s before the reading, before the clock's timeline started (at
    /// // -15 s): the first window counts from the timeline's start and ends with that minute,
    /// // 35 s on (at 45 s), as in every process whatever its age.
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(60))?
    ///     .clock(At10)
    ///     .origin(Origin::UnixEpoch)
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// let err = limiter.try_acquire().unwrap_err();
    /// assert_eq!(err.retry_after(), Duration::from_secs(35));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn unix_time(&self) -> Duration {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now(&self) -> Instant {
        (**self).now()
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        (**self).sleep(duration, interrupt)
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        (**self).sleep_async(duration)
    }

    fn unix_time(&self) -> Duration {
        (**self).unix_time()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Instant {
        (**self).now()
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        (**self).sleep(duration, interrupt)
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        (**self).sleep_async(duration)
    }

    fn unix_time(&self) -> Duration {
        (**self).unix_time()
    }
}

/// The default clock: the processor's time-stamp counter, calibrated to nanoseconds, or the
/// operating system's monotonic clock where there is no usable counter.
///
/// The clock read is most of the cost of the permit path, so the default is the cheapest
/// monotonic source there is: `quanta` reads the invariant TSC on x86-64 (the `permit`
/// benchmarks measure it against `std::time::Instant::now()`) and falls back to the OS clock
/// elsewhere. The first `SystemClock` read in a process calibrates
/// the counter once (milliseconds at most).
///
/// Its epoch is that first read, so readings start near zero and [`Instant::MAX`] is
/// centuries away; every `SystemClock` in the process shares it. Blocking sleeps wait on the
/// [`Interrupt`] handle, so they wake at once when interrupted; asynchronous sleeps use a
/// runtime-independent timer (`futures-timer`), so `call_async` works under any executor.
///
/// # Examples
///
/// Readings never go backwards.
///
/// ```
/// use fixed_window::{Clock, SystemClock};
///
/// let clock = SystemClock;
/// let (a, b) = (clock.now(), clock.now());
/// assert!(a <= b);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

/// Timers further out than this are cut to it; the limiter re-reads the clock after a sleep
/// and sleeps again if it woke early, and `std::time::Instant` arithmetic panics on overflow.
const LONGEST_REAL_SLEEP: Duration = Duration::from_secs(60 * 60 * 24 * 365);

/// The process-wide counter and its reading at the epoch.
#[inline]
fn counter() -> &'static (quanta::Clock, u64) {
    static COUNTER: OnceLock<(quanta::Clock, u64)> = OnceLock::new();
    COUNTER.get_or_init(|| {
        let clock = quanta::Clock::new();
        let epoch = clock.raw();
        (clock, epoch)
    })
}

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Instant {
        let (clock, epoch) = counter();
        // Scaling the raw delta costs a multiply and a shift; a reading from a core whose
        // counter lags the epoch's yields zero rather than wrapping.
        Instant::from_nanos(clock.delta_as_nanos(*epoch, clock.raw()))
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        interrupt.wait_timeout(duration.min(LONGEST_REAL_SLEEP))
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        let delay = futures_timer::Delay::new(duration.min(LONGEST_REAL_SLEEP));
        Box::pin(async move {
            delay.await;
            Ok(())
        })
    }
}

/// A clock that moves only when told to, for tests; clones share one time.
///
/// [`advance`](ManualClock::advance) and [`set`](ManualClock::set) move it (`set` may move it
/// backwards, to test that case). Its [Unix time](Clock::unix_time) is manual too: the Unix
/// time of its zero reading, fixed when it is made (the Unix epoch itself, unless made with
/// [`at_unix_time`](ManualClock::at_unix_time)), plus its reading, so it moves with the clock
/// and a limiter aligned to [`Origin::UnixEpoch`](crate::Origin::UnixEpoch) on it is as
/// deterministic as any other. Sleeping never blocks: a sleep of `d` moves the clock to
/// at least the reading at the start of the sleep plus `d`, so a test that makes calls wait
/// runs instantly and ends at the time the wait would have ended. An interrupted
/// [`Interrupt`] makes its sleep fail without moving the clock.
///
/// # Thread safety
///
/// The time is one atomic word. Concurrent sleeps each move the clock forward to their own
/// wake-up time at least (never beyond the latest of them), so threads sharing a manual clock
/// see it only move forward unless `set` moves it back.
///
/// # Examples
///
/// A waiting call on a manual clock returns at once, at the start of the next window.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Clock, Instant, ManualClock, RateLimiter};
///
/// let clock = ManualClock::new();
/// let limiter = RateLimiter::of("api", 1, Duration::from_secs(10))?
///     .with_max_wait(Duration::from_secs(60))
///     .with_clock(clock.clone());
/// limiter.acquire()?;
/// limiter.acquire()?;
/// assert_eq!(clock.now(), Instant::from_nanos(10_000_000_000));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
    /// The Unix time the reading [`Instant::ZERO`] stands for; a reading `t` stands for this
    /// plus `t`. Fixed at construction, so clones agree on it as they agree on the time.
    unix_at_zero: Duration,
}

impl ManualClock {
    /// A manual clock reading [`Instant::ZERO`], which stands for the Unix epoch: its
    /// [`unix_time`](Clock::unix_time) is its reading.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// assert_eq!((clock.now(), clock.unix_time()), (Instant::ZERO, Duration::ZERO));
    /// ```
    pub fn new() -> ManualClock {
        ManualClock::starting_at(Instant::ZERO)
    }

    /// A manual clock reading [`Instant::ZERO`], which stands for `unix` after the Unix
    /// epoch: its [`unix_time`](Clock::unix_time) is `unix` plus its reading, moving with it
    /// (forwards and backwards), never with the real wall clock.
    ///
    /// # Examples
    ///
    /// A limiter aligned to whole minutes of Unix time, made 50 s into a minute: its first
    /// window ends 10 s later, on every run.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, ManualClock, Origin, RateLimiter};
    ///
    /// let clock = ManualClock::at_unix_time(Duration::from_secs(1_800_000_050));
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(60))?
    ///     .clock(clock.clone())
    ///     .origin(Origin::UnixEpoch)
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(limiter.try_acquire().unwrap_err().retry_after(), Duration::from_secs(10));
    /// clock.advance(Duration::from_secs(10));
    /// assert_eq!(clock.unix_time(), Duration::from_secs(1_800_000_060));
    /// assert!(limiter.try_acquire().is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn at_unix_time(unix: Duration) -> ManualClock {
        ManualClock {
            nanos: Arc::new(AtomicU64::new(0)),
            unix_at_zero: unix,
        }
    }

    /// A manual clock reading `start`, which stands for `start` after the Unix epoch (as
    /// every reading of [`new`](ManualClock::new)'s clock does).
    ///
    /// # Examples
    ///
    /// A clock that starts a second before the end of time.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, ManualClock};
    ///
    /// let start = Instant::MAX.saturating_sub(Duration::from_secs(1));
    /// assert_eq!(ManualClock::starting_at(start).now(), start);
    /// ```
    pub fn starting_at(start: Instant) -> ManualClock {
        ManualClock {
            nanos: Arc::new(AtomicU64::new(start.as_nanos())),
            unix_at_zero: Duration::ZERO,
        }
    }

    /// Moves the clock forward by `d`, stopping at [`Instant::MAX`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// clock.advance(Duration::from_nanos(5));
    /// clock.advance(Duration::MAX);
    /// assert_eq!(clock.now(), Instant::MAX);
    /// ```
    pub fn advance(&self, d: Duration) {
        let step = saturating_nanos(d);
        self.update(|now| now.saturating_add(step));
    }

    /// Sets the clock to `t`, forwards or backwards.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::{Clock, Instant, ManualClock};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(100));
    /// clock.set(Instant::from_nanos(40));
    /// assert_eq!(clock.now(), Instant::from_nanos(40));
    /// ```
    pub fn set(&self, t: Instant) {
        self.nanos.store(t.as_nanos(), Ordering::SeqCst);
    }

    fn update(&self, f: impl Fn(u64) -> u64) {
        let mut current = self.nanos.load(Ordering::SeqCst);
        loop {
            match self.nanos.compare_exchange_weak(
                current,
                f(current),
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    fn sleep_now(&self, duration: Duration) {
        let wake = self
            .nanos
            .load(Ordering::SeqCst)
            .saturating_add(saturating_nanos(duration));
        self.update(|now| now.max(wake));
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::from_nanos(self.nanos.load(Ordering::SeqCst))
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        if interrupt.is_interrupted() {
            return Err(Interrupted);
        }
        self.sleep_now(duration);
        Ok(())
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        // Time moves when the future is first polled, not when it is made, so a wait that is
        // dropped unpolled leaves the clock alone.
        Box::pin(async move {
            self.sleep_now(duration);
            Ok(())
        })
    }

    /// The Unix time of the zero reading plus the reading: set by hand, never the real wall
    /// clock, so that epoch alignment replays exactly.
    fn unix_time(&self) -> Duration {
        self.unix_at_zero
            .saturating_add(Duration::from_nanos(self.now().as_nanos()))
    }
}

#[expect(
    clippy::missing_fields_in_debug,
    reason = "`nanos` is shown as `now`, the reading it holds"
)]
impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now", &self.now())
            .field("unix_at_zero", &self.unix_at_zero)
            .finish()
    }
}
