//! The simulator's clock: it implements core's [`Clock`], reads the run's clock in the
//! simulation [`World`], and turns every sleep into a timer that the run fires.
//!
//! Asynchronous sleeps are futures that stay pending until the run wakes (fires or
//! interrupts) their timer and polls their caller, telling the sleep through the world how it
//! ended.
//!
//! A blocking sleep runs on a blocking caller's own stack, a coroutine the run resumes on its
//! own thread: the sleep registers its timer and suspends the coroutine, and the run resumes
//! it, with how the sleep ended, when it fires or interrupts that timer. Everything therefore
//! runs on the simulator's thread, one thing at a time.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use fixed_window::{Clock, Instant, Interrupt, Interrupted, Sleep};

use crate::clock_model::ClockModel;
use crate::coroutine;
use crate::record::Record;
use crate::world::World;

/// The simulator's clock.
///
/// In a run, `now` is the run's clock: the scenario's [`ClockModel`] read at the run's
/// virtual time. Outside a run it reads its own model at virtual time zero. Sleeps never block
/// the simulator: they become timers that the run fires in virtual-time order. A sleep made
/// outside a caller's turn in a run fails with [`Interrupted`] at once, since nothing would
/// ever wake it.
///
/// # Examples
///
/// A clock reads its model at virtual time zero until a run moves it.
///
/// ```
/// use fixed_window::{Clock, Instant};
/// use fixed_window_sim::{ClockModel, VirtualClock};
///
/// let clock = VirtualClock::new(&ClockModel::ordinary(42));
/// assert_eq!(clock.now(), Instant::from_nanos(42));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct VirtualClock {
    /// The model's reading at virtual time zero, what the clock reads outside a run.
    at_zero: u64,
    /// The Unix time (nanoseconds since 1970) that reading stands for.
    unix_at_zero: u64,
}

impl VirtualClock {
    /// A clock reading `model`, at virtual time zero, whose readings stand for Unix time 0
    /// there.
    pub fn new(model: &ClockModel) -> VirtualClock {
        VirtualClock {
            at_zero: model.reading(0),
            unix_at_zero: 0,
        }
    }

    /// This clock, its reading at virtual time zero standing for `unix` nanoseconds of Unix
    /// time: its [`unix_time`](Clock::unix_time) is that, moved by as much as its reading has
    /// moved since.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Clock;
    /// use fixed_window_sim::{ClockModel, VirtualClock};
    ///
    /// let clock = VirtualClock::new(&ClockModel::ordinary(42)).with_unix_time(7_000);
    /// assert_eq!(clock.unix_time(), Duration::from_nanos(7_000));
    /// ```
    #[must_use]
    pub fn with_unix_time(self, unix: u64) -> VirtualClock {
        VirtualClock {
            unix_at_zero: unix,
            ..self
        }
    }
}

impl Clock for VirtualClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::from_nanos(World::with(World::reading).unwrap_or(self.at_zero))
    }

    fn unix_time(&self) -> Duration {
        let now = self.now().as_nanos();
        let unix = if now >= self.at_zero {
            self.unix_at_zero.saturating_add(now - self.at_zero)
        } else {
            self.unix_at_zero.saturating_sub(self.at_zero - now)
        };
        Duration::from_nanos(unix)
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        let registered = World::with(|world| {
            let (Some(owner), Some(at)) = (world.current(), world.reading()) else {
                return None;
            };
            if interrupt.is_interrupted() {
                // Recorded as a sleep that ended at once, so the oracle still sees the wait.
                world.record(Record::Sleep {
                    caller: owner,
                    at,
                    until: u128::from(at) + duration.as_nanos(),
                });
                return None;
            }
            // Only a blocking caller's coroutine can wait for its timer; anywhere else nothing
            // would ever wake the sleep.
            if !coroutine::on_coroutine() {
                return None;
            }
            world.register(duration)
        });
        match registered {
            // Suspended after leaving the world, so that no borrow of it spans the switch of
            // stacks.
            Some(_) => coroutine::suspend(),
            None => Err(Interrupted),
        }
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        // Registered at once rather than when first polled: the limiter awaits its sleep as
        // soon as it has it, so nothing can happen in between.
        if World::with(|world| world.register(duration)).is_some() {
            Box::pin(VirtualSleep)
        } else {
            Box::pin(core::future::ready(Err(Interrupted)))
        }
    }
}

/// An asynchronous sleep, its timer already registered: it resolves when the run wakes that
/// timer (fired or interrupted) and polls its caller. Dropping it needs no clean-up: the run
/// skips timers whose caller no longer sleeps on them.
struct VirtualSleep;

impl Future for VirtualSleep {
    type Output = Result<(), Interrupted>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        World::with(World::take_wake).map_or(Poll::Pending, Poll::Ready)
    }
}
