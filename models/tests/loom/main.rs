//! Loom models: core itself (through its sync shim) with two and three threads, every
//! interleaving within a preemption bound; and the planted limiters, which the same models must
//! catch.
//!
//! Build with `RUSTFLAGS="--cfg fixed_window_loom"` in release (see `models/README.md`, or run
//! `cargo xtask models`).
#![cfg(fixed_window_loom)]

mod core_models;
mod explore;
mod keyed;
mod limit_change;
mod planted;
