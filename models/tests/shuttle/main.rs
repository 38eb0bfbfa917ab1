//! Shuttle models: core itself (through its sync shim) with many racing threads and a moving
//! manual clock, under shuttle's random and PCT schedulers; and the planted limiters, which the
//! same runs must catch.
//!
//! Build with `RUSTFLAGS="--cfg fixed_window_shuttle"` (see `models/README.md`, or run
//! `cargo xtask models`). A failure prints shuttle's schedule string; set
//! `FIXED_WINDOW_SHUTTLE_SCHEDULE` to it and run the one failing test to replay it.
#![cfg(fixed_window_shuttle)]

mod core_models;
mod explore;
mod keyed;
mod limit_change;
mod planted;
mod weighted;
