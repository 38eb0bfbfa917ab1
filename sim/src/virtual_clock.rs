//! The simulator's clock: it implements core's [`Clock`], reads a [`ClockModel`] at the
//! current virtual time, and turns every sleep into a timer in the simulator's event queue.
//!
//! Asynchronous sleeps are futures that stay pending until the simulator fires (or
//! interrupts) their timer. They are polled only on the simulator's own thread, so the
//! simulator tells the woken sleep how it ended through a thread-local: the future then needs
//! no state at all, and boxing it (as core's `Sleep` type requires) allocates nothing.
//!
//! A blocking sleep runs on a blocking caller's own stack, a coroutine the simulator resumes
//! on its own thread: the sleep registers its timer and suspends the coroutine, and the
//! simulator resumes it, with how the sleep ended, when it fires or interrupts that timer.
//! Everything therefore runs on the simulator's thread, one thing at a time.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use fixed_window::{Clock, Instant, Interrupt, Interrupted, Sleep};

use crate::clock_model::ClockModel;
use crate::coroutine;
use crate::record::Record;

/// Caller id used in records made while no caller is being run.
pub(crate) const NO_CALLER: u32 = u32::MAX;

thread_local! {
    /// How the sleep being woken on this thread ended, while the simulator polls its caller.
    static WAKE: Cell<Option<Result<(), Interrupted>>> = const { Cell::new(None) };
}

thread_local! {
    /// The trace of the run this thread is simulating, if it is simulating one: every record
    /// is made on the simulator's thread (blocking callers' coroutines included), so the trace
    /// needs no lock.
    static TRACE: RefCell<Option<Vec<Record>>> = const { RefCell::new(None) };
}

/// Makes this thread the simulator's, recording a trace until [`end_trace`]; `expected` is
/// how many records the run is likely to make.
pub(crate) fn begin_trace(expected: usize) {
    TRACE.with(|cell| *cell.borrow_mut() = Some(Vec::with_capacity(expected)));
}

/// The trace recorded on this thread since [`begin_trace`].
pub(crate) fn end_trace() -> Vec<Record> {
    TRACE
        .with(|cell| cell.borrow_mut().take())
        .unwrap_or_default()
}

/// Appends `record` to the trace of the run this thread is simulating; a record made while
/// no run is being simulated here (a clock used on its own) has no trace to go to and nobody
/// to read it.
#[inline]
pub(crate) fn record(record: Record) {
    TRACE.with(|cell| {
        if let Some(trace) = cell.borrow_mut().as_mut() {
            trace.push(record);
        }
    });
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

/// The part of the simulation that the clock, the listeners and the operations share.
///
/// Everything runs on the simulator's thread, so the lock is never contended; the fields read
/// on every step are atomics (the limiter's clock must be `Sync`), read and written with plain
/// loads and stores, and records go to a thread-local trace, so that the common path takes no
/// lock and no atomic read-modify-write.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The clock's readings over virtual time.
    model: ClockModel,
    /// The current virtual time; only the simulator moves it.
    time: AtomicU64,
    /// The clock's reading at `time`, read several times an event, so worked out once when
    /// time moves.
    reading: AtomicU64,
    /// The caller being run, to whom sleeps, events and operations belong ([`NO_CALLER`] if
    /// none).
    current: AtomicU32,
    /// Whether the `pending_*` fields hold a timer the simulator has not taken yet. A step registers at
    /// most one timer in practice (a caller sleeps once, then waits), so it goes here rather
    /// than through the lock; any further ones go to `more_registered`.
    registered: AtomicBool,
    /// The registered timer's owner, wake-up time and id.
    pending_owner: AtomicU32,
    pending_wake: AtomicU64,
    pending_id: AtomicUsize,
    /// Whether `more_registered` holds timers too.
    overflowed: AtomicBool,
    /// The next timer's id.
    next_timer: AtomicUsize,
    /// Timers registered since the simulator last moved them into its queue, after the one in
    /// the `pending_*` fields.
    more_registered: Mutex<Vec<Timer>>,
}

impl Shared {
    fn more_registered(&self) -> std::sync::MutexGuard<'_, Vec<Timer>> {
        self.more_registered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn time(&self) -> u64 {
        self.time.load(Ordering::Relaxed)
    }

    pub(crate) fn set_time(&self, t: u64) {
        self.time.store(t, Ordering::Relaxed);
        self.reading.store(self.model.reading(t), Ordering::Relaxed);
    }

    pub(crate) fn reading(&self) -> u64 {
        self.reading.load(Ordering::Relaxed)
    }

    /// The caller being run, or [`NO_CALLER`].
    pub(crate) fn current(&self) -> u32 {
        self.current.load(Ordering::Relaxed)
    }

    pub(crate) fn set_current(&self, caller: u32) {
        self.current.store(caller, Ordering::Relaxed);
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
        into.append(&mut self.more_registered());
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
        record(Record::Sleep {
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
            self.more_registered().push(Timer { owner, wake, id });
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
                reading: AtomicU64::new(model.reading(0)),
                model,
                time: AtomicU64::new(0),
                current: AtomicU32::new(NO_CALLER),
                registered: AtomicBool::new(false),
                pending_owner: AtomicU32::new(NO_CALLER),
                pending_wake: AtomicU64::new(0),
                pending_id: AtomicUsize::new(0),
                overflowed: AtomicBool::new(false),
                next_timer: AtomicUsize::new(0),
                more_registered: Mutex::new(Vec::new()),
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
            record(Record::Sleep {
                caller: owner,
                at,
                until: u128::from(at) + duration.as_nanos(),
            });
            return Err(Interrupted);
        }
        // Only a blocking caller's coroutine can wait for its timer; anywhere else nothing would
        // ever wake the sleep.
        if !coroutine::on_coroutine() {
            return Err(Interrupted);
        }
        self.shared.register(duration);
        coroutine::suspend()
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
