//! The calls a planted limiter takes, and the one waiting loop they share, on the spec crate's
//! [`Waiting`]: the deadline fixed at the start, a sleep only if the next window opens by it,
//! and the stalled-clock rule.

use core::future::Future;
use core::time::Duration;

use fixed_window::{Clock, Instant, Interrupt};
use fixed_window_spec::{Decision, Next, Waiting};

use crate::cell::Cell;
use crate::limiter::PlantedLimiter;
use crate::outcome::{Grant, Refusal};
use crate::pause::{Async, Blocking, Pause, block_on};

impl<S: Cell, C: Clock> PlantedLimiter<S, C> {
    /// Takes a permit if the current window has one, never waiting.
    ///
    /// # Errors
    ///
    /// [`Refusal::Rejected`] when the limiter, bug and all, finds no permit.
    ///
    /// # Panics
    ///
    /// With [`PlantedBug::OverflowPanic`](crate::PlantedBug::OverflowPanic), near the end of the
    /// timeline: that is its bug.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Refusal, Wide};
    ///
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::Overcount, Settings::new("api", 1, Duration::from_nanos(10))?, ManualClock::new());
    /// assert!(limiter.try_acquire().is_ok());
    /// assert!(matches!(limiter.try_acquire(), Err(Refusal::Rejected { .. })));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn try_acquire(&self) -> Result<Grant, Refusal> {
        block_on(call(self, false, 1, &mut Blocking::new(None)))
    }

    /// Takes a permit, sleeping in the clock's blocking sleep for a later window within the
    /// max wait. `interrupt` may interrupt the sleeps; without one, the call makes its own
    /// when it first sleeps.
    ///
    /// # Errors
    ///
    /// [`Refusal::Rejected`] when no permit comes by the deadline, [`Refusal::Interrupted`]
    /// when a sleep is interrupted.
    ///
    /// # Panics
    ///
    /// With [`PlantedBug::OverflowPanic`](crate::PlantedBug::OverflowPanic), near the end of the
    /// timeline.
    ///
    /// # Examples
    ///
    /// A full window of 10 ns, a max wait of 10 ns: the call sleeps (the manual clock moves)
    /// into the next window.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let period = Duration::from_nanos(10);
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::LostUpdate, Settings::new("api", 1, period)?.with_max_wait(period), ManualClock::new());
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(limiter.acquire(None).map(|grant| grant.at), Ok(Instant::from_nanos(10)));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn acquire(&self, interrupt: Option<&Interrupt>) -> Result<Grant, Refusal> {
        block_on(call(self, true, 1, &mut Blocking::new(interrupt)))
    }

    /// Takes a permit, awaiting the clock's asynchronous sleep for a later window within the
    /// max wait. For a bug that [races only](crate::PlantedBug::races_only) it yields to its
    /// executor between reading the state and writing it, so that one executor on one thread
    /// interleaves its callers there.
    ///
    /// # Errors
    ///
    /// As [`PlantedLimiter::acquire`]; a sleep is interrupted if the clock's sleep says so.
    ///
    /// # Panics
    ///
    /// With [`PlantedBug::OverflowPanic`](crate::PlantedBug::OverflowPanic), near the end of the
    /// timeline.
    ///
    /// # Examples
    ///
    /// Two callers interleaved between the read and the write both take the one permit.
    ///
    /// ```
    /// use core::future::Future;
    /// use core::pin::pin;
    /// use core::task::{Context, Poll, Waker};
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::LostUpdate, Settings::new("api", 1, Duration::from_secs(1))?, ManualClock::new());
    /// let mut context = Context::from_waker(Waker::noop());
    /// let (mut first, mut second) = (pin!(limiter.acquire_async()), pin!(limiter.acquire_async()));
    /// assert!(first.as_mut().poll(&mut context).is_pending());
    /// assert!(second.as_mut().poll(&mut context).is_pending());
    /// assert!(matches!(first.as_mut().poll(&mut context), Poll::Ready(Ok(_))));
    /// assert!(matches!(second.as_mut().poll(&mut context), Poll::Ready(Ok(_))));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn acquire_async(&self) -> Result<Grant, Refusal> {
        call(self, true, 1, &mut Async).await
    }

    /// Takes `n` permits of one window if the window in effect has them now. Zero permits
    /// are granted without counting. (`n` above the limit is the caller's to refuse, as the
    /// real limiter refuses it before any attempt: here it is rejected as a full window.)
    ///
    /// # Errors
    ///
    /// [`Refusal::Rejected`] if the window has fewer than `n` left.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, Settings};
    /// use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
    ///
    /// let limiter: PlantedLimiter<Wide, _> =
    ///     PlantedLimiter::new(PlantedBug::WeightCountedAsOne, Settings::new("api", 3, Duration::from_secs(1))?, ManualClock::new());
    /// // The bug: three permits count as one, so two more are granted.
    /// assert_eq!(limiter.try_acquire_n(3).map(|grant| grant.remaining), Ok(0));
    /// assert_eq!(limiter.try_acquire_n(2).map(|grant| grant.remaining), Ok(0));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn try_acquire_n(&self, n: u32) -> Result<Grant, Refusal> {
        block_on(call(self, false, n, &mut Blocking::new(None)))
    }

    /// Takes `n` permits of one window, awaiting the clock's asynchronous sleep for a later
    /// window within the max wait, as [`PlantedLimiter::acquire_async`] takes one.
    ///
    /// # Errors
    ///
    /// As [`PlantedLimiter::acquire_async`].
    ///
    /// # Panics
    ///
    /// With [`PlantedBug::OverflowPanic`](crate::PlantedBug::OverflowPanic), near the end of the
    /// timeline.
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
    /// let grant = futures::executor::block_on(limiter.acquire_n_async(2)).expect("a fresh window");
    /// assert_eq!(grant.remaining, 1);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub async fn acquire_n_async(&self, n: u32) -> Result<Grant, Refusal> {
        call(self, true, n, &mut Async).await
    }
}

impl<S: Cell, C: Clock> Steps for PlantedLimiter<S, C> {
    type Clock = C;

    fn clock(&self) -> &C {
        &self.clock
    }

    fn deadline(&self, start: Instant) -> u128 {
        PlantedLimiter::deadline(self, start)
    }

    async fn attempt(&self, now: u128, deadline: u128, n: u32, pause: &mut impl Pause) -> Decision {
        PlantedLimiter::attempt(self, now, deadline, n, pause).await
    }
}

/// What the waiting loop needs of a limiter: its clock, a call's deadline, and one attempt.
/// The plain planted limiter is one; one key of the keyed one is another.
pub(crate) trait Steps {
    type Clock: Clock;

    fn clock(&self) -> &Self::Clock;

    /// The deadline of a waiting call that starts at `start`.
    fn deadline(&self, start: Instant) -> u128;

    /// One attempt for `n` permits at `now` by a call whose deadline is `deadline`.
    fn attempt(
        &self,
        now: u128,
        deadline: u128,
        n: u32,
        pause: &mut impl Pause,
    ) -> impl Future<Output = Decision>;
}

/// The waiting loop: attempt, then end with the permit or the rejection, or sleep until the
/// next window and attempt again, as the spec's [`Waiting`] says. A call that `waits` not is
/// given a deadline of its start, and a bug's wait becomes its rejection.
pub(crate) async fn call<L: Steps>(
    limiter: &L,
    waits: bool,
    n: u32,
    pause: &mut impl Pause,
) -> Result<Grant, Refusal> {
    let clock = limiter.clock();
    let mut now = clock.now();
    let start = u128::from(now.as_nanos());
    let mut call = Waiting::new(if waits { limiter.deadline(now) } else { start });
    loop {
        let reading = u128::from(now.as_nanos());
        let decision = match limiter.attempt(reading, call.deadline(), n, pause).await {
            Decision::Wait { until } if !waits => Decision::Reject {
                retry_after: until.saturating_sub(reading),
            },
            decision => decision,
        };
        match call.next(decision, reading) {
            Next::Permit { remaining } => return Ok(Grant { at: now, remaining }),
            Next::Reject { retry_after } => {
                return Err(Refusal::Rejected {
                    at: now,
                    retry_after: duration(retry_after),
                });
            }
            Next::TooMany { limit } => return Err(Refusal::TooMany { limit }),
            Next::Sleep { until } => {
                pause
                    .sleep(clock, duration(until.saturating_sub(reading)))
                    .await
                    .map_err(|_| Refusal::Interrupted)?;
                now = clock.now();
            }
        }
    }
}

/// `nanos` nanoseconds, saturating at `Duration::MAX` (the spec's `NEVER` is exactly that).
fn duration(nanos: u128) -> Duration {
    u64::try_from(nanos).map_or(Duration::MAX, Duration::from_nanos)
}
