//! The features of a shared-limiter scenario's run: each kind of fault it injected, as its
//! trace shows it happening, a process whose registration failed and later succeeded, a
//! permit counted on a fixed origin, and calls of each weight ending as only they can.

use crate::shared::record::{FaultRecord, Loss, ReplyDigest, SharedOutcome, SharedRecord};
use crate::shared::run::SharedRun;
use crate::shared::scenario::{SharedScenario, Weight};

/// The features a shared sweep counts, in the order of [`shared_features`]' bits.
pub const SHARED_FEATURES: [&str; 18] = [
    "request_lost",
    "reply_lost",
    "connection_reset",
    "server_paused",
    "server_restarted",
    "failover",
    "script_flush",
    "clock_step_forward",
    "clock_step_back",
    "client_crash",
    "registration_failed_then_succeeded",
    "permit_on_fixed_origin",
    "weighted_permit",
    "drained",
    "too_many",
    "cluster",
    "cluster_redirect_followed",
    "cluster_failover",
];

/// The bit of `feature` in [`shared_features`]' mask.
const fn bit(feature: usize) -> u32 {
    1 << feature
}

/// The features `run` exercised, as a mask over [`SHARED_FEATURES`]: bit `i` for
/// `SHARED_FEATURES[i]`. A fault kind counts when its trace shows it happening (a request or
/// reply lost, a fault applied); `registration_failed_then_succeeded` when a process
/// registered after a registration of its own had failed; `permit_on_fixed_origin` when the
/// script counted a permit for processes configured with a fixed origin; `weighted_permit`
/// when a call for two permits or more got them counted, `drained` when a drain ended with
/// its window full, `too_many` when a call for more than the limit was refused; `cluster`
/// when a script ran on a simulated cluster's primary, `cluster_redirect_followed` when a
/// process followed `MOVED`, `cluster_failover` when a cluster's primary failed over.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::ScenarioId;
/// use fixed_window_sim::shared::{SHARED_FEATURES, SharedScenario, run_shared, shared_features};
///
/// let scenario = SharedScenario::generate(&ScenarioId::seed(3));
/// let mask = shared_features(&scenario, &run_shared(&scenario, None));
/// assert!(mask < 1 << SHARED_FEATURES.len());
/// ```
pub fn shared_features(scenario: &SharedScenario, run: &SharedRun) -> u32 {
    let mut mask = 0;
    let fixed = scenario.origin.is_some();
    let clustered = scenario.cluster.is_some();
    // Processes whose registration failed: a handful at most.
    let mut failed: Vec<u16> = Vec::new();
    for record in &run.records {
        if clustered
            && matches!(
                record,
                SharedRecord::Executed {
                    ran_script: true,
                    ..
                }
            )
        {
            // A script ran on one of the cluster's primaries.
            mask |= bit(15);
        }
        mask |= match record {
            SharedRecord::Lost {
                loss: Loss::Request,
                ..
            } => bit(0),
            SharedRecord::Lost {
                loss: Loss::Reply, ..
            } => bit(1),
            SharedRecord::Fault { fault, .. } => match fault {
                FaultRecord::Reset { .. } => bit(2),
                FaultRecord::Pause { .. } => bit(3),
                FaultRecord::Restart { .. } => bit(4),
                FaultRecord::Failover { .. } => bit(5),
                FaultRecord::Flush => bit(6),
                FaultRecord::ClockStep { delta_ns } if *delta_ns >= 0 => bit(7),
                FaultRecord::ClockStep { .. } => bit(8),
                FaultRecord::Crash { .. } => bit(9),
                FaultRecord::Migrated { .. } => 0,
                FaultRecord::ShardFailover { .. } => bit(17),
            },
            SharedRecord::RegistrationFailed { process, .. } => {
                failed.push(*process);
                0
            }
            SharedRecord::Registered { process, .. } if failed.contains(process) => bit(10),
            SharedRecord::Redirected { .. } => bit(16),
            SharedRecord::Executed {
                reply: ReplyDigest::Four { values },
                ..
            } if fixed && values[0] == 1 => bit(11),
            SharedRecord::Finish {
                caller, outcome, ..
            } => match (outcome, scenario.callers[*caller as usize].weight) {
                (SharedOutcome::Permitted { remaining: Some(_) }, Weight::Units(2..)) => bit(12),
                (SharedOutcome::Drained, _) => bit(13),
                (SharedOutcome::TooMany, _) => bit(14),
                _ => 0,
            },
            _ => 0,
        };
    }
    mask
}
