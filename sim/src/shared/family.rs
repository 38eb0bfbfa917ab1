//! The shared limiter as a family: a [`SharedTarget`] names the real one or a planted one,
//! and a sweep counts the faults each scenario injected beside what every family counts.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use crate::family::{Family, Judged, Unjudged};
use crate::oracle::Invariant;
use crate::scenario::ScenarioId;
use crate::shared::checked::run_checked;
use crate::shared::coverage::{SHARED_FEATURES, shared_features};
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{DecisionDigest, FaultRecord, Loss, ReplyDigest, SharedRecord};
use crate::shared::run::SharedRun;
use crate::shared::scenario::SharedScenario;
use crate::shared::shrink::{SharedCut, shrink_shared};
use crate::summary::{Failure, Summary};

/// The shared limiter a sweep drives: the real one, or one with a planted bug.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SharedTarget {
    /// A planted bug, or `None` for the real shared limiter.
    pub planted: Option<SharedPlantedBug>,
}

/// The counts a sweep of the shared limiter keeps beside every family's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedCounts {
    /// Scenarios that were healthy (delay and jitter only, every link faster than its
    /// timeout).
    pub healthy: u64,
    /// Client processes over all scenarios.
    pub processes: u64,
    /// Fail-open permits.
    pub failed_open: u64,
    /// Rejections decided from a process's local memory.
    pub local_rejections: u64,
    /// Calls that failed `Unavailable`.
    pub unavailable: u64,
    /// Scripts the server ran.
    pub scripts: u64,
    /// Faults injected and what they caused, by name, each counted once per occurrence
    /// (`slow_link`: a process whose link is slower than its timeout); every one of
    /// [`FAULT_NAMES`] listed in a sweep's total.
    pub faults: BTreeMap<&'static str, u64>,
}

/// Every fault name a summary lists, zero or not.
pub const FAULT_NAMES: [&str; 22] = [
    "request_lost",
    "reply_lost",
    "connection_reset",
    "server_paused",
    "server_restarted",
    "failover",
    "writes_lost_in_failover",
    "script_flush",
    "noscript_reloads",
    "clock_step_forward",
    "clock_step_back",
    "client_crash",
    "counters_expired",
    "configuration_refused",
    "attempts_refused",
    "slow_link",
    "registration_failed",
    "slots_migrated",
    "shard_failover",
    "user_refused",
    "permission_revoked",
    "attempts_denied",
];

impl AddAssign for SharedCounts {
    fn add_assign(&mut self, other: SharedCounts) {
        self.healthy += other.healthy;
        self.processes += other.processes;
        self.failed_open += other.failed_open;
        self.local_rejections += other.local_rejections;
        self.unavailable += other.unavailable;
        self.scripts += other.scripts;
        for (name, count) in other.faults {
            *self.faults.entry(name).or_insert(0) += count;
        }
    }
}

/// Adds one run of `scenario` to `local`: its calls, its coverage and its faults.
fn count(local: &mut Summary<SharedTarget>, scenario: &SharedScenario, run: &SharedRun) {
    let stats = run.stats;
    let counts = &mut local.counts;
    counts.healthy += u64::from(scenario.healthy());
    let slow = scenario.processes.iter().filter(|p| p.slow_link()).count();
    *counts.faults.entry("slow_link").or_insert(0) += slow as u64;
    counts.processes += scenario.processes.len() as u64;
    local.calls += stats.calls;
    local.permits += stats.permits;
    counts.failed_open += stats.failed_open;
    local.rejections += stats.rejections;
    counts.local_rejections += stats.local_rejections;
    counts.unavailable += stats.unavailable;
    local.waits += stats.waits;
    counts.scripts += stats.scripts;
    local.events += stats.events;
    local.simulated_ns += u128::from(stats.simulated_ns);
    local
        .coverage
        .hit_mask(&SHARED_FEATURES, shared_features(scenario, run));
    for record in &run.records {
        let name = match record {
            SharedRecord::Lost {
                loss: Loss::Request,
                ..
            } => "request_lost",
            SharedRecord::Lost {
                loss: Loss::Reply, ..
            } => "reply_lost",
            SharedRecord::Lost {
                loss: Loss::Denied, ..
            } => "attempts_denied",
            SharedRecord::Executed {
                reply: ReplyDigest::Error { noscript: true },
                ..
            } => "noscript_reloads",
            SharedRecord::Expired { .. } => "counters_expired",
            SharedRecord::Conflicted { .. } => "configuration_refused",
            SharedRecord::RegistrationFailed { .. } => "registration_failed",
            SharedRecord::Decided {
                decision: DecisionDigest::Conflict,
                ..
            } => "attempts_refused",
            SharedRecord::Fault { fault, .. } => {
                if let FaultRecord::Failover { undone, .. }
                | FaultRecord::ShardFailover { undone, .. } = fault
                {
                    *counts.faults.entry("writes_lost_in_failover").or_insert(0) +=
                        undone.len() as u64;
                }
                fault.name()
            }
            _ => continue,
        };
        *counts.faults.entry(name).or_insert(0) += 1;
    }
}

impl Family for SharedTarget {
    type Counts = SharedCounts;
    /// The callers a shrink kept, and the cut of the rest.
    type Shrunk = (ScenarioId, SharedCut);

    const RULES: &'static [Invariant] = &Invariant::SHARED;
    // The run and the oracle are one catch: a panic in either leaves nothing judged.
    const UNJUDGED: Invariant = Invariant::Panic;
    const FEATURES: &'static [&'static str] = &SHARED_FEATURES;
    const MOST_SHRUNK: usize = 5;

    fn no_counts() -> SharedCounts {
        SharedCounts {
            faults: FAULT_NAMES.iter().map(|&name| (name, 0)).collect(),
            ..SharedCounts::default()
        }
    }

    fn limiter(self) -> &'static str {
        "shared"
    }

    fn planted(self) -> Option<&'static str> {
        self.planted.map(SharedPlantedBug::name)
    }

    fn judge(
        self,
        id: &ScenarioId,
        check_determinism: bool,
        local: &mut Summary<SharedTarget>,
    ) -> Result<Judged, Unjudged> {
        let scenario = SharedScenario::generate(id);
        let (run, verdict) = run_checked(&scenario, self.planted).map_err(|message| Unjudged {
            rule: Self::UNJUDGED,
            panic: Some(message),
        })?;
        count(local, &scenario, &run);
        local.checks.add(&verdict.checks);
        let nondeterministic = check_determinism
            && run_checked(&scenario, self.planted)
                .map_or(true, |(again, _)| again.trace_hash() != run.trace_hash());
        Ok(Judged {
            violations: verdict.violations,
            nondeterministic,
        })
    }

    fn shrink(self, id: &ScenarioId, rule: Invariant) -> (ScenarioId, SharedCut) {
        shrink_shared(id, self.planted, rule)
    }

    /// The scenario as drawn: a shrunk one needs its cut as well, printed on a line of its own.
    fn replay_id(self, failure: &Failure<(ScenarioId, SharedCut)>) -> String {
        failure.id.to_string()
    }
}
