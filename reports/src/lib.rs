//! Charts and the HTML report from benchmark and simulator results.
//!
//! The binary (`fixed-window-report`, run by `cargo xtask report`) reads what exists, draws
//! what it can and writes one self-contained page, saying which inputs were missing:
//!
//! - [`BenchResults`]: criterion's results (`target/criterion/**/new/*.json`), each a
//!   [`Measurement`]; [`CasRetries`]: lost compare-and-set races per attempt
//!   (`target/cas-retries.json`).
//! - [`SimSummary`] and [`Trace`]: the simulator's `summary.json` and `trace.jsonl` (the
//!   latter with the simulator's own line types), read leniently (unknown line types are
//!   skipped, unreadable lines counted).
//! - [`targets`]: the performance targets, as ratios within one run.
//! - [`Sweep`]: the `Backoff` sweep and the setting it recommends.
//! - [`charts`]: the SVG charts.
//! - [`Inputs`] and [`render`]: gathering the inputs and writing the page.

mod bench_results;
mod cas_retries;
pub mod charts;
mod inputs;
mod page;
mod sim_summary;
mod sim_trace;
mod sweep;
pub mod targets;

pub use crate::bench_results::{BenchResults, LoadError, Measurement};
pub use crate::cas_retries::{CasRetries, RetryPoint};
pub use crate::inputs::{Inputs, Paths};
pub use crate::page::{Report, render};
pub use crate::sim_summary::SimSummary;
pub use crate::sim_trace::{Call, Scenario, Trace};
pub use crate::sweep::{Cell, NOISE, Recommendation, Spins, Sweep};
