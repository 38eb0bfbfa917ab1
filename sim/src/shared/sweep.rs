//! A sweep of shared-limiter scenarios over threads: each run, checked, counted, with the
//! faults it injected and the rules it broke.

use std::collections::BTreeMap;

use crate::coverage::Coverage;
use crate::oracle::{Checks, Invariant, Violation};
use crate::scenario::ScenarioId;
use crate::shared::checked::run_checked;
use crate::shared::coverage::{SHARED_FEATURES, shared_features};
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{Loss, SharedRecord};
use crate::shared::run::SharedRun;
use crate::shared::scenario::SharedScenario;
use crate::shared::shrink::{SharedCut, shrink_shared};
use crate::sweep::across_threads;
use crate::sweep::{DETERMINISM, scenario_id};

/// What to sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedSweep {
    /// The sweep's seed; scenario `i`'s seed derives from it and `i`, as for the
    /// in-process limiter's sweep.
    pub seed: u64,
    /// Scenarios in the whole sweep (over all shards).
    pub scenarios: u64,
    /// This shard and the number of shards: scenario `i` belongs to shard `i % n`.
    pub shard: (u64, u64),
    /// Worker threads.
    pub threads: usize,
    /// A planted bug, or `None` for the real shared limiter.
    pub planted: Option<SharedPlantedBug>,
    /// Whether to run every scenario twice and compare trace hashes.
    pub check_determinism: bool,
}

impl SharedSweep {
    /// The id of scenario `index`.
    pub fn scenario(&self, index: u64) -> ScenarioId {
        scenario_id(self.seed, index)
    }
}

/// A failing scenario.
#[derive(Debug, Clone)]
pub struct SharedFailure {
    /// Its index in the sweep.
    pub index: u64,
    /// Its id, for `--replay`.
    pub id: ScenarioId,
    /// What the oracle reported.
    pub violations: Vec<Violation>,
    /// Whether its two runs differed.
    pub nondeterministic: bool,
    /// A panic's message, if one escaped.
    pub panic: Option<String>,
    /// The smallest scenario found that still breaks its first rule: the callers kept and the
    /// cut of the rest (for the first few failures of a sweep only).
    pub shrunk: Option<(ScenarioId, SharedCut)>,
}

/// Failures past this many are reported without shrinking, to keep a bad sweep short.
const MOST_SHRUNK: usize = 5;

/// Totals of a shared sweep.
#[derive(Debug, Clone, Default)]
pub struct SharedSummary {
    /// The sweep's seed.
    pub seed: u64,
    /// Scenarios run.
    pub scenarios: u64,
    /// Of them, healthy (delay and jitter only, every link faster than its timeout).
    pub healthy: u64,
    /// Client processes over all scenarios.
    pub processes: u64,
    /// Calls begun.
    pub calls: u64,
    /// Counted permits.
    pub permits: u64,
    /// Fail-open permits.
    pub failed_open: u64,
    /// Rejections.
    pub rejections: u64,
    /// Of them, decided from the local memory.
    pub local_rejections: u64,
    /// Calls that failed `Unavailable`.
    pub unavailable: u64,
    /// Sleeps.
    pub waits: u64,
    /// Scripts the server ran.
    pub scripts: u64,
    /// Events processed.
    pub events: u64,
    /// Virtual time, summed.
    pub simulated_ns: u128,
    /// Faults injected and what they caused, by name, each counted once per occurrence
    /// (`slow_link`: a process whose link is slower than its timeout).
    pub faults: BTreeMap<&'static str, u64>,
    /// Scenarios that broke each rule, by name (every rule listed).
    pub violations: BTreeMap<&'static str, u64>,
    /// How many times the oracle checked each rule, over all scenarios.
    pub checks: Checks,
    /// The failing scenarios, in index order.
    pub failures: Vec<SharedFailure>,
    /// Scenarios that exercised each of [`SHARED_FEATURES`] (every one listed, zero or not).
    pub coverage: Coverage,
}

/// Every fault name a summary lists, zero or not.
pub const FAULT_NAMES: [&str; 19] = [
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
];

impl SharedSummary {
    fn add(&mut self, other: SharedSummary) {
        self.scenarios += other.scenarios;
        self.healthy += other.healthy;
        self.processes += other.processes;
        self.calls += other.calls;
        self.permits += other.permits;
        self.failed_open += other.failed_open;
        self.rejections += other.rejections;
        self.local_rejections += other.local_rejections;
        self.unavailable += other.unavailable;
        self.waits += other.waits;
        self.scripts += other.scripts;
        self.events += other.events;
        self.simulated_ns += other.simulated_ns;
        self.checks.add(&other.checks);
        for (name, count) in other.faults {
            *self.faults.entry(name).or_insert(0) += count;
        }
        for (name, count) in other.violations {
            *self.violations.entry(name).or_insert(0) += count;
        }
        self.failures.extend(other.failures);
        self.coverage.add(&other.coverage);
    }

    fn count(&mut self, scenario: &SharedScenario, run: &SharedRun) {
        let stats = run.stats;
        self.scenarios += 1;
        self.healthy += u64::from(scenario.healthy());
        let slow = scenario.processes.iter().filter(|p| p.slow_link()).count();
        *self.faults.entry("slow_link").or_insert(0) += slow as u64;
        self.processes += scenario.processes.len() as u64;
        self.calls += stats.calls;
        self.permits += stats.permits;
        self.failed_open += stats.failed_open;
        self.rejections += stats.rejections;
        self.local_rejections += stats.local_rejections;
        self.unavailable += stats.unavailable;
        self.waits += stats.waits;
        self.scripts += stats.scripts;
        self.events += stats.events;
        self.simulated_ns += u128::from(stats.simulated_ns);
        self.coverage
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
                SharedRecord::Executed {
                    reply: crate::shared::ReplyDigest::Error { noscript: true },
                    ..
                } => "noscript_reloads",
                SharedRecord::Expired { .. } => "counters_expired",
                SharedRecord::Conflicted { .. } => "configuration_refused",
                SharedRecord::RegistrationFailed { .. } => "registration_failed",
                SharedRecord::Decided {
                    decision: crate::shared::DecisionDigest::Conflict,
                    ..
                } => "attempts_refused",
                SharedRecord::Fault { fault, .. } => {
                    if let crate::shared::FaultRecord::Failover { undone, .. }
                    | crate::shared::FaultRecord::ShardFailover { undone, .. } = fault
                    {
                        *self.faults.entry("writes_lost_in_failover").or_insert(0) +=
                            undone.len() as u64;
                    }
                    fault.name()
                }
                _ => continue,
            };
            *self.faults.entry(name).or_insert(0) += 1;
        }
    }
}

/// Runs the sweep, calling `progress` after each scenario.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::shared::{SharedSweep, sweep_shared};
///
/// let summary = sweep_shared(
///     &SharedSweep { seed: 9, scenarios: 8, shard: (0, 1), threads: 2, planted: None, check_determinism: true },
///     |_| {},
/// );
/// assert_eq!(summary.scenarios, 8);
/// assert!(summary.failures.is_empty());
/// ```
pub fn sweep_shared(config: &SharedSweep, progress: impl Fn(u64) + Sync) -> SharedSummary {
    let mut total = SharedSummary {
        seed: config.seed,
        faults: FAULT_NAMES.iter().map(|&name| (name, 0)).collect(),
        coverage: Coverage::new(&SHARED_FEATURES),
        violations: std::iter::once(DETERMINISM)
            .chain(Invariant::SHARED.iter().map(|invariant| invariant.name()))
            .chain(std::iter::once(Invariant::Panic.name()))
            .map(|name| (name, 0))
            .collect(),
        ..SharedSummary::default()
    };
    let (parts, failures) = across_threads(
        config.scenarios,
        config.shard,
        config.threads,
        |index, local: &mut SharedSummary| one(config, index, local),
        progress,
    );
    for part in parts {
        total.add(part);
    }
    total.failures = failures
        .into_iter()
        .enumerate()
        .map(|(i, mut failure)| {
            if i < MOST_SHRUNK
                && let Some(first) = failure.violations.first()
            {
                failure.shrunk = Some(shrink_shared(&failure.id, config.planted, first.invariant));
            }
            failure
        })
        .collect();
    total
}

fn one(config: &SharedSweep, index: u64, local: &mut SharedSummary) -> Option<SharedFailure> {
    let id = config.scenario(index);
    let scenario = SharedScenario::generate(&id);
    let (run, verdict) = match run_checked(&scenario, config.planted) {
        Ok(checked) => checked,
        Err(message) => {
            local.scenarios += 1;
            *local.violations.entry(Invariant::Panic.name()).or_insert(0) += 1;
            return Some(SharedFailure {
                index,
                id,
                violations: Vec::new(),
                nondeterministic: false,
                panic: Some(message),
                shrunk: None,
            });
        }
    };
    local.count(&scenario, &run);
    local.checks.add(&verdict.checks);
    let violations = verdict.violations;
    let nondeterministic = config.check_determinism
        && run_checked(&scenario, config.planted)
            .map_or(true, |(again, _)| again.trace_hash() != run.trace_hash());
    if violations.is_empty() && !nondeterministic {
        return None;
    }
    let mut broken: Vec<Invariant> = violations.iter().map(|v| v.invariant).collect();
    broken.sort_unstable();
    broken.dedup();
    for invariant in broken {
        *local.violations.entry(invariant.name()).or_insert(0) += 1;
    }
    if nondeterministic {
        *local.violations.entry(DETERMINISM).or_insert(0) += 1;
    }
    Some(SharedFailure {
        index,
        id,
        violations,
        nondeterministic,
        panic: None,
        shrunk: None,
    })
}
