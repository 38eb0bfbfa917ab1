//! The rate limiter: its configuration and operations, over one state word (the waiting loops
//! it shares with the keyed limiter are in `waiting.rs`).

use core::fmt;
use core::future::IntoFuture;
use core::time::Duration;

use crate::attempt::Attempt;
use crate::backoff::Backoff;
use crate::builder::{Builder, LimiterBuilder, PlainOptions};
use crate::clock::{Clock, SystemClock};
use crate::error::{ConfigError, RateLimiterError};
use crate::event::RateLimiterEvent;
use crate::instant::Instant;
use crate::interrupt::Interrupt;
use crate::permit::Permit;
use crate::policy::Policy;
use crate::rejection::Rejection;
use crate::settings::Settings;
use crate::state::State;
use crate::waiting;
use crate::weight::One;

mod drain;
mod limit;
mod peek;
mod weighted;

/// A fixed-window rate limiter: at most `limit` calls start per `period`, in windows aligned
/// to the limiter's creation on its clock.
///
/// One limiter is one shared budget: share it by reference or behind an `Arc`, and every
/// caller competes for the same window. See the [crate documentation](crate) for the rules.
///
/// # Configuration
///
/// Made with [`builder`](RateLimiter::builder) (or [`of`](RateLimiter::of)); each setting is
/// described once, on the builder's setter of the same name ([`LimiterBuilder`]), and its
/// rules live in [`Settings`]. Each `with_*` is a shorthand for building a new limiter from
/// this one's configuration with one setting changed: like a newly created limiter, its window
/// starts afresh at the clock's reading now, and its used permits are forgotten. To change
/// several settings, the builder reads the clock once instead of once per `with_*`.
///
/// # Examples
///
/// Two permits per second; the third call in the same second is rejected, and the next
/// second starts afresh.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ManualClock, RateLimiter};
///
/// let clock = ManualClock::new();
/// let limiter = RateLimiter::builder("search", 2, Duration::from_secs(1))?
///     .clock(clock.clone())
///     .build();
/// assert_eq!(limiter.call(|| 1 + 1), Ok(2));
/// assert!(limiter.call(|| ()).is_ok());
/// assert!(limiter.call(|| ()).is_err());
/// clock.advance(Duration::from_secs(1));
/// assert!(limiter.call(|| ()).is_ok());
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub struct RateLimiter<C = SystemClock> {
    pub(crate) policy: Policy,
    /// The one state word every caller competes for.
    pub(crate) state: State,
    pub(crate) clock: C,
}

impl RateLimiter<SystemClock> {
    /// The configuration of a limiter named `name` allowing `limit` calls per `period`: set
    /// the optional settings ([`max_wait`](LimiterBuilder::max_wait),
    /// [`listener`](Builder#method.listener), [`clock`](LimiterBuilder::clock),
    /// [`backoff`](LimiterBuilder::backoff)), then [`build`](Builder#method.build) it. The
    /// clock is read once, by `build`.
    ///
    /// `name` is `&'static str` because the specification requires a static,
    /// compile-time-known name: it keys metrics and logs, whose cardinality must stay bounded.
    /// [`Settings`] made elsewhere give a builder too: `Builder::from(settings)`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0, [`ConfigError::ZeroPeriod`] if `period` is
    /// zero.
    ///
    /// # Examples
    ///
    /// One permit per second on a manual clock; a second call in the same second waits for
    /// the next window, since it may wait up to two seconds.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .max_wait(Duration::from_secs(2))
    ///     .clock(ManualClock::new())
    ///     .build();
    /// limiter.acquire()?;
    /// assert_eq!(limiter.acquire()?.at(), Instant::from_nanos(1_000_000_000));
    /// assert_eq!(
    ///     RateLimiter::builder("api", 0, Duration::from_secs(1)).unwrap_err(),
    ///     ConfigError::ZeroLimit
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(
        name: &'static str,
        limit: u32,
        period: Duration,
    ) -> Result<Builder<SystemClock>, ConfigError> {
        Settings::new(name, limit, period).map(Builder::from)
    }

    /// A limiter named `name` allowing `limit` calls per `period`, on the system clock,
    /// rejecting excess calls at once: shorthand for `builder(name, limit, period)?.build()`.
    ///
    /// It reads the system clock (the first read in a process calibrates it) to start its
    /// window; a limiter meant for another clock is better made with
    /// [`builder`](RateLimiter::builder), which reads only the clock it is given. `name` is
    /// `&'static str`: the specification requires a static, compile-time-known name, since it
    /// keys metrics and logs whose cardinality must stay bounded.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0, [`ConfigError::ZeroPeriod`] if `period` is
    /// zero.
    ///
    /// # Examples
    ///
    /// The configuration reads back as given.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::RateLimiter;
    ///
    /// let limiter = RateLimiter::of("api", 100, Duration::from_secs(1))?;
    /// assert_eq!(
    ///     (limiter.name(), limiter.limit(), limiter.period(), limiter.max_wait()),
    ///     ("api", 100, Duration::from_secs(1), Duration::ZERO)
    /// );
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn of(
        name: &'static str,
        limit: u32,
        period: Duration,
    ) -> Result<RateLimiter<SystemClock>, ConfigError> {
        RateLimiter::builder(name, limit, period).map(Builder::build)
    }
}

impl<C> RateLimiter<C> {
    /// This limiter's configuration, to build a new limiter from: every `with_*` goes through
    /// here, so it behaves as creating a new limiter, its window starting afresh.
    fn into_builder(self) -> Builder<C> {
        LimiterBuilder {
            settings: self.policy.current_settings(),
            options: PlainOptions {
                listeners: self.policy.listeners,
            },
            clock: self.clock,
            backoff: self.policy.budget.backoff(),
            origin: self.policy.origin,
        }
    }
}

impl<C: Clock> RateLimiter<C> {
    /// This limiter with `limit` calls per period (see [`LimiterBuilder::limit`]), its window
    /// starting afresh (see [Configuration](RateLimiter#configuration)).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_limit(50)?;
    /// assert_eq!(limiter.limit(), 50);
    /// assert_eq!(limiter.with_limit(0).unwrap_err(), ConfigError::ZeroLimit);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_limit(self, limit: u32) -> Result<Self, ConfigError> {
        self.into_builder().limit(limit).map(Builder::build)
    }

    /// This limiter with windows `period` long (see [`LimiterBuilder::period`]), its window
    /// starting afresh (see [Configuration](RateLimiter#configuration)).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroPeriod`] if `period` is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_period(Duration::from_millis(250))?;
    /// assert_eq!(limiter.period(), Duration::from_millis(250));
    /// assert_eq!(limiter.with_period(Duration::ZERO).unwrap_err(), ConfigError::ZeroPeriod);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_period(self, period: Duration) -> Result<Self, ConfigError> {
        self.into_builder().period(period).map(Builder::build)
    }

    /// This limiter letting an excess call wait up to `max_wait` for a later window (see
    /// [`LimiterBuilder::max_wait`]), its window starting afresh (see
    /// [Configuration](RateLimiter#configuration)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(5));
    /// assert_eq!(limiter.max_wait(), Duration::from_secs(5));
    /// limiter.acquire()?;
    /// assert_eq!(limiter.acquire()?.at(), Instant::from_nanos(1_000_000_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_max_wait(self, max_wait: Duration) -> Self {
        self.into_builder().max_wait(max_wait).build()
    }

    /// This limiter with `listener` also receiving every [`RateLimiterEvent`] (see
    /// [`Builder::listener`](Builder#method.listener)), its window starting afresh (see
    /// [Configuration](RateLimiter#configuration)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::{Arc, Mutex};
    /// use fixed_window::{ManualClock, RateLimiter, RateLimiterEvent};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let limiter = RateLimiter::of("api", 3, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_listener(move |event| log.lock().unwrap().push(*event));
    /// assert!(limiter.try_acquire().is_ok());
    /// assert!(matches!(
    ///     seen.lock().unwrap()[..],
    ///     [RateLimiterEvent::Permitted { remaining: 2, .. }]
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_listener(
        self,
        listener: impl Fn(&RateLimiterEvent) + Send + Sync + 'static,
    ) -> Self {
        self.into_builder().listener(listener).build()
    }

    /// This limiter reading time from, and sleeping through, `clock` (see
    /// [`LimiterBuilder::clock`]); its first window starts at `clock.now()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, ManualClock, RateLimiter};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(500));
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(clock);
    /// assert_eq!(limiter.acquire()?.at(), Instant::from_nanos(500));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_clock<D: Clock>(self, clock: D) -> RateLimiter<D> {
        self.into_builder().clock(clock).build()
    }

    /// This limiter with `backoff` governing retries after a lost compare-and-set (see
    /// [`LimiterBuilder::backoff`]), its window starting afresh (see
    /// [Configuration](RateLimiter#configuration)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Backoff, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_backoff(Backoff::new(0));
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
    /// let limiter = fixed_window::RateLimiter::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(limiter.name(), "api");
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn name(&self) -> &'static str {
        self.policy.settings.name
    }

    /// Permits per window, as now in force (see [`set_limit`](RateLimiter::set_limit)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let limiter = fixed_window::RateLimiter::of("api", 7, Duration::from_secs(1))?;
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
    /// let limiter = fixed_window::RateLimiter::of("api", 1, Duration::from_millis(10))?;
    /// assert_eq!(limiter.period(), Duration::from_millis(10));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn period(&self) -> Duration {
        self.policy.settings.period
    }

    /// How long an excess call may wait for a later window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let limiter = fixed_window::RateLimiter::of("api", 1, Duration::from_secs(1))?;
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
    /// use fixed_window::{Backoff, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(limiter.backoff(), Backoff::default());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn backoff(&self) -> Backoff {
        self.policy.budget.backoff()
    }

    /// How many compare-and-set attempts on the state word lost to another caller and were
    /// retried, since this limiter was made (feature `stats`).
    ///
    /// A relaxed counter bumped only on a lost race, so the uncontended paths pay nothing;
    /// the contention benchmarks report it per operation.
    ///
    /// # Examples
    ///
    /// A single thread never loses a race.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::RateLimiter;
    ///
    /// let limiter = RateLimiter::of("api", 10, Duration::from_secs(1))?;
    /// for _ in 0..20 {
    ///     let _ = limiter.try_acquire();
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
    /// use fixed_window::{Clock, Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// limiter.clock().advance(Duration::from_nanos(3));
    /// assert_eq!(limiter.clock().now(), Instant::from_nanos(3));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The deadline of a call that starts at `start`: `start + max_wait`, clamped to
    /// [`Instant::MAX`], which no wait can reach past.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_max_wait(Duration::MAX);
    /// assert_eq!(limiter.deadline(Instant::from_nanos(9)), Instant::MAX);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn deadline(&self, start: Instant) -> Instant {
        self.policy.settings.deadline(start)
    }

    /// One acquire step, without reading the clock or sleeping: at `now`, for a call whose
    /// wait must end by `deadline`, claim a permit, or say when to try again, or reject.
    ///
    /// This is the step the waiting methods (`acquire`, `call`, their interruptible and async
    /// forms) drive, and `try_acquire` decides the same way with a deadline of now; a custom
    /// runtime or a simulator can drive it too. `Permitted` and `Rejected` outcomes emit their event to the listeners
    /// (at `now`); `Wait` emits nothing and writes nothing. Lock-free: it loads the state
    /// word, and claims with one compare-and-set, retrying under the [`Backoff`] if another
    /// caller won the race.
    ///
    /// # Examples
    ///
    /// See [`Attempt`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Attempt, Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 2, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let t = Instant::from_nanos(10);
    /// assert_eq!(limiter.attempt(t, t), Attempt::Permitted { remaining: 1 });
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    // Inlined into the caller's loop, the permit and rejection paths lose a call's prologue
    // and epilogue (a quarter of their instructions under callgrind).
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub fn attempt(&self, now: Instant, deadline: Instant) -> Attempt {
        let Ok(attempt) = self.policy.attempt(&self.state, now, deadline, One);
        attempt
    }

    /// Takes a permit if the current window has one, never waiting, whatever `max_wait` is.
    ///
    /// The rejection borrows the limiter (see [`Rejection`]): it costs no more to make than
    /// a permit, and [`Rejection::to_error`] or `?` turns it into the full
    /// [`RateLimiterError::Rejected`] when it must outlive the borrow.
    ///
    /// # Errors
    ///
    /// A [`Rejection`] if the window's permits are used up.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(10));
    /// assert!(limiter.try_acquire().is_ok());
    /// assert!(limiter.try_acquire().is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    // Inlined into the caller's loop, the permit and rejection paths lose a call's prologue
    // and epilogue (a quarter of their instructions under callgrind).
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub fn try_acquire(&self) -> Result<Permit, Rejection<'_>> {
        self.policy
            .try_acquire(&self.state, || self.clock.now(), One)
    }

    /// Takes a permit, waiting (blocking the thread, through the clock) up to `max_wait` for a
    /// later window if the current one is used up.
    ///
    /// # Errors
    ///
    /// [`RateLimiterError::Rejected`] if no permit is available by the deadline, or if the
    /// clock's sleep did not move its time at all (a stopped clock could never reach the next
    /// window); [`RateLimiterError::Interrupted`] if the clock's sleep reports an interruption.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_millis(999));
    /// limiter.acquire()?;
    /// // The next window opens 1 s from now, after the 999 ms deadline: rejected without sleeping.
    /// assert!(limiter.acquire().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire(&self) -> Result<Permit, RateLimiterError> {
        self.acquire_blocking(None)
    }

    /// Like [`acquire`](RateLimiter::acquire), but a wait ends at once when `interrupt` is
    /// interrupted (from any thread), and the call fails.
    ///
    /// # Errors
    ///
    /// As [`acquire`](RateLimiter::acquire); [`RateLimiterError::Interrupted`] when `interrupt`
    /// is interrupted before or during a wait.
    ///
    /// # Examples
    ///
    /// Another thread interrupts a call waiting for the next window, five seconds away.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, RateLimiter, RateLimiterError};
    ///
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(5))?
    ///     .max_wait(Duration::from_secs(10))
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// let interrupt = Interrupt::new();
    /// let remote = interrupt.clone();
    /// let interrupter = std::thread::spawn(move || remote.interrupt());
    /// let result = limiter.acquire_interruptible(&interrupt);
    /// interrupter.join().unwrap();
    /// assert_eq!(result, Err(RateLimiterError::Interrupted { name: "api" }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire_interruptible(&self, interrupt: &Interrupt) -> Result<Permit, RateLimiterError> {
        self.acquire_blocking(Some(interrupt))
    }

    /// Runs `op` if a permit is granted (waiting up to `max_wait`), returning its result as it
    /// is. The `Permitted` event is emitted before `op` runs; a permit spent on an `op` that
    /// fails or panics stays spent, and `op`'s panic propagates unchanged.
    ///
    /// # Errors
    ///
    /// As [`acquire`](RateLimiter::acquire); `op` does not run.
    ///
    /// # Examples
    ///
    /// The operation's own `Result` is returned inside the limiter's.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let outcome = limiter.call(|| "42".parse::<u8>());
    /// assert_eq!(outcome, Ok(Ok(42)));
    /// assert!(limiter.call(|| unreachable!("no permit, so this never runs")).is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn call<T>(&self, op: impl FnOnce() -> T) -> Result<T, RateLimiterError> {
        self.acquire()?;
        Ok(op())
    }

    /// Like [`call`](RateLimiter::call), with waits interruptible through `interrupt`.
    ///
    /// # Errors
    ///
    /// As [`acquire_interruptible`](RateLimiter::acquire_interruptible); `op` does not run.
    ///
    /// # Examples
    ///
    /// An already interrupted handle fails a call that would have to wait.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, ManualClock, RateLimiter, RateLimiterError};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(1));
    /// let interrupt = Interrupt::new();
    /// interrupt.interrupt();
    /// assert_eq!(limiter.call_interruptible(&interrupt, || 1), Ok(1));
    /// assert_eq!(
    ///     limiter.call_interruptible(&interrupt, || 2),
    ///     Err(RateLimiterError::Interrupted { name: "api" })
    /// );
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn call_interruptible<T>(
        &self,
        interrupt: &Interrupt,
        op: impl FnOnce() -> T,
    ) -> Result<T, RateLimiterError> {
        self.acquire_interruptible(interrupt)?;
        Ok(op())
    }

    /// Takes a permit, awaiting the clock's asynchronous sleep up to `max_wait` for a later
    /// window, so a waiting call holds a task rather than a thread.
    ///
    /// Cancel-safe: dropping the future while it waits takes no permit and leaves the limiter
    /// as it was; a permit is claimed only in the same poll that returns it.
    ///
    /// # Errors
    ///
    /// As [`acquire`](RateLimiter::acquire); `Interrupted` if the clock's asynchronous sleep
    /// reports an interruption.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?
    ///     .with_clock(ManualClock::new())
    ///     .with_max_wait(Duration::from_secs(1));
    /// futures::executor::block_on(async {
    ///     limiter.acquire_async().await?;
    ///     let second = limiter.acquire_async().await?;
    ///     assert_eq!(second.at(), Instant::from_nanos(1_000_000_000));
    ///     Ok::<(), fixed_window::RateLimiterError>(())
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn acquire_async(&self) -> Result<Permit, RateLimiterError> {
        waiting::wait_async(&self.policy, &self.state, &self.clock, One).await
    }

    /// Runs the future `op` if a permit is granted (awaiting up to `max_wait`), returning its
    /// output as it is. `op` is not polled at all without a permit.
    ///
    /// # Errors
    ///
    /// As [`acquire_async`](RateLimiter::acquire_async); `op` is dropped unpolled.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::of("api", 1, Duration::from_secs(1))?.with_clock(ManualClock::new());
    /// let first = futures::executor::block_on(limiter.call_async(async { 7 }));
    /// let second = futures::executor::block_on(limiter.call_async(async { 8 }));
    /// assert_eq!(first, Ok(7));
    /// assert!(second.is_err());
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn call_async<F: IntoFuture>(&self, op: F) -> Result<F::Output, RateLimiterError> {
        self.acquire_async().await?;
        Ok(op.await)
    }

    fn acquire_blocking(&self, interrupt: Option<&Interrupt>) -> Result<Permit, RateLimiterError> {
        waiting::wait_blocking(&self.policy, &self.state, &self.clock, interrupt, One)
    }
}

impl<C> fmt::Debug for RateLimiter<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &self.policy.settings;
        let (window_start, used) = self.policy.budget.snapshot(&self.state);
        f.debug_struct("RateLimiter")
            .field("name", &settings.name)
            .field("limit", &self.policy.budget.limit())
            .field("period", &settings.period)
            .field("max_wait", &settings.max_wait())
            .field("listeners", &self.policy.listeners.len())
            .field("clock", &core::any::type_name::<C>())
            .field("window_start", &window_start)
            .field("used", &used)
            .field("budget", &self.policy.budget)
            .field("state", &self.state)
            .finish()
    }
}
