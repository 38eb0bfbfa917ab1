//! The one door to concurrency primitives.
//!
//! Everything else in the crate imports atomics, locks, spinning and yielding from here, so a
//! model checker can swap them all at once: `--cfg fixed_window_loom` selects loom's mocks,
//! `--cfg fixed_window_shuttle` selects shuttle's, and the normal build uses `std`. The paths
//! mirror std's (`sync::atomic`, `hint`, `thread`).
//!
//! Neither loom nor shuttle has a 128-bit atomic. Under them, [`atomic::AtomicU128`] is a stand-in
//! built from the checker's own `Mutex`: every operation is one critical section, which the
//! checker schedules like any other synchronisation point. It is linearizable, as the real
//! lock-free `cmpxchg16b` is, so the interleavings the models explore are the ones the real
//! type allows.

#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use portable_atomic::AtomicU128;
        pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    }
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) mod hint {
        pub(crate) use std::hint::spin_loop;
    }
    pub(crate) mod thread {
        pub(crate) use std::thread::yield_now;
    }
}

#[cfg(fixed_window_loom)]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use super::super::stand_in::AtomicU128;
        pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    }
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) mod hint {
        pub(crate) use loom::hint::spin_loop;
    }
    pub(crate) mod thread {
        pub(crate) use loom::thread::yield_now;
    }
}

#[cfg(all(fixed_window_shuttle, not(fixed_window_loom)))]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use super::super::stand_in::AtomicU128;
        pub(crate) use shuttle::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    }
    pub(crate) use shuttle::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) mod hint {
        pub(crate) use shuttle::hint::spin_loop;
    }
    pub(crate) mod thread {
        pub(crate) use shuttle::thread::yield_now;
    }
}

#[cfg(any(fixed_window_loom, fixed_window_shuttle))]
mod stand_in {
    use super::imp::Mutex;
    use super::imp::atomic::Ordering;

    /// A 128-bit "atomic" for model checkers that lack one: a value behind the checker's own
    /// mutex. Only the operations the state word uses are provided.
    #[derive(Debug)]
    pub(crate) struct AtomicU128(Mutex<u128>);

    impl AtomicU128 {
        pub(crate) fn new(value: u128) -> Self {
            AtomicU128(Mutex::new(value))
        }

        pub(crate) fn load(&self, _order: Ordering) -> u128 {
            *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }

        pub(crate) fn compare_exchange_weak(
            &self,
            current: u128,
            new: u128,
            _success: Ordering,
            _failure: Ordering,
        ) -> Result<u128, u128> {
            let mut value = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if *value == current {
                *value = new;
                Ok(current)
            } else {
                Err(*value)
            }
        }
    }
}

pub(crate) use imp::*;
