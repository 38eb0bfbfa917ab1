//! A deterministic discrete-event simulator of the `fixed-window` rate limiter, with an
//! independent oracle.
//!
//! A [`Scenario`] (limiter configuration, clock model and workload, all drawn from one seed)
//! is [`run`] against a [`Target`]: the real [`RateLimiter`](fixed_window::RateLimiter), driven
//! through its own blocking and asynchronous entry points on a [`VirtualClock`], or a
//! [`Planted`] one; or, on a keyed scenario whose callers are drawn over keys, the
//! real [`KeyedRateLimiter`](fixed_window::KeyedRateLimiter) or a planted keyed one. The run's
//! trace is then [`check`]ed by an oracle that models the specification on its own, key by
//! key, and a keyed limiter's memory against the bound its documented reclamation gives. The
//! same seed always gives the same trace.
//!
//! ```
//! use fixed_window_sim::{Scenario, ScenarioId, Target, check, run};
//!
//! let scenario = Scenario::generate(&ScenarioId::seed(2024));
//! let trace = run(&scenario, Target::Real)?;
//! assert!(check(&scenario, &trace).is_empty());
//! # Ok::<(), fixed_window::ConfigError>(())
//! ```
//!
//! # Types
//!
//! Scenarios
//! - [`Scenario`], [`ScenarioId`] (a seed, plus the callers a shrink kept and its [`Cuts`]), [`Config`],
//!   [`CallerSpec`], [`PanickingListener`], [`Pattern`].
//! - [`ClockModel`], [`ClockKind`], [`Segment`]: what the clock reads over virtual time.
//! - [`Population`]: how a keyed scenario's callers are drawn over keys
//!   ([`Scenario::generate_keyed`], [`Target::scenario`]).
//!
//! Running
//! - [`run`], [`Target`], [`Run`], [`Stats`]; [`VirtualClock`], the clock the limiter sees.
//! - [`Subject`]: the entry points the simulator drives, with [`Operation`], [`Granted`] and
//!   [`SimulatedPanic`]; [`Planted`] and [`PlantedBug`], [`KeyedPlantedBug`]: limiters with
//!   one planted bug each.
//! - [`Record`], [`Outcome`], [`CallKind`], [`OpKind`], [`OpOutput`]: the trace.
//!
//! Checking
//! - [`check`], [`Invariant`], [`Violation`]: the oracle; [`verdict`], [`Verdict`] and
//!   [`Memory`]: the same, with a keyed limiter's keys held against the bound, and [`Checks`]:
//!   how many times it judged each rule.
//! - [`Coverage`], [`plain_features`], [`PLAIN_FEATURES`],
//!   [`coverage_failure`]: how many scenarios exercised each feature the simulator promises to
//!   reach, and the gate on it.
//! - [`shrink`]: a smaller failing scenario.
//! - [`sweep`], [`Sweep`], [`Summary`], [`Failure`]: many scenarios over all cores, of any
//!   [`Family`] of limiters (the plain and keyed limiters' [`Target`], with [`PlainCounts`];
//!   the shared limiter's [`SharedTarget`](shared::SharedTarget)), each judged by it
//!   ([`Judged`], [`Unjudged`]).
//! - [`silence_simulated_panics`]: the panic hook that keeps deliberate panics quiet.
//! - [`write_trace`], [`TraceLine`], [`CallOutcome`]: a run as JSON Lines, the format the
//!   report reads.
//!
//! The shared limiter
//! - [`shared`]: `fixed-window-redis` driven through its sans-IO client by simulated
//!   processes over a simulated network to a simulated Redis running its Lua script, with
//!   faults; its oracle, planted bugs and sweep.

mod planted;
pub use crate::planted::{Planted, PlantedBug};
pub use fixed_window_broken::KeyedPlantedBug;
mod clock_model;
pub use crate::clock_model::{ClockKind, ClockModel, Segment};
mod coroutine;
mod coverage;
pub use crate::coverage::{Coverage, PLAIN_FEATURES, coverage_failure, plain_features};
mod event_heap;
mod family;
pub use crate::family::{Family, Judged, Unjudged, plain::PlainCounts};
mod event_queue;
mod keyed;
pub use crate::keyed::Population;
mod oracle;
pub use crate::oracle::{Checks, Invariant, Memory, Verdict, Violation, check, verdict};
mod record;
mod resolution;
pub use crate::record::{CallKind, CallOutcome, OpKind, OpOutput, Outcome, Record};
mod scenario;
pub use crate::scenario::{
    CallerSpec, Config, Cuts, KeyLimitChange, KeyLimits, PanickingListener, ParseIdError, Pattern,
    Scenario, ScenarioId,
};
pub mod shared;
mod shrink;
pub use crate::shrink::shrink;
mod simulation;
pub use crate::simulation::{EVENT_BUDGET, LIMITER_NAME, Run, Stats, Target, run};
mod subject;
pub use crate::subject::{Granted, Operation, SimulatedPanic, Subject, silence_simulated_panics};
mod sweep;
pub use crate::sweep::{Provenance, Sweep, sweep};
mod summary;
pub use crate::summary::{DETERMINISM, Failure, Summary};
mod trace;
pub use crate::trace::{TraceLine, write_trace};
mod virtual_clock;
pub use crate::virtual_clock::VirtualClock;
mod world;
