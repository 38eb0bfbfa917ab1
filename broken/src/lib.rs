//! Fixed-window limiters with planted bugs: the one catalogue every checker of the workspace
//! proves itself on. A checker that never fails proves nothing, so the simulator's oracle, the
//! models' invariants and linearizability checks each run these limiters and must catch them.
//!
//! There is one algorithm, written once: a fixed window read from a cell, decided by the spec
//! crate (`fixed-window-spec`: its grid, its count's decision, its deadline and its waiting
//! call with the stalled-clock rule), and claimed with a compare-and-set. Each [`PlantedBug`]
//! breaks it in one marked place; apart from that place a planted limiter is correct, so a checker
//! that flags one has found its bug. It shares no code with core, whose window arithmetic is what
//! the checkers check. The keyed limiter, [`PlantedKeyedLimiter`], is that same count per key, on
//! one grid, in a table that reclaims ended keys on the schedule `fixed-window` documents for its
//! own keyed limiter, with each [`KeyedPlantedBug`] planted in the one place it breaks.
//!
//! # Types
//!
//! - [`PlantedBug`]: the catalogue, with [`PlantedBug::races_only`],
//!   [`PlantedBug::extremes_only`], [`PlantedBug::weighted_or_drained_only`],
//!   [`PlantedBug::unix_epoch_only`] and [`PlantedBug::limit_change_only`] saying which bugs a
//!   checker needs races, the end of the timeline, weighted calls and drains, windows aligned
//!   to Unix time, or a limit changed while callers claim to see; [`UnknownPlantedBug`] for a
//!   name that is none.
//! - [`PlantedLimiter`]: a limiter with one planted bug; [`Grant`] and [`Refusal`]: how its calls end.
//! - [`PlantedKeyedLimiter`]: a keyed limiter with one [`KeyedPlantedBug`] of its reclamation or
//!   its per-key counts (a live key reclaimed, a claim lost to a removal, one count for all keys,
//!   keys never reclaimed, the limit read before a key's count); [`UnknownKeyedPlantedBug`] for
//!   a name that is none.
//! - [`Cell`], where its [`Window`] lives: [`Packed`] in one atomic word that loom and shuttle
//!   see, or [`Wide`] for a simulator's full-range instants and limits.
//!
//! Under `--cfg fixed_window_loom` or `--cfg fixed_window_shuttle` the cells are built on the
//! checker's primitives, as core's state is.
//!
//! # Examples
//!
//! A limiter whose window boundary is a nanosecond late rejects a call at the boundary.
//!
//! ```
//! use core::time::Duration;
//! use fixed_window::{ManualClock, Settings};
//! use fixed_window_broken::{PlantedLimiter, PlantedBug, Wide};
//!
//! let clock = ManualClock::new();
//! let limiter: PlantedLimiter<Wide, _> =
//!     PlantedLimiter::new(PlantedBug::BoundaryOffByOne, Settings::new("api", 1, Duration::from_nanos(10))?, clock.clone());
//! assert!(limiter.try_acquire().is_ok());
//! clock.advance(Duration::from_nanos(10));
//! assert!(limiter.try_acquire().is_err());
//! clock.advance(Duration::from_nanos(1));
//! assert!(limiter.try_acquire().is_ok());
//! # Ok::<(), fixed_window::ConfigError>(())
//! ```

mod cell;
pub use crate::cell::{Cell, Window};
mod planted_bug;
pub use crate::planted_bug::{PlantedBug, UnknownPlantedBug};
mod keyed;
pub use crate::keyed::{KeyedPlantedBug, PlantedKeyedLimiter, UnknownKeyedPlantedBug};
mod limiter;
pub use crate::limiter::PlantedLimiter;
mod outcome;
pub use crate::outcome::{Grant, Refusal};
mod packed;
pub use crate::packed::Packed;
mod pause;
mod sync;
mod waiting;
mod wide;
pub use crate::wide::Wide;
