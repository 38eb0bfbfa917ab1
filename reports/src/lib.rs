//! Charts and the HTML report from benchmark and simulator results.
//!
//! The binary (`fixed-window-report`, run by `cargo xtask report`) reads what exists, draws
//! what it can and writes one self-contained page, saying which inputs were missing and where
//! each figure came from:
//!
//! - [`BenchRuns`]: the runs `cargo xtask bench` recorded (`target/bench-runs/<n>/`), each a
//!   [`BenchRun`] with its [`RunManifest`] (when, which command, [`Mode`] full or quick), its
//!   [`BenchResults`] (criterion's results, each a [`Measurement`]) and the figures counted
//!   beside them: [`CasRetries`], the shared limiter's [`RedisLatency`] (percentiles and
//!   commands per attempt), the keyed limiters' [`KeyedMemory`] and the Redis server's own
//!   [`ServerTime`] per decision; [`begin_run`] and
//!   [`record_run`] are how `cargo xtask bench` records one. Without recorded runs, criterion's
//!   latest results (`target/criterion`) are shown as of unknown origin.
//! - [`targets`]: the performance targets, each ratio computed within one run, with the
//!   median and [`Spread`] over the runs.
//! - [`SimSummary`] and [`Trace`]: the simulator's `summary.json` and `trace.jsonl` (the
//!   latter with the simulator's own line types), read leniently (unknown fields and line types
//!   are skipped, unreadable lines counted); [`SweepProvenance`] and
//!   [`same_sweep`]: whether the two come from the same sweep.
//! - [`Sweep`]: the `Backoff` sweep and the setting it recommends.
//! - [`charts`]: the SVG charts; [`Table`]: the page's tables; [`numbers`]: numbers formatted
//!   for people.
//! - [`Inputs`] and [`render`]: gathering the inputs and writing the page.

mod bench_results;
mod bench_runs;
mod cas_retries;
pub mod charts;
mod inputs;
mod keyed_memory;
mod mutants;
pub mod numbers;
mod page;
mod redis_latency;
mod server_time;
mod sim_summary;
mod sim_trace;
mod spread;
mod sweep;
mod sweep_provenance;
pub mod targets;

pub use crate::bench_results::{BenchResults, LoadError, Measurement};
pub use crate::bench_runs::{
    BenchRun, BenchRuns, CAS_RETRIES, KEYED_MEMORY, MANIFEST, Mode, REDIS_LATENCY, RunManifest,
    SERVER_TIME, Scope, Source, begin_run, record_run,
};
pub use crate::cas_retries::{CasRetries, RetryPoint};
pub use crate::inputs::{Inputs, MUTATED_CRATES, Paths};
pub use crate::keyed_memory::{Churn, Held, KeyedMemory, LIVE_WINDOW, LiveKeys};
pub use crate::mutants::{Equivalents, MutationRun};
pub use crate::page::table::{Table, TableCell};
pub use crate::page::{Report, SIMULATOR_TARGET, render};
pub use crate::redis_latency::{Attempts, RedisLatency};
pub use crate::server_time::{CommandStats, Decisions, ServerTime};
pub use crate::sim_summary::SimSummary;
pub use crate::sim_trace::{Call, Scenario, Trace};
pub use crate::spread::Spread;
pub use crate::sweep::{Cell, NOISE, Recommendation, Spins, Sweep};
pub use crate::sweep_provenance::{SameSweep, SweepProvenance, same_sweep};
