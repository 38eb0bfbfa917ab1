//! The shared limiter (`fixed-window-redis`) under simulation: client processes driving its
//! sans-IO [`Protocol`](fixed_window_redis::Protocol) over simulated connections to a
//! simulated Redis that runs the limiter's own Lua script.
//!
//! ```
//! use fixed_window_sim::ScenarioId;
//! use fixed_window_sim::shared::{SharedPlantedBug, SharedScenario, check_shared, run_shared};
//!
//! let scenario = SharedScenario::generate(&ScenarioId::seed(42));
//! assert!(check_shared(&scenario, &run_shared(&scenario, None)).is_empty());
//! // A planted bug runs through the same scenario; the oracle judges it the same way.
//! let planted = run_shared(&scenario, Some(SharedPlantedBug::RetryLostReply));
//! assert!(planted.stats.calls > 0);
//! ```
//!
//! # Types
//!
//! Scenarios
//! - [`SharedScenario`]: the shared limit, the [`ProcessSpec`]s (clock [`ProcessClock`],
//!   connection [`Link`], perhaps slower than the timeout ([`ProcessSpec::slow_link`]),
//!   configuration, perhaps a [`Misconfiguration`]), the [`SharedCaller`]s and their keys
//!   ([`KeyMode`]), the [`Faults`] ([`Fault`]), the changes of the limit ([`LimitChange`]).
//!
//! Running
//! - [`run_shared`]: one scenario, with the real limiter or a planted bug ([`SharedPlantedBug`]);
//!   [`SharedRun`], [`SharedStats`]; the trace, [`SharedRecord`] and its parts; the server's
//!   [`Script`]s and [`Reply`]s.
//!
//! Checking
//! - [`check_shared`]: the oracle, reporting [`Invariant`](crate::Invariant)s
//!   ([`Invariant::SHARED`](crate::Invariant::SHARED)); [`verdict_shared`]: the same, with its
//!   checks per rule.
//! - [`SharedTarget`]: the shared limiter's [`Family`](crate::Family), which
//!   [`sweep`](crate::sweep) drives as it does the others, its summary keeping
//!   [`SharedCounts`] (with [`FAULT_NAMES`]); [`write_shared_trace`].
//! - [`shrink_shared`]: a failing scenario cut down to fewer faults, processes and callers
//!   ([`SharedCut`]).

mod engine;
mod redis_lib;
pub use crate::shared::engine::Reply;
mod keyspace;
mod server;
pub use crate::shared::server::Script;
mod faults;
pub use crate::shared::faults::{Fault, Faults, Refusal};
mod cluster;
pub use crate::shared::cluster::{ClusterFault, ClusterSpec, SLOTS, crc16, key_slot};
mod planted;
pub use crate::shared::planted::{SharedPlantedBug, UnknownSharedPlantedBug};
mod record;
pub use crate::shared::record::{
    DecisionDigest, EventDigest, FaultRecord, LimitOutcome, Loss, Purpose, RedirectKind,
    ReplyDigest, SharedOutcome, SharedRecord,
};
mod run;
pub use crate::shared::run::{SHARED_EVENT_BUDGET, SharedRun, SharedStats, TIME_KEY, run_shared};
mod process;
mod replication;
pub use crate::shared::process::{Link, Misconfiguration, ProcessClock, ProcessSpec};
pub use crate::shared::replication::Replication;
mod key_limits;
pub use crate::shared::key_limits::KeyLimits;
mod key_live;
pub use crate::shared::key_live::KeyLimitChange;
mod limit_changes;
pub use crate::shared::limit_changes::LimitChange;
mod hand_backs;
mod peeks;
pub use crate::shared::hand_backs::HandBack;
mod scenario;
mod wide;
pub use crate::shared::scenario::{KeyMode, SHARED_NAME, SharedCaller, SharedScenario, Weight};
mod oracle;
pub use crate::shared::oracle::{check_shared, verdict_shared};
mod checked;
mod coverage;
pub use crate::shared::coverage::{SHARED_FEATURES, shared_features};
mod family;
pub use crate::shared::family::{FAULT_NAMES, SharedCounts, SharedTarget};
mod trace;
pub use crate::shared::trace::write_shared_trace;
mod shrink;
pub use crate::shared::shrink::{SharedCut, shrink_shared};
