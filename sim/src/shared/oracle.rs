//! The shared limiter's oracle: the rules of the in-process limiter, per key, with the
//! server's clock as the timeline, judged by `fixed-window-spec`'s model as the in-process
//! oracle is, and reported under the same [`Invariant`]s, with four more for what only a
//! shared limiter can break.
//!
//! It reads the trace only. The server's side of it (what ran at which server time, what the
//! script answered, which writes a failover undid, which keys expired) are facts of the
//! simulated environment; the script's answers are what is judged. For every script run it
//! asks the model what the run should have decided on the key's window, on the grid of the
//! shared origin (the server time of the first run that found no configuration, as the rule
//! says), and compares. Then it judges each call by what its process saw: the decision
//! against the reply, the wait against the deadline, a local rejection against the server's
//! window at that moment, an `Unavailable` against the faults that touched the attempt.
//!
//! Under faults:
//! - A lost reply is an indeterminate outcome: the caller's `Unavailable` (or fail-open
//!   permit) is accepted whether the script counted or not; the model counts what the server
//!   did, so the call's permit, which nobody received, is not a permit granted.
//! - A fail-open permit must be explained by a fault and is excluded from every count.
//! - After state loss (a restart without persistence, a failover that lost writes, a counter
//!   that expired and then found again by a server clock that stepped back), the model
//!   forgets what the server forgot, and each window's permits granted to callers are bounded
//!   by the limit in force at the last of them plus the permits granted earlier in that
//!   window that the server forgot (the bound of the spec's
//!   [`Ledger`](fixed_window_spec::Ledger), with the limit of each permit), exactly.
//! - A local rejection is late only where the documentation allows it: after the server's
//!   clock stepped forward or its state was lost since the reply it remembers.
//! - A process whose registration failed has no limiter: until a registration succeeds, it
//!   answers each call by its fail policy without a round trip, explained by the faults that
//!   touched the registration. A process whose link is slower than its timeout is such a
//!   process for the whole run: it never registers, and every call it answers is
//!   `Unavailable` (failing closed) or a permit counted nowhere (failing open).
//!
//! Refusals of the limiter's user (`oracle/credentials.rs`): once the server takes the user
//! again, no attempt is refused later than the connection layer's longest back-off
//! ([`RENEWAL_MAX`](fixed_window_redis::RENEWAL_MAX), on the process's clock) plus one
//! one-way trip; an attempt refused ends by its fail policy with nothing counted.
//!
//! Conflicting configurations (`oracle/conflicts.rs`): a process made with `start` whose
//! registration was refused answers every call `Conflict` from then on, never a permit
//! (fail-open included) nor its fail policy's answer.
//!
//! Liveness per node (`oracle/lanes.rs`): an attempt that waits for a script call waits only
//! behind a call of its own hash slot, so one primary's trouble costs only its own keys.
//!
//! Changes of the limit: the model stores the configuration with its version, as the rule
//! says the server does. A change that ran is in force from that server instant, for the
//! windows' counts as they are; an attempt carrying an older version must be answered
//! "changed" and count nothing; every permit must fit the limit in force when the script
//! decided it, counting what the window holds, and each window's permits granted to callers
//! are bounded by the limit in force at the last of them plus what the server forgot. A change
//! whose reply was lost is judged by what the server did: the trace says whether it ran.
//! Failovers that undo a change restore the configuration before it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use fixed_window_spec::{Count, Grid};

use crate::oracle::{Checks, Invariant, Verdict, Violation};
use crate::shared::record::{DecisionDigest, Purpose, ReplyDigest, SharedRecord};
use crate::shared::run::{SharedRun, config};
use crate::shared::scenario::SharedScenario;

mod calls;
mod cluster;
mod conflicts;
mod credentials;
mod end;
mod grids;
mod hand_back;
mod key_limits;
mod lanes;
mod lease;
mod limits;
mod local_share;
mod peeks;
mod requests;
mod windows;

/// Reports past this many per run are dropped.
const MOST_VIOLATIONS: usize = 64;

/// A script run on a caller's key, as the oracle judges it.
#[derive(Debug, Clone, Copy)]
struct Run {
    request: u32,
    caller: u32,
    key: u16,
    server_us: u64,
    grid: Grid,
    /// The permits the attempt takes; `None` for a drain.
    weight: Option<u32>,
    /// The limit in force for it, which the server must decide it under.
    limit: u32,
}

/// What a request did, as far as the trace tells.
#[derive(Debug, Clone, Default)]
struct RequestInfo {
    caller: Option<u32>,
    process: u16,
    purpose: Option<Purpose>,
    /// The script's reply, if it ran.
    reply: Option<ReplyDigest>,
    /// The virtual time it ran at.
    ran_at: u64,
    /// If the server counted a permit: its epoch, key and window, and the key's model state
    /// before it.
    counted: Option<Counted>,
    /// Lost, late, refused or reset: a fault touched it.
    faulted: bool,
    /// The limit and version of the limit it carries.
    carried: (u32, u32),
    /// The change of the limit it is for, if it is for one.
    change: Option<u32>,
    /// The replicas the `WAIT` after its script call counted, if one followed.
    acknowledged: Option<u32>,
    /// The virtual time it was sent at.
    sent_at: u64,
    /// If it wrote its key's counter, what the model held of the limit the key's window is
    /// counted by before it (restored when a failover undoes the write).
    key_window_before: Option<KeyWindowBefore>,
}

/// What the model held of the limit a key's window is counted by (the window it was settled
/// in, and the limit), before a write of the key's counter: nothing, if the key had none.
#[derive(Debug, Clone, Copy)]
struct KeyWindowBefore(Option<(u128, fixed_window_spec::KeyWindow)>);

/// The configuration the model says the server stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stored {
    limit: u32,
    /// In microseconds.
    period: u64,
    /// 0 until the limit is changed.
    version: u32,
}

#[derive(Debug, Clone, Copy)]
struct Counted {
    epoch: u32,
    key: u16,
    window: u128,
    before: Option<Count>,
}

/// One entry of a window's ledger, in server order.
#[derive(Debug, Clone, Copy)]
enum LedgerOp {
    /// The server counted the permit of this request, under this limit in force.
    Grant(u32, u32),
    /// The server forgot the permit of this request.
    Forget(u32),
}

/// What the oracle knows of a call.
#[derive(Debug, Clone, Default)]
struct CallInfo {
    started: bool,
    finished: bool,
    start: u64,
    deadline: u64,
    /// Requests sent for the attempt in progress.
    attempt: Vec<u32>,
    /// The last decision, and the request that decided it.
    last: Option<(DecisionDigest, Option<u32>)>,
    /// Requests of this call the server counted.
    counted: Vec<u32>,
    /// Waits on its process's local share, each followed by another attempt on the server.
    share_waits: usize,
    /// Attempts it made again because the limit had changed: each a round trip more.
    changes: u64,
}

/// What a process remembers about a key: the reply it remembered it full by.
#[derive(Debug, Clone, Copy)]
struct Remembered {
    /// When the script ran (virtual time).
    ran_at: u64,
    /// The attempt's local readings: before it was sent, and when the reply came.
    sent: u64,
    received: u64,
    /// The limit and its version the attempt was sent under.
    limit: u32,
    version: u32,
}

struct Checker<'s> {
    scenario: &'s SharedScenario,
    violations: Vec<Violation>,
    /// How many times each rule was checked.
    checks: Checks,
    record: usize,
    requests: Vec<RequestInfo>,
    calls: Vec<CallInfo>,
    /// The state's epoch: a restart, or a failover that lost the configuration, begins a
    /// new one, with a new origin.
    epoch: u32,
    grid: Option<Grid>,
    /// The model of each key's counter on the server: `None` when the server holds none.
    counts: Vec<Option<Count>>,
    /// Each key's permits counted in this epoch, with their windows.
    counted: Vec<Vec<(u32, u128)>>,
    ledgers: BTreeMap<(u32, u16, u128), Vec<LedgerOp>>,
    /// The server's clock minus virtual time, as the clock steps say.
    offset_ns: i128,
    /// The last time the server's clock stepped forward or its state was lost: a local
    /// rejection remembered from before it may run late.
    last_excuse: Option<u64>,
    /// The last time the server's clock stepped either way: a local `retry_after`
    /// remembered from before it estimates a window end that moved.
    last_step: Option<u64>,
    remembered: HashMap<(u16, u16), Remembered>,
    /// Per process, the newest version of the limit it is known to hold (from the requests
    /// it sent and the changes it was told of): learning one forgets every window it
    /// remembered full, and a reply under an older one is not remembered.
    learnt: Vec<u32>,
    /// Failed attempts, checked for a fault that explains them when the trace has ended
    /// (a late reply comes after): the caller, the requests, whether it failed open.
    failed: Vec<(u32, Vec<u32>, bool, usize)>,
    /// Under `FailPolicy::Local`: the permits each process's local share granted, per
    /// (process, key, window of the process's own grid).
    shares: HashMap<(u16, u16, u64), u32>,
    granted: Vec<bool>,
    /// The configuration the server stores in this epoch: that of the process whose script
    /// run found none, then as changes of the limit (and processes knowing a newer version
    /// than a configuration stored anew) wrote it.
    stored: Option<Stored>,
    /// This epoch's writes of the configuration, in order: the request and what it replaced
    /// (which a failover undoing it restores).
    config_writes: Vec<(u32, Option<Stored>)>,
    /// On a cluster, the settings each key's counter records (`None` while the server holds
    /// no counter): what an attempt there is checked against, in place of a configuration.
    settings: Vec<Option<Stored>>,
    /// The writes of counters' settings, in order: the request, the key and what it replaced.
    settings_writes: Vec<limits::SettingsWrite>,
    /// The last time the stored limit was raised: a process remembering a window full from
    /// before it may go on rejecting it locally.
    last_raise: Option<u64>,
    /// Every limit stored by a change (versions above 0), in order.
    changed_limits: Vec<u32>,
    /// Changes of the limit that ended `Unavailable`, checked for a fault when the trace has
    /// ended: the change and the record.
    failed_changes: Vec<(u32, usize)>,
    /// Per process, whether its latest registration run was accepted.
    registration_accepted: Vec<Option<bool>>,
    /// Processes refused at registration.
    refused_processes: Vec<bool>,
    /// Processes that ever tried to register: the others never started.
    started_processes: Vec<bool>,
    /// Processes made with `start` whose registration was refused, until they crash: each of
    /// their calls must be answered `Conflict`.
    knows_refusal: Vec<bool>,
    /// Per process, the requests of the registration under way.
    registering: Vec<Vec<u32>>,
    /// Per process whose last registration failed (and none has succeeded since), the
    /// requests of that registration: what explains the calls it answers without a round trip.
    unregistered: Vec<Option<Vec<u32>>>,
    config_key: String,
    counter_keys: HashMap<String, u16>,
    /// The failovers seen, for the stated bound.
    failovers: Vec<cluster::FailoverSeen>,
    /// What the liveness rule per node follows: attempts waiting, calls ending.
    lanes: lanes::Lanes,
    /// The refusals of the limiter's user, and the requests refused.
    refusals: credentials::Refusals,
    /// The lease calls the server granted, by request.
    leases: HashMap<u32, lease::Leased>,
    /// Per (process, key), the lease call whose share the process holds.
    held: HashMap<(u16, u16), u32>,
    /// The windows (epoch, key, index) in which a call was refused.
    refused_windows: BTreeSet<(u32, u16, u128)>,
    /// On a cluster, the last script call an attempt's counter refused: its virtual time, its
    /// process and the counter's settings. The script refuses the whole call there, so the
    /// attempts on its later keys are answered that refusal without running.
    call_refused: Option<(u64, u16, Stored)>,
    /// Whether some call failed, met a conflict or a changed limit: a share may have been
    /// dropped early, outside the under-admission bound's conditions.
    share_dropped: bool,
    /// What the peeks' runs must have answered.
    peeks: peeks::Peeks,
    /// The hand-backs of unspent shares, by request.
    hand_backs: hand_back::HandBacks,
    /// Per key, the window its counter was settled in and the limit it settled (valid while
    /// the model's counter holds that window).
    key_windows: Vec<Option<(u128, fixed_window_spec::KeyWindow)>>,
    /// Where keys' limits change live: each version of the limit a live change stored, with
    /// the live limits (key and limit) in effect from it on, in order of version.
    live: Vec<(u32, Vec<(u16, u32)>)>,
}

/// Checks `run` of `scenario` against the rules; every violation found (at most the first
/// few dozen). [`verdict_shared`] says as well how many times each rule was checked.
///
/// # Examples
///
/// See [`run_shared`](crate::shared::run_shared).
///
/// ```
/// use fixed_window_sim::ScenarioId;
/// use fixed_window_sim::shared::{SharedPlantedBug, SharedScenario, check_shared, run_shared};
///
/// let scenario = SharedScenario::generate(&ScenarioId::seed(3));
/// assert!(check_shared(&scenario, &run_shared(&scenario, None)).is_empty());
/// ```
pub fn check_shared(scenario: &SharedScenario, run: &SharedRun) -> Vec<Violation> {
    verdict_shared(scenario, run).violations
}

/// [`check_shared`], with how many times each rule was checked (a shared scenario has no
/// keyed limiter's memory to report).
///
/// # Examples
///
/// The real shared limiter breaks no rule, and every run is checked against the window
/// limit at least once (when the trace ends).
///
/// ```
/// use fixed_window_sim::{Invariant, ScenarioId};
/// use fixed_window_sim::shared::{SharedScenario, run_shared, verdict_shared};
///
/// let scenario = SharedScenario::generate(&ScenarioId::seed(3));
/// let verdict = verdict_shared(&scenario, &run_shared(&scenario, None));
/// assert!(verdict.violations.is_empty());
/// assert!(verdict.checks.of(Invariant::WindowLimit) >= 1);
/// ```
pub fn verdict_shared(scenario: &SharedScenario, run: &SharedRun) -> Verdict {
    let probe = config(scenario, 0);
    let mut checker = Checker {
        scenario,
        violations: Vec::new(),
        checks: Checks::default(),
        record: 0,
        requests: Vec::new(),
        calls: vec![CallInfo::default(); scenario.callers.len()],
        epoch: 0,
        grid: None,
        counts: vec![None; scenario.keys.len()],
        counted: vec![Vec::new(); scenario.keys.len()],
        ledgers: BTreeMap::new(),
        offset_ns: 0,
        last_excuse: None,
        last_step: None,
        remembered: HashMap::new(),
        learnt: vec![0; scenario.processes.len()],
        failed: Vec::new(),
        shares: HashMap::new(),
        granted: Vec::new(),
        stored: None,
        config_writes: Vec::new(),
        settings: vec![None; scenario.keys.len()],
        settings_writes: Vec::new(),
        last_raise: None,
        changed_limits: Vec::new(),
        failed_changes: Vec::new(),
        registration_accepted: vec![None; scenario.processes.len()],
        refused_processes: vec![false; scenario.processes.len()],
        started_processes: vec![false; scenario.processes.len()],
        knows_refusal: vec![false; scenario.processes.len()],
        registering: vec![Vec::new(); scenario.processes.len()],
        unregistered: vec![None; scenario.processes.len()],
        config_key: probe.config_key().to_owned(),
        counter_keys: (0_u16..)
            .zip(&scenario.keys)
            .map(|(index, key)| {
                let counter = if scenario.cluster.is_some() {
                    probe.cluster_counter_key(key)
                } else {
                    probe.counter_key(key)
                };
                (counter, index)
            })
            .collect(),
        failovers: Vec::new(),
        lanes: lanes::Lanes::of(scenario),
        refusals: credentials::Refusals::default(),
        leases: HashMap::new(),
        held: HashMap::new(),
        refused_windows: BTreeSet::new(),
        call_refused: None,
        share_dropped: false,
        peeks: peeks::Peeks::default(),
        hand_backs: hand_back::HandBacks::default(),
        key_windows: vec![None; scenario.keys.len()],
        live: Vec::new(),
    };
    for (i, record) in run.records.iter().enumerate() {
        checker.record = i;
        checker.read(record);
    }
    checker.end(run);
    Verdict {
        violations: checker.violations,
        memory: None,
        checks: checker.checks,
    }
}

impl Checker<'_> {
    fn report(
        &mut self,
        invariant: Invariant,
        caller: Option<u32>,
        detail: impl FnOnce() -> String,
    ) {
        if self.violations.len() < MOST_VIOLATIONS {
            self.violations.push(Violation {
                invariant,
                caller,
                record: self.record,
                detail: detail(),
            });
        }
    }

    /// The stored limit (the shared one before anything is stored).
    fn limit(&self) -> u32 {
        self.stored
            .map_or(self.scenario.limit, |stored| stored.limit)
    }

    fn request(&mut self, request: u32) -> &mut RequestInfo {
        let index = request as usize;
        if self.requests.len() <= index {
            self.requests.resize(index + 1, RequestInfo::default());
        }
        &mut self.requests[index]
    }

    /// Caller `caller` began at `local` on its process's clock, its deadline `deadline`.
    fn call_started(&mut self, caller: u32, local: u64, deadline: u64) {
        let call = &mut self.calls[caller as usize];
        call.started = true;
        call.start = local;
        call.deadline = deadline;
    }

    fn read(&mut self, record: &SharedRecord) {
        match record {
            &SharedRecord::Start {
                caller,
                local,
                deadline,
                ..
            } => self.call_started(caller, local, deadline),
            &SharedRecord::Sent {
                t,
                request,
                caller,
                process,
                purpose,
                limit,
                version,
                change,
                again,
            } => {
                self.lane_sent(t, (caller, again), process, purpose);
                self.sent(
                    request,
                    (caller, change),
                    process,
                    purpose,
                    (limit, version),
                );
                self.request(request).sent_at = t;
            }
            &SharedRecord::Queued { t, caller } => self.attempt_queued(t, caller),
            &SharedRecord::CallEnded { t, process, slot } => self.call_ended(t, process, slot),
            SharedRecord::Executed { .. } => self.executed_record(record),
            SharedRecord::Refused { request, what, .. } => {
                self.checks.count(&[Invariant::Script]);
                let caller = self.request(*request).caller;
                self.report(Invariant::Script, caller, || {
                    format!("the script used {what}, which the simulated server does not model")
                });
            }
            SharedRecord::Expired {
                key, expires_at_ms, ..
            } => self.expired(key, *expires_at_ms),
            &SharedRecord::Lost { t, request, loss } => self.lost(t, request, Some(loss)),
            &SharedRecord::Late { t, request } => self.lost(t, request, None),
            &SharedRecord::Registered { process, .. } => {
                self.refusal_forgotten(process);
                self.registered(process, true);
            }
            &SharedRecord::Conflicted { process, .. } => self.refusal_known(process),
            &SharedRecord::RegistrationFailed { process, .. } => {
                let requests = std::mem::take(&mut self.registering[process as usize]);
                self.unregistered[process as usize] = Some(requests);
            }
            &SharedRecord::TimedOut { caller, .. } => self.timed_out(caller),
            SharedRecord::Acknowledged { .. } => self.acknowledged(record),
            // A migrated slot costs the attempt another round trip, as a flushed cache does, and
            // a migrating one an `ASK` or a `TRYAGAIN`'s wait (an answer not followed is no
            // fault, and explains nothing); a paused server or a stalled primary holds it.
            &SharedRecord::Redirected { request, .. } | &SharedRecord::Held { request, .. } => {
                self.request(request).faulted = true;
            }
            &SharedRecord::Decided {
                t,
                caller,
                local,
                at,
                request,
                decision,
            } => {
                self.decided_after_refusal(caller, decision);
                self.decided(t, caller, local, at, request, decision);
            }
            SharedRecord::Shared { .. } => self.shared(record),
            &SharedRecord::Sleep { caller, until, .. } => self.slept(caller, until),
            &SharedRecord::Finish {
                caller,
                local,
                outcome,
                event,
                ..
            } => self.finish(caller, local, outcome, event),
            &SharedRecord::LimitSet {
                change,
                limit,
                outcome,
                ..
            } => self.limit_set(change, limit, outcome),
            SharedRecord::LiveLimitsRead { .. } | SharedRecord::KeyLimitSet { .. } => {
                self.key_live_record(record);
            }
            SharedRecord::HandBack { .. } | SharedRecord::HandedBack { .. } => self.handing(record),
            SharedRecord::Fault { t, fault } => self.fault(*t, fault),
            SharedRecord::Keyspace { keys, .. } => self.keyspace(keys),
            SharedRecord::Peeked { .. }
            | SharedRecord::PeekRan { .. }
            | SharedRecord::PeekFailed { .. } => self.peek_record(record),
        }
    }
}
