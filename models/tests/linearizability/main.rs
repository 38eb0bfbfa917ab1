//! The linearizability checker and the invariants in the normal build: on hand-made histories
//! (including ones that must be rejected), on sequential scripts against core and the planted
//! limiters, and on core driven by real threads on the system clock.
#![cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]

mod hand_made;
mod indeterminate;
mod keyed;
mod limit_change;
mod planted;
mod real_threads;
mod shared;
