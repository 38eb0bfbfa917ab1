//! Interleavings: loom and shuttle models of the `fixed-window` limiter, a linearizability
//! checker for recorded histories, and planted limiters that prove the checkers
//! can fail.
//!
//! The models run core itself: under `--cfg fixed_window_loom` or `--cfg fixed_window_shuttle`
//! core's sync shim hands its state word, its backoff and the [`ManualClock`]'s atomic to the
//! checker, which then explores (loom) or samples (shuttle) how racing callers interleave. See
//! the crate's README for the suites, their bounds and how to replay a failure.
//!
//! [`ManualClock`]: fixed_window::ManualClock
//!
//! # Types
//!
//! The limiters under test
//! - [`Subject`]: what every checker drives; implemented by core's `RateLimiter` and by
//!   [`Planted`], a limiter with one deliberate [`PlantedBug`]. [`Target`] picks one.
//! - [`Config`]: limit, period, origin and max wait, with window arithmetic written afresh
//!   from the rules (`docs/rules.md`).
//! - [`WallClock`]: real time whose first reading is zero; [`record_on_wall_clock`] records
//!   real threads on it.
//!
//! Histories
//! - [`Recorder`] turns operations from many threads into a [`History`] of [`Record`]s
//!   ([`Kind`], [`Outcome`]) and [`Event`]s (through [`Events`]).
//!
//! Checkers
//! - [`invariants::check`]: the rules (`docs/rules.md`) on a history.
//! - [`linearizability::check`]: a Wing–Gong search with Lowe's memoisation against the
//!   sequential specification in [`spec`].
//! - [`Violation`]: a checker's verdict.
//! - [`linearizability::linearize`]: the same search for any
//!   [`Specification`](linearizability::Specification), with indeterminate operations (a reply
//!   lost: it may take effect at any point after its invocation, or never).
//! - [`shared`]: the shared limiter's histories (many processes, keys, the server's clock, lost
//!   replies, lost server state), checked for linearizability key by key and against the
//!   ledger's bound.
//! - [`scenario`]: scripts of racing threads on a manual clock, the assertion every run
//!   makes, and [`scenario::violation_found`] for proving a checker fails.
//!
//! The keyed limiter
//! - [`KeyedSubject`]: what the keyed models drive; implemented by core's `KeyedRateLimiter`
//!   and by [`PlantedKeyed`], a keyed limiter with one [`KeyedPlantedBug`]. [`KeyedTarget`] picks
//!   one; [`OneKey`] is one key seen as a plain [`Subject`].
//! - [`KeyedScript`] and [`KeyedStep`]: scripts of racing threads on keys, with sweeps;
//!   [`play_keyed`] records one history per key, [`play_and_check_keyed`] judges each with the
//!   plain limiter's checkers.
//!
//! Changing the limit
//! - [`limit_change`]: `set_limit` racing weighted claims and drains on the plain and keyed
//!   limiters (core's, and the catalogue's with a planted bug), and the check of each run
//!   against the rules of changing the limit.

mod config;
pub use crate::config::Config;
mod history;
pub use crate::history::{History, Record, Recorder};
pub mod invariants;
mod keyed;
pub mod linearizability;
pub use crate::keyed::{KeyedSubject, OneKey};
mod keyed_planted;
pub use crate::keyed_planted::{KeyedPlantedBug, PlantedKeyed};
mod keyed_target;
pub use crate::keyed_target::KeyedTarget;
mod keyed_scenario;
pub mod limit_change;
pub use crate::keyed_scenario::{KeyedScript, KeyedStep, play_and_check_keyed, play_keyed};
mod outcome;
pub use crate::outcome::{Event, Kind, Outcome};
mod planted;
pub use crate::planted::{Planted, PlantedBug};
pub mod scenario;
pub mod shared;
pub mod spec;
mod subject;
pub use crate::subject::{Events, Subject};
mod target;
pub use crate::target::Target;
mod sync;
mod violation;
pub use crate::violation::Violation;
mod wall;
pub use crate::wall::{WallClock, record_on_wall_clock};
