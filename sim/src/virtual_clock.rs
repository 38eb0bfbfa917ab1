//! The simulator's clock: it implements core's [`Clock`], reads a [`ClockModel`] at the
//! current virtual time, and turns every sleep into a timer in the simulator's event queue.
//!
//! Asynchronous sleeps are futures that stay pending until the simulator fires (or
//! interrupts) their timer. A blocking sleep runs on a blocking caller's own thread: it
//! registers its timer, hands control back to the simulator and waits for its turn, so only
//! one side ever runs (see [`Handoff`]).

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use fixed_window::{Clock, Instant, Interrupt, Interrupted, Sleep};

use crate::clock_model::ClockModel;
use crate::handoff::Handoff;
use crate::record::{Outcome, Record};

/// Caller id used in records made while no caller is being run.
pub(crate) const NO_CALLER: u32 = u32::MAX;

/// No timer: the value of [`Shared::woken`] between wake-ups.
const NO_TIMER: usize = usize::MAX;

/// A sleep waiting in the event queue.
#[derive(Debug)]
pub(crate) struct Timer {
    /// The sleeping caller.
    pub(crate) owner: u32,
    /// Virtual time at which it wakes.
    pub(crate) wake: u64,
    /// Its id: timers are numbered in order of registration.
    pub(crate) id: usize,
}

/// Where a blocking caller waits for its turn, and learns how its sleep ended.
pub(crate) type Turn = Arc<Handoff<Result<(), Interrupted>>>;

/// What a blocking caller's thread reports when it hands control back.
#[derive(Debug)]
pub(crate) enum Report {
    /// It registered a timer and is waiting for it.
    Sleeping,
    /// Its call ended; the message of a panic that escaped it, if one did.
    Done(Outcome, Option<String>),
}

/// The part of the simulation that the clock, the listeners and the operations share.
///
/// Only one side (the simulator, or the one blocking caller it handed the turn to) ever runs
/// at a time, so the lock is never contended; the fields read on every step are atomics so
/// that the common path takes as few locks as possible.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The clock's readings over virtual time.
    model: ClockModel,
    /// The current virtual time; only the simulator moves it.
    time: AtomicU64,
    /// The caller being run, to whom sleeps, events and operations belong ([`NO_CALLER`] if
    /// none).
    current: AtomicU32,
    /// Whether `state.registered` holds timers the simulator has not taken yet.
    registered: AtomicBool,
    /// The timer whose sleep the simulator is waking ([`NO_TIMER`] if none): a sleep
    /// resolves only when polled while its own timer is the one being woken. A timer whose
    /// sleep was dropped is simply never woken, so sleeps need no state of their own.
    woken: AtomicUsize,
    /// Whether the timer being woken was interrupted rather than fired.
    woken_by_interrupt: AtomicBool,
    /// The trace and the hand-over points.
    state: Mutex<State>,
    /// Where blocking callers hand control back to the simulator.
    pub(crate) to_simulator: Handoff<Report>,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    /// Timers registered since the simulator last moved them into its queue.
    pub(crate) registered: Vec<Timer>,
    /// The next timer's id.
    next_timer: usize,
    /// The trace.
    pub(crate) records: Vec<Record>,
    /// Each blocking caller's turn, by caller id.
    pub(crate) turns: Vec<Option<Turn>>,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn time(&self) -> u64 {
        self.time.load(Ordering::Relaxed)
    }

    pub(crate) fn set_time(&self, t: u64) {
        self.time.store(t, Ordering::Relaxed);
    }

    pub(crate) fn reading(&self) -> u64 {
        self.model.reading(self.time())
    }

    /// The caller being run, or [`NO_CALLER`].
    pub(crate) fn current(&self) -> u32 {
        self.current.load(Ordering::Relaxed)
    }

    pub(crate) fn set_current(&self, caller: u32) {
        self.current.store(caller, Ordering::Relaxed);
    }

    pub(crate) fn record(&self, record: Record) {
        self.state().records.push(record);
    }

    /// Takes the timers registered since the last call, if there are any.
    pub(crate) fn take_registered(&self, into: &mut Vec<Timer>) {
        // A plain load first: most steps register nothing, and a read costs less than a swap.
        if self.registered.load(Ordering::Relaxed) {
            self.registered.store(false, Ordering::Relaxed);
            into.append(&mut self.state().registered);
        }
    }

    /// Marks timer `id` as the one being woken, fired or interrupted.
    pub(crate) fn wake(&self, id: usize, interrupted: bool) {
        self.woken_by_interrupt
            .store(interrupted, Ordering::Relaxed);
        self.woken.store(id, Ordering::Relaxed);
    }

    /// Ends a wake-up.
    pub(crate) fn woken(&self) {
        self.woken.store(NO_TIMER, Ordering::Relaxed);
    }

    /// How timer `id`'s sleep ended, if it is the one being woken.
    fn wake_of(&self, id: usize) -> Option<Result<(), Interrupted>> {
        (self.woken.load(Ordering::Relaxed) == id).then(|| {
            if self.woken_by_interrupt.load(Ordering::Relaxed) {
                Err(Interrupted)
            } else {
                Ok(())
            }
        })
    }

    /// Registers a sleep of `duration` for the caller being run and records it; its timer's
    /// id, or `None` if no caller is being run.
    fn register(&self, state: &mut State, duration: Duration) -> Option<usize> {
        let owner = self.current();
        if owner == NO_CALLER {
            return None;
        }
        let at = self.reading();
        state.records.push(Record::Sleep {
            caller: owner,
            at,
            until: u128::from(at) + duration.as_nanos(),
        });
        let step = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        let id = state.next_timer;
        state.next_timer += 1;
        state.registered.push(Timer {
            owner,
            wake: self.time().saturating_add(step),
            id,
        });
        self.registered.store(true, Ordering::Relaxed);
        Some(id)
    }
}

/// The simulator's clock. Clones share one timeline.
///
/// `now` reads the scenario's [`ClockModel`] at the current virtual time. Sleeps never block
/// the simulator: they become timers that the simulator fires in virtual-time order. A sleep
/// made outside a running simulation (no caller is being run) fails with [`Interrupted`] at
/// once, since nothing would ever wake it.
///
/// # Examples
///
/// A clock reads its model at virtual time zero until a simulation moves it.
///
/// ```
/// use fixed_window::{Clock, Instant};
/// use fixed_window_sim::{ClockModel, VirtualClock};
///
/// let clock = VirtualClock::new(ClockModel::ordinary(42));
/// assert_eq!(clock.now(), Instant::from_nanos(42));
/// ```
#[derive(Debug, Clone)]
pub struct VirtualClock {
    shared: Arc<Shared>,
}

impl VirtualClock {
    /// A clock reading `model`, at virtual time zero.
    pub fn new(model: ClockModel) -> VirtualClock {
        VirtualClock {
            shared: Arc::new(Shared {
                model,
                time: AtomicU64::new(0),
                current: AtomicU32::new(NO_CALLER),
                registered: AtomicBool::new(false),
                woken: AtomicUsize::new(NO_TIMER),
                woken_by_interrupt: AtomicBool::new(false),
                state: Mutex::new(State::default()),
                to_simulator: Handoff::new(),
            }),
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Clock for VirtualClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::from_nanos(self.shared.reading())
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        let turn = {
            let mut state = self.shared.state();
            let owner = self.shared.current();
            if owner == NO_CALLER {
                return Err(Interrupted);
            }
            if interrupt.is_interrupted() {
                // Recorded as a sleep that ended at once, so the oracle still sees the wait.
                let at = self.shared.reading();
                state.records.push(Record::Sleep {
                    caller: owner,
                    at,
                    until: u128::from(at) + duration.as_nanos(),
                });
                return Err(Interrupted);
            }
            let turn = state.turns.get(owner as usize).cloned().flatten();
            let Some(turn) = turn else {
                return Err(Interrupted);
            };
            self.shared.register(&mut state, duration);
            turn
        };
        self.shared.to_simulator.send(Report::Sleeping);
        turn.recv()
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        Box::pin(VirtualSleep {
            shared: &self.shared,
            duration,
            timer: None,
        })
    }
}

/// An asynchronous sleep: registers its timer when first polled and resolves when the
/// simulator wakes that timer (fired or interrupted). Dropping it needs no clean-up: the
/// simulator skips timers whose caller no longer sleeps on them.
struct VirtualSleep<'a> {
    shared: &'a Shared,
    duration: Duration,
    timer: Option<usize>,
}

impl Future for VirtualSleep<'_> {
    type Output = Result<(), Interrupted>;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let shared = self.shared;
        match self.timer {
            None => match shared.register(&mut shared.state(), self.duration) {
                Some(id) => {
                    self.timer = Some(id);
                    Poll::Pending
                }
                None => Poll::Ready(Err(Interrupted)),
            },
            Some(id) => shared.wake_of(id).map_or(Poll::Pending, Poll::Ready),
        }
    }
}
