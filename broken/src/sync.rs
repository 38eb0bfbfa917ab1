//! The one door to concurrency primitives in this crate, switched like core's own: std in the
//! normal build, loom's mocks under `--cfg fixed_window_loom`, shuttle's under
//! `--cfg fixed_window_shuttle`.
//!
//! A planted limiter's state must be the checker's, or the checker could neither interleave its
//! callers between a read and a write nor see the race its bug opens there.

#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    }
    pub(crate) use std::sync::Mutex;
    pub(crate) mod hint {
        pub(crate) use std::hint::spin_loop;
    }
}

#[cfg(fixed_window_loom)]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    }
    pub(crate) use loom::sync::Mutex;
    pub(crate) mod hint {
        // loom's spin hint is a yield to its scheduler, which a retry loop needs so that the
        // exploration can run the thread it is waiting for.
        pub(crate) use loom::hint::spin_loop;
    }
}

#[cfg(all(fixed_window_shuttle, not(fixed_window_loom)))]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use shuttle::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    }
    pub(crate) use shuttle::sync::Mutex;
    pub(crate) mod hint {
        pub(crate) use shuttle::hint::spin_loop;
    }
}

pub(crate) use imp::*;
