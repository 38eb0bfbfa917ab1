//! The features of a shared-limiter scenario's run: each kind of fault it injected, as its
//! trace shows it happening, a process whose registration failed and later succeeded, a
//! permit counted on a fixed origin, calls of each weight ending as only they can, and the
//! changes of the limit.

use std::collections::HashMap;

use fixed_window_redis::ScriptReply;

use crate::shared::faults::Refusal;
use crate::shared::record::{
    DecisionDigest, FaultRecord, LimitOutcome, Loss, Purpose, RedirectKind, ReplyDigest,
    SharedOutcome, SharedRecord,
};
use crate::shared::run::SharedRun;
use crate::shared::scenario::{SharedScenario, Weight};

/// The features a shared sweep counts, in the order of [`shared_features`]' bits.
pub const SHARED_FEATURES: [&str; 56] = [
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
    "limit_lowered",
    "limit_raised",
    "limit_lowered_below_count",
    "permit_after_limit_change",
    "attempt_found_limit_changed",
    "zero_limit_refused",
    "limit_change_ran_unanswered",
    "cluster",
    "cluster_redirect_followed",
    "cluster_failover",
    "counter_told_limit_changed",
    "cluster_ask_followed",
    "waited_for_replica",
    "unreplicated",
    "failover_with_wait",
    "limit_learnt_in_background",
    "memory_met_limit_change",
    "user_refused",
    "permission_revoked",
    "recovered_from_refusal",
    "share_leased",
    "permit_from_share",
    "started_answered_conflict",
    "peeked",
    "coarse_clock",
    "password_rotated",
    "auth_required",
    "cluster_counter_conflict",
    "share_handed_back",
    "own_key_limit",
    "key_conflict",
    "handshake_refused",
    "own_key_limit_on_cluster",
    "own_key_limit_after_change",
    "key_limit_changed_live",
    "key_limit_changed_live_on_cluster",
    "key_limit_changed_live_with_lease",
    "key_limit_changed_live_under_local",
    "key_limit_changed_live_with_set_limit",
    "key_limit_changed_live_with_peeks",
    "key_limit_changed_live_apart",
];

/// The bit of `feature` in [`shared_features`]' mask: its place in [`SHARED_FEATURES`],
/// found when the crate compiles, so that a feature named there has one bit and an unknown
/// name fails the build.
const fn bit(feature: &str) -> u64 {
    let mut index = 0;
    while index < SHARED_FEATURES.len() {
        if same(SHARED_FEATURES[index].as_bytes(), feature.as_bytes()) {
            return 1 << index;
        }
        index += 1;
    }
    panic!("not a shared feature")
}

/// Whether two names are the same (`==` on `str` is not `const`).
const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

const BIT_REQUEST_LOST: u64 = bit("request_lost");
const BIT_REPLY_LOST: u64 = bit("reply_lost");
const BIT_CONNECTION_RESET: u64 = bit("connection_reset");
const BIT_SERVER_PAUSED: u64 = bit("server_paused");
const BIT_SERVER_RESTARTED: u64 = bit("server_restarted");
const BIT_FAILOVER: u64 = bit("failover");
const BIT_SCRIPT_FLUSH: u64 = bit("script_flush");
const BIT_CLOCK_STEP_FORWARD: u64 = bit("clock_step_forward");
const BIT_CLOCK_STEP_BACK: u64 = bit("clock_step_back");
const BIT_CLIENT_CRASH: u64 = bit("client_crash");
const BIT_REGISTRATION_FAILED_THEN_SUCCEEDED: u64 = bit("registration_failed_then_succeeded");
const BIT_PERMIT_ON_FIXED_ORIGIN: u64 = bit("permit_on_fixed_origin");
const BIT_WEIGHTED_PERMIT: u64 = bit("weighted_permit");
const BIT_DRAINED: u64 = bit("drained");
const BIT_TOO_MANY: u64 = bit("too_many");
const BIT_LIMIT_LOWERED: u64 = bit("limit_lowered");
const BIT_LIMIT_RAISED: u64 = bit("limit_raised");
const BIT_LIMIT_LOWERED_BELOW_COUNT: u64 = bit("limit_lowered_below_count");
const BIT_PERMIT_AFTER_LIMIT_CHANGE: u64 = bit("permit_after_limit_change");
const BIT_ATTEMPT_FOUND_LIMIT_CHANGED: u64 = bit("attempt_found_limit_changed");
const BIT_ZERO_LIMIT_REFUSED: u64 = bit("zero_limit_refused");
const BIT_LIMIT_CHANGE_RAN_UNANSWERED: u64 = bit("limit_change_ran_unanswered");
const BIT_CLUSTER: u64 = bit("cluster");
const BIT_CLUSTER_REDIRECT_FOLLOWED: u64 = bit("cluster_redirect_followed");
const BIT_CLUSTER_FAILOVER: u64 = bit("cluster_failover");
const BIT_COUNTER_TOLD_LIMIT_CHANGED: u64 = bit("counter_told_limit_changed");
const BIT_CLUSTER_ASK_FOLLOWED: u64 = bit("cluster_ask_followed");
const BIT_WAITED_FOR_REPLICA: u64 = bit("waited_for_replica");
const BIT_UNREPLICATED: u64 = bit("unreplicated");
const BIT_FAILOVER_WITH_WAIT: u64 = bit("failover_with_wait");
const BIT_LIMIT_LEARNT_IN_BACKGROUND: u64 = bit("limit_learnt_in_background");
const BIT_MEMORY_MET_LIMIT_CHANGE: u64 = bit("memory_met_limit_change");
const BIT_USER_REFUSED: u64 = bit("user_refused");
const BIT_PERMISSION_REVOKED: u64 = bit("permission_revoked");
const BIT_RECOVERED_FROM_REFUSAL: u64 = bit("recovered_from_refusal");
const BIT_SHARE_LEASED: u64 = bit("share_leased");
const BIT_PERMIT_FROM_SHARE: u64 = bit("permit_from_share");
const BIT_STARTED_ANSWERED_CONFLICT: u64 = bit("started_answered_conflict");
const BIT_PEEKED: u64 = bit("peeked");
const BIT_COARSE_CLOCK: u64 = bit("coarse_clock");
const BIT_PASSWORD_ROTATED: u64 = bit("password_rotated");
const BIT_AUTH_REQUIRED: u64 = bit("auth_required");
const BIT_CLUSTER_COUNTER_CONFLICT: u64 = bit("cluster_counter_conflict");
const BIT_SHARE_HANDED_BACK: u64 = bit("share_handed_back");
const BIT_OWN_KEY_LIMIT: u64 = bit("own_key_limit");
const BIT_KEY_CONFLICT: u64 = bit("key_conflict");
const BIT_OWN_KEY_LIMIT_ON_CLUSTER: u64 = bit("own_key_limit_on_cluster");
const BIT_OWN_KEY_LIMIT_AFTER_CHANGE: u64 = bit("own_key_limit_after_change");
const BIT_HANDSHAKE_REFUSED: u64 = bit("handshake_refused");
const BIT_KEY_LIMIT_CHANGED_LIVE: u64 = bit("key_limit_changed_live");
const BIT_KEY_LIMIT_CHANGED_LIVE_ON_CLUSTER: u64 = bit("key_limit_changed_live_on_cluster");
const BIT_KEY_LIMIT_CHANGED_LIVE_WITH_LEASE: u64 = bit("key_limit_changed_live_with_lease");
const BIT_KEY_LIMIT_CHANGED_LIVE_UNDER_LOCAL: u64 = bit("key_limit_changed_live_under_local");
const BIT_KEY_LIMIT_CHANGED_LIVE_WITH_SET_LIMIT: u64 = bit("key_limit_changed_live_with_set_limit");
const BIT_KEY_LIMIT_CHANGED_LIVE_WITH_PEEKS: u64 = bit("key_limit_changed_live_with_peeks");
const BIT_KEY_LIMIT_CHANGED_LIVE_APART: u64 = bit("key_limit_changed_live_apart");

/// The features `run` exercised, as a mask over [`SHARED_FEATURES`]: bit `i` for
/// `SHARED_FEATURES[i]`. A fault kind counts when its trace shows it happening (a request or
/// reply lost, a fault applied); `registration_failed_then_succeeded` when a process
/// registered after a registration of its own had failed; `permit_on_fixed_origin` when the
/// script counted a permit for processes configured with a fixed origin; `weighted_permit`
/// when a call for two permits or more got them counted, `drained` when a drain ended with
/// its window full, `too_many` when a call for more than the limit was refused.
/// `limit_lowered` and `limit_raised` when the script stored a change of the limit below or
/// above the one stored before, `limit_lowered_below_count` when it lowered the limit below
/// the count of a key's current window (as far as the permits' replies tell it),
/// `permit_after_limit_change` when the script counted a permit after a change,
/// `attempt_found_limit_changed` when an attempt was told of a newer limit (and made again),
/// `zero_limit_refused` when `set_limit(0)` was refused, `limit_change_ran_unanswered` when a
/// `set_limit` ended `Unavailable` although the script had stored its change (its reply lost
/// or late). `cluster` when a script ran on a simulated cluster's primary,
/// `cluster_redirect_followed` when a process followed `MOVED`, `cluster_failover` when a
/// cluster's primary failed over, `counter_told_limit_changed` when an attempt on a cluster was
/// told of a newer limit by its key's counter, `cluster_ask_followed` when a process followed
/// `ASK` (a slot migrating). A `TRYAGAIN` counts as nothing: it needs a call of two keys of
/// one slot, which the drawn keys almost never make. Where the processes wait for replicas,
/// `waited_for_replica` when a permit was decided from a reply whose `WAIT` counted the
/// replica, `unreplicated` when a call's attempt ended `Unavailable` (or failed open) because
/// its `WAIT` counted none, and `failover_with_wait` when the server or a primary failed over.
/// `limit_learnt_in_background` when a process's background read of the configuration
/// ([`LIMIT_REFRESH`](fixed_window_redis::LIMIT_REFRESH)) was told of a newer limit.
/// `memory_met_limit_change` when a call began on a key its process had found full (a window
/// it may remember), after the process learnt a newer limit than that reply's and before the
/// window opened: where a memory kept across the change would reject it. `user_refused` and
/// `permission_revoked` when the server's access control began refusing the limiter's user
/// (it does not exist; it may not run the commands), `recovered_from_refusal` when a process
/// that had an attempt refused later had a permit counted by the server. `share_leased` when
/// the script leased a share of a window, `permit_from_share` when a process granted a permit
/// from a share without a round trip.
/// `started_answered_conflict` when a process made with `start` answered a call `Conflict`
/// (its registration refused). `peeked` when a caller's peek was answered by the server (the
/// script's read-only run). `coarse_clock` when a process whose clock ticks coarser than a
/// nanosecond decided a call. `password_rotated` when the server's password for the
/// limiter's user changed (each process given the new one later), `auth_required` when the
/// server began requiring a password its clients had not given, `handshake_refused` when every
/// TLS handshake with the server began to fail. `cluster_counter_conflict` when
/// an attempt on a cluster was refused by its key's counter, which a process of other settings
/// wrote: after the configuration key was lost and a process configured apart registered afresh.
/// `share_handed_back` when a hand-back of a share's unspent rest took permits off a window's
/// count.
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
pub fn shared_features(scenario: &SharedScenario, run: &SharedRun) -> u64 {
    let mut mask = 0;
    let fixed = scenario.origin.is_some();
    let clustered = scenario.cluster.is_some();
    // Processes whose registration failed: a handful at most.
    let mut failed: Vec<u16> = Vec::new();
    let peeks = peek_requests(run);
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
            mask |= BIT_CLUSTER;
        }
        mask |= match record {
            SharedRecord::Lost {
                loss: Loss::Request,
                ..
            } => BIT_REQUEST_LOST,
            SharedRecord::Lost {
                loss: Loss::Reply, ..
            } => BIT_REPLY_LOST,
            SharedRecord::Fault { fault, .. } => fault_bit(fault),
            SharedRecord::RegistrationFailed { process, .. } => {
                failed.push(*process);
                0
            }
            SharedRecord::Registered { process, .. } if failed.contains(process) => {
                BIT_REGISTRATION_FAILED_THEN_SUCCEEDED
            }
            SharedRecord::Redirected { kind, .. } => match kind {
                RedirectKind::Moved => BIT_CLUSTER_REDIRECT_FOLLOWED,
                RedirectKind::Ask => BIT_CLUSTER_ASK_FOLLOWED,
                RedirectKind::TryAgain => 0,
            },
            // A peek's run answers as a permit, counting none.
            SharedRecord::Executed {
                request,
                reply: ReplyDigest::Four { values },
                ..
            } if fixed && values[0] == 1 && !peeks.contains(request) => BIT_PERMIT_ON_FIXED_ORIGIN,
            SharedRecord::Executed {
                reply: ReplyDigest::Four { values },
                ..
            } if values[0] == 4 => BIT_SHARE_LEASED,
            SharedRecord::Executed {
                reply: ReplyDigest::Two { values: [5, taken] },
                ..
            } if *taken > 0 => BIT_SHARE_HANDED_BACK,
            SharedRecord::Decided {
                request: None,
                decision: DecisionDigest::Permitted { .. },
                ..
            } => BIT_PERMIT_FROM_SHARE,
            SharedRecord::Finish {
                caller, outcome, ..
            } => match (outcome, scenario.callers[*caller as usize].weight) {
                (SharedOutcome::Permitted { remaining: Some(_) }, Weight::Units(2..)) => {
                    BIT_WEIGHTED_PERMIT
                }
                (SharedOutcome::Drained, _) => BIT_DRAINED,
                (SharedOutcome::TooMany, _) => BIT_TOO_MANY,
                (SharedOutcome::Conflict, _)
                    if scenario.processes[scenario.callers[*caller as usize].process as usize]
                        .started =>
                {
                    BIT_STARTED_ANSWERED_CONFLICT
                }
                _ => 0,
            },
            _ => 0,
        };
    }
    if !scenario.limit_changes.is_empty() {
        mask |= limit_features(scenario, run) | memory_features(scenario, run);
    }
    if scenario.replication.is_some() {
        mask |= wait_features(run);
    }
    if clustered {
        mask |= counter_conflict_features(run);
    }
    if !scenario.key_limits.is_empty() {
        mask |= key_limit_features(scenario, run);
    }
    if !scenario.key_live.is_empty() {
        mask |= key_live_features(scenario, run);
    }
    mask | recovery_features(run) | peek_features(run) | coarse_feature(scenario, run)
}

/// `own_key_limit`: the script counted a permit of a key with a limit of its own in
/// the process that asked, `own_key_limit_on_cluster` on a cluster,
/// `own_key_limit_after_change` for a process holding a changed limiter's limit (a version
/// above 0); `key_conflict`: an attempt was answered the key's conflict (its window counted
/// by another limit).
fn key_limit_features(scenario: &SharedScenario, run: &SharedRun) -> u64 {
    // Each request's process and key, where it is for a caller, and the version it carries.
    let mut asked: HashMap<u32, (u16, u16, u32)> = HashMap::new();
    let mut mask = 0;
    for record in &run.records {
        match *record {
            SharedRecord::Sent {
                request,
                caller: Some(caller),
                process,
                purpose: Purpose::Acquire,
                version,
                ..
            } => {
                let key = scenario.callers[caller as usize].key;
                asked.insert(request, (process, key, version));
            }
            SharedRecord::Executed {
                request,
                ran_script: true,
                reply: ReplyDigest::Four { values },
                ..
            } => match (values[0], asked.get(&request)) {
                (1 | 4, Some(&(process, key, version)))
                    if scenario.key_limits.own(process, key).is_some() =>
                {
                    mask |= BIT_OWN_KEY_LIMIT;
                    if scenario.cluster.is_some() {
                        mask |= BIT_OWN_KEY_LIMIT_ON_CLUSTER;
                    }
                    // A changed limiter's limit: a live change of a key's bumps the version too.
                    if version > 0 && scenario.key_live.is_empty() {
                        mask |= BIT_OWN_KEY_LIMIT_AFTER_CHANGE;
                    }
                }
                (-2, Some(_)) => mask |= BIT_KEY_CONFLICT,
                _ => {}
            },
            _ => {}
        }
    }
    mask
}

/// The requests of peeks' script calls, in order.
fn peek_requests(run: &SharedRun) -> Vec<u32> {
    let sent = run.records.iter().filter_map(|record| match record {
        SharedRecord::Sent {
            request,
            purpose: Purpose::Peek,
            ..
        } => Some(*request),
        _ => None,
    });
    sent.collect()
}

/// `peeked`: a caller's peek answered by the server.
fn peek_features(run: &SharedRun) -> u64 {
    let answered = run.records.iter().any(|record| {
        matches!(
            record,
            SharedRecord::Peeked {
                request: Some(_),
                ..
            }
        )
    });
    if answered { BIT_PEEKED } else { 0 }
}

/// The bit of a fault its trace shows happening (none for a slot's migration or a stalled
/// shard, which have no feature of their own).
fn fault_bit(fault: &FaultRecord) -> u64 {
    match fault {
        FaultRecord::Reset { .. } => BIT_CONNECTION_RESET,
        FaultRecord::Pause { .. } => BIT_SERVER_PAUSED,
        FaultRecord::Restart { .. } => BIT_SERVER_RESTARTED,
        FaultRecord::Failover { .. } => BIT_FAILOVER,
        FaultRecord::Flush => BIT_SCRIPT_FLUSH,
        FaultRecord::ClockStep { delta_ns } if *delta_ns >= 0 => BIT_CLOCK_STEP_FORWARD,
        FaultRecord::ClockStep { .. } => BIT_CLOCK_STEP_BACK,
        FaultRecord::Crash { .. } => BIT_CLIENT_CRASH,
        FaultRecord::Migrating { .. }
        | FaultRecord::KeysMigrated { .. }
        | FaultRecord::Migrated { .. }
        | FaultRecord::ShardStalled { .. } => 0,
        FaultRecord::ShardFailover { .. } => BIT_CLUSTER_FAILOVER,
        FaultRecord::AccessRefused { refusal, .. } => refusal_bit(*refusal),
    }
}

/// The bit of the refusal of the limiter's user that began: `user_refused`,
/// `permission_revoked`, `password_rotated`, `auth_required` or `handshake_refused`.
fn refusal_bit(refusal: Refusal) -> u64 {
    match refusal {
        Refusal::NoUser => BIT_USER_REFUSED,
        Refusal::PermissionRevoked => BIT_PERMISSION_REVOKED,
        Refusal::PasswordRotated => BIT_PASSWORD_ROTATED,
        Refusal::AuthRequired => BIT_AUTH_REQUIRED,
        Refusal::HandshakeRefused => BIT_HANDSHAKE_REFUSED,
    }
}

/// `coarse_clock`: a process whose clock ticks coarser than a nanosecond decided a
/// call.
fn coarse_feature(scenario: &SharedScenario, run: &SharedRun) -> u64 {
    let coarse = |caller: u32| {
        scenario
            .callers
            .get(caller as usize)
            .and_then(|c| scenario.processes.get(c.process as usize))
            .is_some_and(|p| p.clock.tick > 1)
    };
    let decided = run
        .records
        .iter()
        .any(|record| matches!(record, SharedRecord::Decided { caller, .. } if coarse(*caller)));
    if decided { BIT_COARSE_CLOCK } else { 0 }
}

/// `cluster_counter_conflict`: on a cluster, where attempts read no configuration,
/// an attempt's script answered a conflict, which only its key's counter can tell.
fn counter_conflict_features(run: &SharedRun) -> u64 {
    // The requests that carry attempts.
    let mut attempts: Vec<bool> = Vec::new();
    for record in &run.records {
        match record {
            SharedRecord::Sent {
                request,
                caller,
                purpose,
                ..
            } => {
                let index = *request as usize;
                if attempts.len() <= index {
                    attempts.resize(index + 1, false);
                }
                attempts[index] = *purpose == Purpose::Acquire && caller.is_some();
            }
            SharedRecord::Executed {
                request,
                reply: ReplyDigest::Four { values },
                ..
            } if values[0] == -1 && attempts.get(*request as usize) == Some(&true) => {
                return BIT_CLUSTER_COUNTER_CONFLICT;
            }
            _ => {}
        }
    }
    0
}

/// `recovered_from_refusal`: a process whose attempt the server refused (or its
/// connection answered with the refusal it kept) later had a permit counted by the server.
fn recovery_features(run: &SharedRun) -> u64 {
    // Each request's process, and the processes refused so far.
    let mut processes: Vec<u16> = Vec::new();
    let mut refused: Vec<u16> = Vec::new();
    for record in &run.records {
        match record {
            SharedRecord::Sent {
                request, process, ..
            } => {
                let index = *request as usize;
                if processes.len() <= index {
                    processes.resize(index + 1, u16::MAX);
                }
                processes[index] = *process;
            }
            SharedRecord::Lost {
                request,
                loss: Loss::Denied,
                ..
            } => {
                if let Some(&process) = processes.get(*request as usize) {
                    refused.push(process);
                }
            }
            SharedRecord::Decided {
                request: Some(request),
                decision: DecisionDigest::Permitted { .. },
                ..
            } if processes
                .get(*request as usize)
                .is_some_and(|process| refused.contains(process)) =>
            {
                return BIT_RECOVERED_FROM_REFUSAL;
            }
            _ => {}
        }
    }
    0
}

/// The features of waiting for replicas (bits 27 to 29).
fn wait_features(run: &SharedRun) -> u64 {
    let mut mask = 0;
    // Each request's caller, the requests whose `WAIT` counted a replica, and the callers
    // whose attempt's `WAIT` counted none (the attempt then decides with no request).
    let mut callers: Vec<Option<u32>> = Vec::new();
    let mut counted: Vec<u32> = Vec::new();
    let mut short: Vec<u32> = Vec::new();
    for record in &run.records {
        mask |= match record {
            SharedRecord::Sent {
                request, caller, ..
            } => {
                let index = *request as usize;
                if callers.len() <= index {
                    callers.resize(index + 1, None);
                }
                callers[index] = *caller;
                0
            }
            SharedRecord::Acknowledged {
                request, replicas, ..
            } => {
                if *replicas > 0 {
                    counted.push(*request);
                } else if let Some(&Some(caller)) = callers.get(*request as usize) {
                    short.push(caller);
                }
                0
            }
            SharedRecord::Decided {
                caller,
                request,
                decision,
                ..
            } => match (decision, request) {
                (DecisionDigest::Permitted { .. }, Some(request)) if counted.contains(request) => {
                    BIT_WAITED_FOR_REPLICA
                }
                (DecisionDigest::Unavailable { .. } | DecisionDigest::FailedOpen { .. }, None)
                    if short.contains(caller) =>
                {
                    BIT_UNREPLICATED
                }
                _ => 0,
            },
            SharedRecord::Fault {
                fault: FaultRecord::Failover { .. } | FaultRecord::ShardFailover { .. },
                ..
            } => BIT_FAILOVER_WITH_WAIT,
            _ => 0,
        };
    }
    mask
}

/// What the script last said of a key's window: its start and (at least) the permits counted
/// in it.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: u64,
    used: u32,
}

/// Each request's purpose and sender, by id: the caller, or for a change's requests the
/// change.
#[derive(Default)]
struct Senders(Vec<(Purpose, Option<u32>)>);

impl Senders {
    /// Request `request` was sent for `purpose` by `sender`.
    fn sent(&mut self, request: u32, purpose: Purpose, sender: Option<u32>) {
        let index = request as usize;
        if self.0.len() <= index {
            self.0.resize(index + 1, (Purpose::Load, None));
        }
        self.0[index] = (purpose, sender);
    }

    /// What request `request` was sent for, and by whom.
    fn get(&self, request: u32) -> Option<&(Purpose, Option<u32>)> {
        self.0.get(request as usize)
    }
}

/// `key_limit_changed_live`: a live change of a key's limit ran (the script stored its new
/// version), and after it the script counted a permit on that key;
/// `key_limit_changed_live_on_cluster` too where that happened on a cluster (the counter on
/// a primary of its own, the change on the configuration's).
/// `key_limit_changed_live_with_lease` when after it the script leased a share of that key;
/// `key_limit_changed_live_under_local` when after it a process decided an attempt on that key
/// by its local share (`FailPolicy::Local`) holding the change's version or a later one.
/// `key_limit_changed_live_with_set_limit`: so, after a change of the limiter's limit ran
/// too; `key_limit_changed_live_with_peeks`: a peek told of a newer version (its process
/// reading live limits) was answered by the server after it.
/// `key_limit_changed_live_apart`: the script counted a permit after it for the process
/// configured apart for that key (another limit for it than the others').
fn key_live_features(scenario: &SharedScenario, run: &SharedRun) -> u64 {
    let mut mask = 0;
    let mut requests = Senders::default();
    // Each change run: its key and the version it stored.
    let mut changed: Vec<(u16, u32)> = Vec::new();
    let mut limiter_changed = false;
    // The peeking callers told of a newer version.
    let mut told: Vec<u32> = Vec::new();
    // The version the first change of `caller`'s key stored, if one ran.
    let first_change = |changed: &[(u16, u32)], caller: u32| {
        let key = scenario.callers[caller as usize].key;
        changed
            .iter()
            .filter(|&&(k, _)| k == key)
            .map(|&(_, version)| version)
            .min()
    };
    for record in &run.records {
        match *record {
            SharedRecord::Sent {
                request,
                caller,
                purpose,
                change,
                ..
            } => requests.sent(request, purpose, caller.or(change)),
            SharedRecord::Executed {
                request,
                reply: ReplyDigest::Four { values },
                ..
            } => match (requests.get(request), ScriptReply::parse(&values)) {
                (
                    Some(&(Purpose::Limit, Some(change))),
                    Some(ScriptReply::Changed { version, .. }),
                ) => match scenario.live_change(change) {
                    Some(live) => changed.extend(
                        scenario
                            .key_live
                            .get(live as usize)
                            .map(|c| (c.key, version)),
                    ),
                    None => limiter_changed = true,
                },
                (Some(&(Purpose::Acquire, Some(caller))), Some(reply)) => {
                    if first_change(&changed, caller).is_none() {
                        continue;
                    }
                    mask |= match reply {
                        ScriptReply::Permitted { .. } if scenario.cluster.is_some() => {
                            BIT_KEY_LIMIT_CHANGED_LIVE | BIT_KEY_LIMIT_CHANGED_LIVE_ON_CLUSTER
                        }
                        ScriptReply::Permitted { .. } => BIT_KEY_LIMIT_CHANGED_LIVE,
                        ScriptReply::Leased { .. } => BIT_KEY_LIMIT_CHANGED_LIVE_WITH_LEASE,
                        _ => 0,
                    };
                    if limiter_changed && matches!(reply, ScriptReply::Permitted { .. }) {
                        mask |= BIT_KEY_LIMIT_CHANGED_LIVE_WITH_SET_LIMIT;
                    }
                    let spec = scenario.callers[caller as usize];
                    if matches!(reply, ScriptReply::Permitted { .. })
                        && scenario.key_limits.apart.is_some_and(|(process, key, _)| {
                            (process, key) == (spec.process, spec.key)
                        })
                    {
                        mask |= BIT_KEY_LIMIT_CHANGED_LIVE_APART;
                    }
                }
                (Some(&(Purpose::Peek, Some(caller))), Some(ScriptReply::Changed { .. })) => {
                    told.push(caller);
                }
                _ => {}
            },
            SharedRecord::Shared {
                caller, version, ..
            } if first_change(&changed, caller).is_some_and(|first| version >= first) => {
                mask |= BIT_KEY_LIMIT_CHANGED_LIVE_UNDER_LOCAL;
            }
            SharedRecord::Peeked {
                caller,
                request: Some(_),
                ..
            } if told.contains(&caller) => mask |= BIT_KEY_LIMIT_CHANGED_LIVE_WITH_PEEKS,
            _ => {}
        }
    }
    mask
}

/// The limit-change features of `run` (bits 15 to 21, 25 and 30).
fn limit_features(scenario: &SharedScenario, run: &SharedRun) -> u64 {
    let mut mask = 0;
    let mut requests = Senders::default();
    let mut limit = scenario.limit;
    let mut changed = false;
    let mut windows: Vec<Option<Window>> = vec![None; scenario.keys.len()];
    // The changes whose script ran.
    let mut ran: Vec<u32> = Vec::new();
    for record in &run.records {
        match record {
            &SharedRecord::Sent {
                request,
                caller,
                purpose,
                change,
                ..
            } => requests.sent(request, purpose, caller.or(change)),
            &SharedRecord::Executed {
                request,
                server_us,
                reply: ReplyDigest::Four { values },
                ..
            } => match requests.get(request) {
                Some(&(Purpose::Limit, change)) if values[0] == 3 => {
                    ran.extend(change);
                    let new = u32::try_from(values[1]).unwrap_or(0);
                    mask |= match new.cmp(&limit) {
                        core::cmp::Ordering::Less => BIT_LIMIT_LOWERED,
                        core::cmp::Ordering::Greater => BIT_LIMIT_RAISED,
                        core::cmp::Ordering::Equal => 0,
                    };
                    let end = |w: &Window| w.start + scenario.period_us;
                    if windows
                        .iter()
                        .flatten()
                        .any(|w| server_us < end(w) && new < w.used)
                    {
                        mask |= BIT_LIMIT_LOWERED_BELOW_COUNT;
                    }
                    limit = new;
                    changed = true;
                }
                // The limiter's background read of the configuration told of a newer limit.
                Some(&(Purpose::Refresh, _)) if values[0] == 3 => {
                    mask |= BIT_LIMIT_LEARNT_IN_BACKGROUND;
                }
                // Attempts on a cluster read no configuration: only a counter tells them.
                Some(&(Purpose::Acquire, Some(_)))
                    if values[0] == 3 && scenario.cluster.is_some() =>
                {
                    mask |= BIT_COUNTER_TOLD_LIMIT_CHANGED;
                }
                Some(&(Purpose::Acquire, Some(caller))) if values[0] == 1 => {
                    if changed {
                        mask |= BIT_PERMIT_AFTER_LIMIT_CHANGE;
                    }
                    let key = scenario.callers[caller as usize].key as usize;
                    let remaining = u32::try_from(values[1]).unwrap_or(0);
                    let start = u64::try_from(values[3]).unwrap_or(0);
                    windows[key] = Some(Window {
                        start,
                        used: limit.saturating_sub(remaining),
                    });
                }
                _ => {}
            },
            SharedRecord::Decided {
                decision: DecisionDigest::LimitChanged { .. },
                ..
            } => mask |= BIT_ATTEMPT_FOUND_LIMIT_CHANGED,
            SharedRecord::LimitSet {
                outcome: LimitOutcome::Refused,
                ..
            } => mask |= BIT_ZERO_LIMIT_REFUSED,
            SharedRecord::LimitSet {
                change,
                outcome: LimitOutcome::Unavailable,
                ..
            } if ran.contains(change) => mask |= BIT_LIMIT_CHANGE_RAN_UNANSWERED,
            SharedRecord::Fault {
                fault: FaultRecord::Restart { .. },
                ..
            } => {
                // The stored limit and the counters are gone.
                limit = scenario.limit;
                windows.fill(None);
            }
            _ => {}
        }
    }
    mask
}

/// A window a process found full: the version of the limit its request carried, and the
/// local instant it opens at.
#[derive(Debug, Clone, Copy)]
struct FoundFull {
    version: u32,
    opens: u128,
}

/// Whether a call began on a key its process found full under an older version of the limit
/// than the process holds by then, before that window opened.
fn memory_features(scenario: &SharedScenario, run: &SharedRun) -> u64 {
    // Each request's version, each process's newest version sent, and each (process, key)'s
    // last window found full.
    let mut versions: Vec<u32> = Vec::new();
    let mut learnt = vec![0_u32; scenario.processes.len()];
    let mut found: Vec<Option<FoundFull>> =
        vec![None; scenario.processes.len() * scenario.keys.len()];
    let slot = |caller: u32| {
        let c = scenario.callers[caller as usize];
        c.process as usize * scenario.keys.len() + c.key as usize
    };
    for record in &run.records {
        match *record {
            SharedRecord::Sent {
                request,
                process,
                version,
                ..
            } => {
                let index = request as usize;
                if versions.len() <= index {
                    versions.resize(index + 1, 0);
                }
                versions[index] = version;
                learnt[process as usize] = learnt[process as usize].max(version);
            }
            SharedRecord::Decided {
                caller,
                local,
                request: Some(request),
                decision,
                ..
            } => {
                let opens = match decision {
                    DecisionDigest::Rejected { retry_after, .. } => u128::from(local) + retry_after,
                    DecisionDigest::Wait { until } => until,
                    _ => continue,
                };
                let version = versions.get(request as usize).copied().unwrap_or(0);
                found[slot(caller)] = Some(FoundFull { version, opens });
            }
            SharedRecord::Start { caller, local, .. } => {
                let process = scenario.callers[caller as usize].process as usize;
                if let Some(full) = found[slot(caller)]
                    && full.version < learnt[process]
                    && u128::from(local) < full.opens
                {
                    return BIT_MEMORY_MET_LIMIT_CHANGE;
                }
            }
            SharedRecord::Fault {
                fault: FaultRecord::Crash { process, .. },
                ..
            } => {
                learnt[process as usize] = 0;
                let keys = scenario.keys.len();
                found[process as usize * keys..(process as usize + 1) * keys].fill(None);
            }
            _ => {}
        }
    }
    0
}
