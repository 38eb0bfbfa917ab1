//! The one door to concurrency primitives in this crate, switched like core's own: std in the
//! normal build, loom's mocks under `--cfg fixed_window_loom`, shuttle's under
//! `--cfg fixed_window_shuttle`.
//!
//! The scenarios' threads and the history's global order use it: they must be the checker's,
//! or the checker could neither interleave nor see them. The planted limiters' state lives in
//! `fixed-window-broken`, behind its own shim switched by the same cfgs. The history's records
//! deliberately sit behind std types (see `history.rs`).

#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
    }
    pub(crate) mod thread {
        pub(crate) use std::thread::spawn;
    }
}

#[cfg(fixed_window_loom)]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};
    }
    pub(crate) mod thread {
        pub(crate) use loom::thread::spawn;
    }
}

#[cfg(all(fixed_window_shuttle, not(fixed_window_loom)))]
mod imp {
    pub(crate) mod atomic {
        pub(crate) use shuttle::sync::atomic::{AtomicU64, Ordering};
    }
    pub(crate) mod thread {
        pub(crate) use shuttle::thread::spawn;
    }
}

pub(crate) use imp::*;
