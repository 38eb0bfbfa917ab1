//! Deliberately broken limiters, each with one classic fault, driven through the same
//! simulator to show that the oracle catches every one of them.
//!
//! They are small, separate implementations (they share no code with `fixed-window`), each
//! written the obvious way and then broken in one place.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use fixed_window::{Attempt, Clock, ConfigError, Interrupt, RateLimiterError};

use crate::record::{OpOutput, Record};
use crate::scenario::Config;
use crate::subject::{Granted, Operation, Subject};
use crate::virtual_clock::VirtualClock;
use crate::world::World;

/// The fault a broken limiter has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flaw {
    /// Permits left unused in one window are added to the next.
    CarryOver,
    /// The boundary instant still belongs to the old window.
    BoundaryOffByOne,
    /// Read and write of the state are split by a yield, so concurrent callers overwrite each
    /// other's claims.
    LostUpdate,
    /// A call waits for a window that opens up to one period past its deadline.
    DeadlineOvershoot,
    /// Deadline and window arithmetic that panics on overflow.
    OverflowPanic,
    /// The last permit of every window is refused.
    FalseRejection,
}

impl Flaw {
    /// Every flaw.
    pub const ALL: [Flaw; 6] = [
        Flaw::CarryOver,
        Flaw::BoundaryOffByOne,
        Flaw::LostUpdate,
        Flaw::DeadlineOvershoot,
        Flaw::OverflowPanic,
        Flaw::FalseRejection,
    ];
}

#[derive(Debug, Clone, Copy)]
struct Window {
    index: u128,
    used: u32,
    /// Extra permits carried into this window (only [`Flaw::CarryOver`] sets it).
    extra: u32,
}

/// A limiter with one [`Flaw`].
#[derive(Debug)]
pub struct Broken {
    flaw: Flaw,
    name: &'static str,
    config: Config,
    origin: u128,
    period: u128,
    clock: VirtualClock,
    window: Mutex<Window>,
}

impl Broken {
    /// A broken limiter with `flaw`, configured as `config`, on `clock`, its windows starting
    /// at the clock's reading now.
    ///
    /// # Errors
    ///
    /// The same configuration errors as the real limiter.
    pub fn new(
        flaw: Flaw,
        name: &'static str,
        config: &Config,
        clock: VirtualClock,
    ) -> Result<Broken, ConfigError> {
        if config.limit == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        if config.period.is_zero() {
            return Err(ConfigError::ZeroPeriod);
        }
        Ok(Broken {
            flaw,
            name,
            config: *config,
            origin: u128::from(clock.now().as_nanos()),
            period: config.period.as_nanos(),
            clock,
            window: Mutex::new(Window {
                index: 0,
                used: 0,
                extra: 0,
            }),
        })
    }

    fn now(&self) -> u128 {
        u128::from(self.clock.now().as_nanos())
    }

    fn deadline(&self, now: u128) -> u128 {
        if self.flaw == Flaw::OverflowPanic {
            // The flaw itself: unchecked conversions and sums that panic near the maximum.
            let wait = u64::try_from(self.config.max_wait.as_nanos()).expect("max wait overflowed");
            let now = u64::try_from(now).unwrap_or(u64::MAX);
            return u128::from(now.checked_add(wait).expect("deadline overflowed"));
        }
        (now + self.config.max_wait.as_nanos()).min(u128::from(u64::MAX))
    }

    fn emit(record: impl FnOnce(Option<u32>) -> Record) {
        World::with(|world| world.record(record(world.current())));
    }

    /// One step, from `seen` (the state as read, possibly earlier) to a decision, writing the
    /// state if a permit is claimed.
    fn step(&self, now: u128, deadline: u128, seen: Option<Window>) -> Attempt {
        let mut guard = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        let mut window = seen.unwrap_or(*guard);
        let end = self.origin + (window.index + 1) * self.period;
        let advance = if self.flaw == Flaw::BoundaryOffByOne {
            now > end
        } else {
            now >= end
        };
        if advance {
            let index = (now - self.origin) / self.period;
            let unused = (self.config.limit + window.extra).saturating_sub(window.used);
            let extra = if self.flaw == Flaw::CarryOver && index == window.index + 1 {
                unused
            } else {
                0
            };
            window = Window {
                index,
                used: 0,
                extra,
            };
        }
        let mut capacity = self.config.limit.saturating_add(window.extra);
        if self.flaw == Flaw::FalseRejection {
            capacity -= 1;
        }
        if window.used < capacity {
            window.used += 1;
            *guard = window;
            let remaining = capacity - window.used;
            drop(guard);
            let at = u64::try_from(now).unwrap_or(u64::MAX);
            Self::emit(|caller| Record::Permitted {
                caller,
                at,
                remaining,
            });
            return Attempt::Permitted { remaining };
        }
        drop(guard);
        let next = self.origin + (window.index + 1) * self.period;
        if self.flaw == Flaw::OverflowPanic {
            // The flaw again: the next window's start computed without a fallback.
            let start = u64::try_from(self.origin + window.index * self.period).unwrap_or(u64::MAX);
            let period = u64::try_from(self.period).unwrap_or(u64::MAX);
            start.checked_add(period).expect("next window overflowed");
        }
        let slack = if self.flaw == Flaw::DeadlineOvershoot {
            self.period
        } else {
            0
        };
        if next <= u128::from(u64::MAX) && next <= deadline + slack {
            Attempt::Wait {
                until: fixed_window::Instant::from_nanos(u64::try_from(next).unwrap_or(u64::MAX)),
            }
        } else {
            let retry_after = if next > u128::from(u64::MAX) {
                Duration::MAX
            } else {
                nanos(next - now)
            };
            Attempt::Rejected { retry_after }
        }
    }

    fn reject(&self, now: u128, retry_after: Duration) -> RateLimiterError {
        let at = u64::try_from(now).unwrap_or(u64::MAX);
        Self::emit(|caller| Record::Rejected {
            caller,
            at,
            retry_after: retry_after.as_nanos(),
        });
        RateLimiterError::Rejected {
            name: self.name,
            limit: self.config.limit,
            period: self.config.period,
            max_wait: self.config.max_wait,
            retry_after,
        }
    }

    fn interrupted(&self) -> RateLimiterError {
        RateLimiterError::Interrupted { name: self.name }
    }

    async fn acquire(&self) -> Result<Granted, RateLimiterError> {
        let mut now = self.now();
        let deadline = self.deadline(now);
        let mut slept_from = None;
        loop {
            let seen = if self.flaw == Flaw::LostUpdate {
                let seen = *self.window.lock().unwrap_or_else(PoisonError::into_inner);
                YieldNow(false).await;
                Some(seen)
            } else {
                None
            };
            let pause = match self.next(self.step(now, deadline, seen), now, slept_from) {
                Next::Done(result) => return result,
                Next::Sleep(pause) => pause,
            };
            self.clock
                .sleep_async(pause)
                .await
                .map_err(|_| self.interrupted())?;
            slept_from = Some(now);
            now = self.now();
        }
    }

    fn acquire_blocking(&self, interrupt: &Interrupt) -> Result<Granted, RateLimiterError> {
        let mut now = self.now();
        let deadline = self.deadline(now);
        let mut slept_from = None;
        loop {
            let pause = match self.next(self.step(now, deadline, None), now, slept_from) {
                Next::Done(result) => return result,
                Next::Sleep(pause) => pause,
            };
            self.clock
                .sleep(pause, interrupt)
                .map_err(|_| self.interrupted())?;
            slept_from = Some(now);
            now = self.now();
        }
    }

    /// What a waiting call does after `attempt` at `now`, shared by the blocking and async
    /// loops as core shares it: its result, or how long to sleep before the next round.
    fn next(&self, attempt: Attempt, now: u128, slept_from: Option<u128>) -> Next {
        match attempt {
            Attempt::Permitted { remaining } => {
                let at = u64::try_from(now).unwrap_or(u64::MAX);
                Next::Done(Ok(Granted { at, remaining }))
            }
            Attempt::Rejected { retry_after } => Next::Done(Err(self.reject(now, retry_after))),
            Attempt::Wait { until } => {
                let pause = nanos(u128::from(until.as_nanos()).saturating_sub(now));
                if slept_from.is_some_and(|before| now <= before) {
                    Next::Done(Err(self.reject(now, pause)))
                } else {
                    Next::Sleep(pause)
                }
            }
        }
    }
}

/// What a waiting call does next.
enum Next {
    /// Return this.
    Done(Result<Granted, RateLimiterError>),
    /// Sleep this long, then attempt again.
    Sleep(Duration),
}

fn nanos(n: u128) -> Duration {
    match u64::try_from(n) {
        Ok(n) => Duration::from_nanos(n),
        Err(_) => Duration::MAX,
    }
}

/// Pending once, then ready: lets every other caller due at this instant run in between.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

impl Subject for Broken {
    async fn call_async(&self, op: Operation) -> Result<OpOutput, RateLimiterError> {
        self.acquire().await?;
        Ok(op.await)
    }

    fn acquire_async(&self) -> impl Future<Output = Result<Granted, RateLimiterError>> + '_ {
        self.acquire()
    }

    fn try_acquire(&self) -> Result<Granted, RateLimiterError> {
        let now = self.now();
        match self.step(now, now, None) {
            Attempt::Permitted { remaining } => Ok(Granted {
                at: u64::try_from(now).unwrap_or(u64::MAX),
                remaining,
            }),
            Attempt::Rejected { retry_after } => Err(self.reject(now, retry_after)),
            Attempt::Wait { until } => {
                Err(self.reject(now, nanos(u128::from(until.as_nanos()).saturating_sub(now))))
            }
        }
    }

    fn call_blocking(
        &self,
        interrupt: &Interrupt,
        op: &mut dyn FnMut() -> OpOutput,
    ) -> Result<OpOutput, RateLimiterError> {
        self.acquire_blocking(interrupt)?;
        Ok(op())
    }
}
