//! A one-slot hand-over between the simulator and a blocking caller's thread.
//!
//! Exactly one side runs at a time: the simulator hands a caller its turn and waits for the
//! caller to hand it back (by sleeping or finishing). That strict alternation is what keeps
//! runs with real blocking threads deterministic.

use std::sync::{Condvar, Mutex, PoisonError};

/// A slot one side fills and the other empties, waiting until it is full.
#[derive(Debug)]
pub(crate) struct Handoff<T> {
    slot: Mutex<Option<T>>,
    filled: Condvar,
}

impl<T> Handoff<T> {
    pub(crate) fn new() -> Handoff<T> {
        Handoff {
            slot: Mutex::new(None),
            filled: Condvar::new(),
        }
    }

    /// Puts `value` in the slot and wakes the waiting side.
    pub(crate) fn send(&self, value: T) {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = Some(value);
        self.filled.notify_one();
    }

    /// Waits until the slot is full and empties it.
    pub(crate) fn recv(&self) -> T {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(value) = slot.take() {
                return value;
            }
            slot = self
                .filled
                .wait(slot)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}
