//! The simulator's clock: it implements core's [`Clock`], reads a [`ClockModel`] at the
//! current virtual time, and turns every sleep into a timer in the simulator's event queue.
//!
//! Asynchronous sleeps are futures that stay pending until the simulator fires (or
//! interrupts) their timer. They are polled only on the simulator's own thread, so the
//! simulator tells the woken sleep how it ended through a thread-local: the future then needs
//! no state at all, and boxing it (as core's `Sleep` type requires) allocates nothing.
//!
//! A blocking sleep runs on a blocking caller's own thread: it registers its timer, hands
//! control back to the simulator and waits for its turn, so only one side ever runs (see
//! [`Handoff`]).

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use fixed_window::{Clock, Instant, Interrupt, Interrupted, Sleep};

use crate::clock_model::ClockModel;
use crate::handoff::Handoff;
use crate::record::{Outcome, Record};

/// Caller id used in records made while no caller is being run.
pub(crate) const NO_CALLER: u32 = u32::MAX;

thread_local! {
    /// How the sleep being woken on this thread ended, while the simulator polls its caller.
    static WAKE: Cell<Option<Result<(), Interrupted>>> = const { Cell::new(None) };
}

thread_local! {
    /// The trace of the run this thread is simulating, if it is simulating one. Records made
    /// on the simulator's thread (all but those of blocking callers) go here without a lock;
    /// blocking callers' records go through [`Shared`]'s lock and are moved here each time a
    /// blocking caller hands the turn back, which keeps the trace in the order things happened.
    static TRACE: RefCell<Option<Vec<Record>>> = const { RefCell::new(None) };
}

/// Makes this thread the simulator's, recording into `trace` until [`end_trace`].
pub(crate) fn begin_trace(trace: Vec<Record>) {
    TRACE.with(|cell| *cell.borrow_mut() = Some(trace));
}

/// The trace recorded on this thread since [`begin_trace`].
pub(crate) fn end_trace() -> Vec<Record> {
    TRACE
        .with(|cell| cell.borrow_mut().take())
        .unwrap_or_default()
}

/// Tells the asynchronous sleep polled next on this thread that it ended with `result`.
pub(crate) fn wake(result: Result<(), Interrupted>) {
    WAKE.with(|wake| wake.set(Some(result)));
}

/// Ends a wake-up: a sleep polled later on this thread is still pending.
pub(crate) fn woken() {
    WAKE.with(|wake| wake.set(None));
}

/// A sleep waiting in the event queue.
#[derive(Debug, Clone, Copy)]
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
/// at a time, so the lock is never contended; the fields read on every step are atomics, read
/// and written with plain loads and stores, and records made on the simulator's thread go to
/// a thread-local trace, so that the common path takes no lock and no atomic read-modify-write.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The clock's readings over virtual time.
    model: ClockModel,
    /// The current virtual time; only the simulator moves it.
    time: AtomicU64,
    /// The caller being run, to whom sleeps, events and operations belong ([`NO_CALLER`] if
    /// none).
    current: AtomicU32,
    /// Whether the `pending_*` fields hold a timer the simulator has not taken yet. A step registers at
    /// most one timer in practice (a caller sleeps once, then waits), so it goes here rather
    /// than through the lock; any further ones go to `state.registered`.
    registered: AtomicBool,
    /// The registered timer's owner, wake-up time and id.
    pending_owner: AtomicU32,
    pending_wake: AtomicU64,
    pending_id: AtomicUsize,
    /// Whether `state.registered` holds timers too.
    overflowed: AtomicBool,
    /// The next timer's id.
    next_timer: AtomicUsize,
    /// Records made off the simulator's thread, timers past `pending`, and hand-over points.
    state: Mutex<State>,
    /// Where blocking callers hand control back to the simulator.
    pub(crate) to_simulator: Handoff<Report>,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    /// Timers registered since the simulator last moved them into its queue, after the one
    /// in [`Shared`]'s `pending_*` fields.
    pub(crate) registered: Vec<Timer>,
    /// Records made on blocking callers' threads, not yet moved into the trace.
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

    /// Appends `record` to the trace.
    #[inline]
    pub(crate) fn record(&self, record: Record) {
        let off_simulator = TRACE.with(|cell| match cell.borrow_mut().as_mut() {
            Some(trace) => {
                trace.push(record);
                None
            }
            None => Some(record),
        });
        if let Some(record) = off_simulator {
            self.state().records.push(record);
        }
    }

    /// Moves the records a blocking caller made during its turn into the trace; called on the
    /// simulator's thread when the turn comes back.
    pub(crate) fn collect_records(&self) {
        let mut state = self.state();
        if !state.records.is_empty() {
            TRACE.with(|cell| {
                if let Some(trace) = cell.borrow_mut().as_mut() {
                    trace.append(&mut state.records);
                }
            });
        }
    }

    /// Takes the first timer registered since the last call, if there is one; the others
    /// are taken by [`take_more_registered`](Shared::take_more_registered).
    #[inline]
    pub(crate) fn take_registered(&self) -> Option<Timer> {
        // A plain load and store rather than a swap, which costs several times more.
        if !self.registered.load(Ordering::Relaxed) {
            return None;
        }
        self.registered.store(false, Ordering::Relaxed);
        Some(Timer {
            owner: self.pending_owner.load(Ordering::Relaxed),
            wake: self.pending_wake.load(Ordering::Relaxed),
            id: self.pending_id.load(Ordering::Relaxed),
        })
    }

    /// Takes the timers registered after the first one since the last call into `into`;
    /// whether there were any.
    #[inline]
    pub(crate) fn take_more_registered(&self, into: &mut Vec<Timer>) -> bool {
        if !self.overflowed.load(Ordering::Relaxed) {
            return false;
        }
        self.overflowed.store(false, Ordering::Relaxed);
        into.append(&mut self.state().registered);
        true
    }

    /// Registers a sleep of `duration` for the caller being run and records it; its timer's
    /// id, or `None` if no caller is being run.
    fn register(&self, duration: Duration) -> Option<usize> {
        let owner = self.current();
        if owner == NO_CALLER {
            return None;
        }
        let at = self.reading();
        self.record(Record::Sleep {
            caller: owner,
            at,
            until: u128::from(at) + duration.as_nanos(),
        });
        let step = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        // A load and a store rather than an atomic add, which costs several times more: only
        // one side ever runs at a time, and the hand-overs order their accesses.
        let id = self.next_timer.load(Ordering::Relaxed);
        self.next_timer.store(id + 1, Ordering::Relaxed);
        let wake = self.time().saturating_add(step);
        if self.registered.load(Ordering::Relaxed) {
            self.state().registered.push(Timer { owner, wake, id });
            self.overflowed.store(true, Ordering::Relaxed);
        } else {
            self.pending_owner.store(owner, Ordering::Relaxed);
            self.pending_wake.store(wake, Ordering::Relaxed);
            self.pending_id.store(id, Ordering::Relaxed);
            self.registered.store(true, Ordering::Relaxed);
        }
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
                pending_owner: AtomicU32::new(NO_CALLER),
                pending_wake: AtomicU64::new(0),
                pending_id: AtomicUsize::new(0),
                overflowed: AtomicBool::new(false),
                next_timer: AtomicUsize::new(0),
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
        let owner = self.shared.current();
        if owner == NO_CALLER {
            return Err(Interrupted);
        }
        if interrupt.is_interrupted() {
            // Recorded as a sleep that ended at once, so the oracle still sees the wait.
            let at = self.shared.reading();
            self.shared.record(Record::Sleep {
                caller: owner,
                at,
                until: u128::from(at) + duration.as_nanos(),
            });
            return Err(Interrupted);
        }
        let turn = self
            .shared
            .state()
            .turns
            .get(owner as usize)
            .cloned()
            .flatten();
        let Some(turn) = turn else {
            return Err(Interrupted);
        };
        self.shared.register(duration);
        self.shared.to_simulator.send(Report::Sleeping);
        turn.recv()
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        // Registered at once rather than when first polled: the limiter awaits its sleep as
        // soon as it has it, so nothing can happen in between.
        if self.shared.register(duration).is_some() {
            Box::pin(VirtualSleep)
        } else {
            Box::pin(core::future::ready(Err(Interrupted)))
        }
    }
}

/// An asynchronous sleep, its timer already registered: it resolves when the simulator wakes
/// that timer (fired or interrupted) and polls its caller. Dropping it needs no clean-up: the
/// simulator skips timers whose caller no longer sleeps on them.
struct VirtualSleep;

impl Future for VirtualSleep {
    type Output = Result<(), Interrupted>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        // Taken, so that a sleep the same caller begins after this one stays pending.
        WAKE.with(Cell::take).map_or(Poll::Pending, Poll::Ready)
    }
}
