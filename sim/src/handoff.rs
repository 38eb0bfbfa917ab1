//! A one-slot hand-over between the simulator and a blocking caller's thread.
//!
//! Exactly one side runs at a time: the simulator hands a caller its turn and waits for the
//! caller to hand it back (by sleeping or finishing). That strict alternation is what keeps
//! runs with real blocking threads deterministic.
//!
//! A hand-over is usually answered within microseconds, far sooner than a parked thread is
//! scheduled again on a busy machine, so the waiting side first yields its core for a while
//! (the other side may need it) and only then parks on the condition variable.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// How many times a waiting side yields before it parks.
const YIELDS: u32 = 100;

/// A slot one side fills and the other empties, waiting until it is full.
#[derive(Debug)]
pub(crate) struct Handoff<T> {
    slot: Mutex<Slot<T>>,
    /// Whether `slot` is full, readable without the lock while yielding.
    full: AtomicBool,
    filled: Condvar,
}

/// The value handed over, and whether the receiving side is parked waiting for it (so that
/// a hand-over answered while the receiver still yields costs no wake-up call).
#[derive(Debug)]
struct Slot<T> {
    value: Option<T>,
    parked: bool,
}

impl<T> Handoff<T> {
    pub(crate) fn new() -> Handoff<T> {
        Handoff {
            slot: Mutex::new(Slot {
                value: None,
                parked: false,
            }),
            full: AtomicBool::new(false),
            filled: Condvar::new(),
        }
    }

    /// Puts `value` in the slot and wakes the waiting side.
    pub(crate) fn send(&self, value: T) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        slot.value = Some(value);
        self.full.store(true, Ordering::Release);
        if slot.parked {
            self.filled.notify_one();
        }
    }

    /// Waits until the slot is full and empties it.
    pub(crate) fn recv(&self) -> T {
        for _ in 0..YIELDS {
            if self.full.load(Ordering::Acquire) {
                break;
            }
            std::thread::yield_now();
        }
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(value) = slot.value.take() {
                slot.parked = false;
                self.full.store(false, Ordering::Relaxed);
                return value;
            }
            slot.parked = true;
            slot = self
                .filled
                .wait(slot)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}
