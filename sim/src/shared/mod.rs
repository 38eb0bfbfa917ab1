//! The shared limiter (`fixed-window-redis`) under simulation: client processes driving its
//! sans-IO [`Protocol`](fixed_window_redis::Protocol) over simulated connections to a
//! simulated Redis that runs the limiter's own Lua script.

mod engine;
pub use crate::shared::engine::Reply;
mod keyspace;
mod server;
pub use crate::shared::server::Script;
mod faults;
pub use crate::shared::faults::{Fault, Faults};
mod planted;
pub use crate::shared::planted::{Plant, UnknownPlant};
mod record;
pub use crate::shared::record::{
    DecisionDigest, EventDigest, FaultRecord, Loss, Purpose, ReplyDigest, SharedOutcome,
    SharedRecord,
};
mod run;
pub use crate::shared::run::{SHARED_EVENT_BUDGET, SharedRun, SharedStats, run_shared};
mod scenario;
pub use crate::shared::scenario::{
    KeyMode, Link, ProcessClock, ProcessSpec, SHARED_NAME, SharedCaller, SharedScenario,
};
mod oracle;
pub use crate::shared::oracle::check_shared;
mod sweep;
pub use crate::shared::sweep::{
    FAULT_NAMES, SharedFailure, SharedSummary, SharedSweep, sweep_shared,
};
mod trace;
pub use crate::shared::trace::write_shared_trace;
