//! Histories: what each operation was, when it was invoked and returned (in a global order and
//! on the clock), and how it ended; plus the events the limiter emitted.
//!
//! The global order of invocations and returns is a counter on the checker's own atomic, with
//! sequentially consistent increments: it stands for real time, so an operation invoked after
//! another returned must see at least the clock that one saw. (On std atomics, loom would let
//! a later operation read an older clock value, since nothing in the program orders the two;
//! a real clock never goes back.) The records themselves sit behind a std mutex: collecting
//! them is instrumentation, and the lock is never held across a scheduling point.

use std::sync::{Mutex, PoisonError};

use fixed_window::{Clock, Instant};

use crate::config::Config;
use crate::outcome::{Event, Kind, Outcome};
use crate::subject::{Events, Subject};
use crate::sync::atomic::{AtomicU64, Ordering};

/// One completed operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// What was asked.
    pub kind: Kind,
    /// Position of the invocation in the history's global order.
    pub invoked: u64,
    /// Position of the return in the history's global order (after `invoked`).
    pub returned: u64,
    /// The clock read just after the invocation.
    pub started: Instant,
    /// The clock read just before the return.
    pub ended: Instant,
    /// How it ended.
    pub outcome: Outcome,
    /// For [`Kind::Call`], whether the operation ran; otherwise whether a permit was granted.
    pub ran: bool,
}

/// A complete history of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// The limiter's configuration.
    pub config: Config,
    /// Every operation, in no particular order.
    pub records: Vec<Record>,
    /// Every event the limiter emitted.
    pub events: Vec<Event>,
}

/// Records operations from many threads into one [`History`].
///
/// # Examples
///
/// One thread, two calls on a manual clock.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Instant, ManualClock};
/// use fixed_window_models::{Config, Kind, Recorder, Target, invariants};
///
/// let clock = ManualClock::new();
/// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(10), Duration::ZERO);
/// let recorder = Recorder::new(config);
/// let limiter = Target::Core.build(&config, clock.clone(), recorder.events());
/// recorder.perform(&clock, &*limiter, Kind::TryAcquire);
/// recorder.perform(&clock, &*limiter, Kind::Call);
/// let history = recorder.finish();
/// assert_eq!(history.records.len(), 2);
/// assert!(invariants::check(&history).is_ok());
/// ```
#[derive(Debug)]
pub struct Recorder {
    config: Config,
    order: AtomicU64,
    records: Mutex<Vec<Record>>,
    events: Events,
}

impl Recorder {
    /// A recorder for a limiter configured as `config`.
    pub fn new(config: Config) -> Recorder {
        Recorder {
            config,
            order: AtomicU64::new(0),
            records: Mutex::new(Vec::new()),
            events: Events::new(),
        }
    }

    /// The event log to give the limiter.
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// Performs one operation of `kind` on `subject`, reading `clock` around it, and records
    /// it.
    pub fn perform(&self, clock: &dyn Clock, subject: &dyn Subject, kind: Kind) -> Outcome {
        let invoked = self.order.fetch_add(1, Ordering::SeqCst);
        let started = clock.now();
        let mut ran = false;
        let outcome = match kind {
            Kind::TryAcquire => subject.try_acquire(),
            Kind::Acquire => subject.acquire(),
            Kind::Call => subject.call(&mut || ran = true),
        };
        if kind != Kind::Call {
            ran = outcome.is_permitted();
        }
        let ended = clock.now();
        let returned = self.order.fetch_add(1, Ordering::SeqCst);
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Record {
                kind,
                invoked,
                returned,
                started,
                ended,
                outcome,
                ran,
            });
        outcome
    }

    /// The history recorded so far, with the events logged so far.
    pub fn finish(&self) -> History {
        History {
            config: self.config,
            records: std::mem::take(
                &mut *self.records.lock().unwrap_or_else(PoisonError::into_inner),
            ),
            events: self.events.take(),
        }
    }
}
