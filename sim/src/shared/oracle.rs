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
//!   by `limit` plus the permits granted earlier in that window that the server forgot
//!   ([`Ledger`]), exactly.
//! - A local rejection is late only where the documentation allows it: after the server's
//!   clock stepped forward or its state was lost since the reply it remembers.
//! - A process whose registration failed has no limiter: until a registration succeeds, it
//!   answers each call by its fail policy without a round trip, explained by the faults that
//!   touched the registration. A process whose link is slower than its timeout is such a
//!   process for the whole run: it never registers, and every call it answers is
//!   `Unavailable` (failing closed) or a permit counted nowhere (failing open).

use core::num::NonZeroU128;
use std::collections::{BTreeMap, HashMap};

use fixed_window_redis::{EXPIRY_MARGIN_MILLIS, FailPolicy, ScriptReply};
use fixed_window_spec::{Count, Decision, Grid, Ledger};

use crate::oracle::{Checks, Invariant, Verdict, Violation};
use crate::shared::record::{
    DecisionDigest, EventDigest, FaultRecord, Purpose, ReplyDigest, SharedOutcome, SharedRecord,
};
use crate::shared::run::{SharedRun, config};
use crate::shared::scenario::{SharedScenario, Weight};
use crate::shared::server::SERVER_EPOCH_NS;

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
    /// The server counted the permit of this request.
    Grant(u32),
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
}

/// What a process remembers about a key: the reply it remembered it full by.
#[derive(Debug, Clone, Copy)]
struct Remembered {
    /// When the script ran (virtual time).
    ran_at: u64,
    /// The attempt's local readings: before it was sent, and when the reply came.
    sent: u64,
    received: u64,
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
    /// Failed attempts, checked for a fault that explains them when the trace has ended
    /// (a late reply comes after): the caller, the requests, whether it failed open.
    failed: Vec<(u32, Vec<u32>, bool, usize)>,
    granted: Vec<bool>,
    /// The configuration the server stores in this epoch (limit, period in µs): that of the
    /// process whose script run found none.
    stored: Option<(u32, u64)>,
    /// Each epoch's stored limit, for its ledgers.
    limits: BTreeMap<u32, u32>,
    /// Per process, whether its latest registration run was accepted.
    registration_accepted: Vec<Option<bool>>,
    /// Processes refused at registration.
    refused_processes: Vec<bool>,
    /// Processes that ever tried to register: the others never started.
    started_processes: Vec<bool>,
    /// Per process, the requests of the registration under way.
    registering: Vec<Vec<u32>>,
    /// Per process whose last registration failed (and none has succeeded since), the
    /// requests of that registration: what explains the calls it answers without a round trip.
    unregistered: Vec<Option<Vec<u32>>>,
    config_key: String,
    counter_keys: HashMap<String, u16>,
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
        failed: Vec::new(),
        granted: Vec::new(),
        stored: None,
        limits: BTreeMap::new(),
        registration_accepted: vec![None; scenario.processes.len()],
        refused_processes: vec![false; scenario.processes.len()],
        started_processes: vec![false; scenario.processes.len()],
        registering: vec![Vec::new(); scenario.processes.len()],
        unregistered: vec![None; scenario.processes.len()],
        config_key: probe.config_key().to_owned(),
        counter_keys: (0_u16..)
            .zip(&scenario.keys)
            .map(|(index, key)| (probe.counter_key(key), index))
            .collect(),
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
        self.stored.map_or(self.scenario.limit, |(limit, _)| limit)
    }

    fn request(&mut self, request: u32) -> &mut RequestInfo {
        let index = request as usize;
        if self.requests.len() <= index {
            self.requests.resize(index + 1, RequestInfo::default());
        }
        &mut self.requests[index]
    }

    fn read(&mut self, record: &SharedRecord) {
        match record {
            &SharedRecord::Start {
                caller,
                local,
                deadline,
                ..
            } => {
                let call = &mut self.calls[caller as usize];
                call.started = true;
                call.start = local;
                call.deadline = deadline;
            }
            &SharedRecord::Sent {
                request,
                caller,
                process,
                purpose,
                ..
            } => self.sent(request, caller, process, purpose),
            &SharedRecord::Executed {
                t,
                request,
                server_us,
                ran_script,
                reply,
            } => {
                let info = self.request(request);
                info.ran_at = t;
                // A flushed script cache costs the attempt two more round trips.
                info.faulted |= matches!(reply, ReplyDigest::Error { noscript: true });
                if ran_script {
                    info.reply = Some(reply);
                    self.executed(request, server_us, reply);
                }
            }
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
            &SharedRecord::Lost { request, .. }
            | &SharedRecord::Late { request, .. }
            | &SharedRecord::Held { request, .. } => {
                self.request(request).faulted = true;
            }
            &SharedRecord::Registered { process, .. } => self.registered(process, true),
            &SharedRecord::Conflicted { process, .. } => {
                self.refused_processes[process as usize] = true;
                self.registered(process, false);
            }
            &SharedRecord::RegistrationFailed { process, .. } => {
                let requests = std::mem::take(&mut self.registering[process as usize]);
                self.unregistered[process as usize] = Some(requests);
            }
            SharedRecord::TimedOut { .. } => {}
            &SharedRecord::Decided {
                t,
                caller,
                local,
                at,
                request,
                decision,
            } => self.decided(t, caller, local, at, request, decision),
            &SharedRecord::Sleep { caller, until, .. } => {
                self.checks.count(&[Invariant::Events, Invariant::Deadline]);
                let call = &self.calls[caller as usize];
                let deadline = call.deadline;
                if !matches!(call.last, Some((DecisionDigest::Wait { until: planned }, _)) if planned == u128::from(until))
                {
                    self.report(Invariant::Events, Some(caller), || {
                        format!("sleeps until {until} without a wait decided for then")
                    });
                }
                if until > deadline {
                    self.report(Invariant::Deadline, Some(caller), || {
                        format!("sleeps until {until}, past its deadline {deadline} (local)")
                    });
                }
            }
            &SharedRecord::Finish {
                caller,
                local,
                outcome,
                event,
                ..
            } => self.finish(caller, local, outcome, event),
            SharedRecord::Fault { t, fault } => self.fault(*t, fault),
            SharedRecord::Keyspace { keys, .. } => self.keyspace(keys),
        }
    }

    /// A request sent for `caller`'s attempt, or for `process` itself.
    fn sent(&mut self, request: u32, caller: Option<u32>, process: u16, purpose: Purpose) {
        let info = self.request(request);
        info.caller = caller;
        info.process = process;
        info.purpose = Some(purpose);
        if let Some(caller) = caller {
            self.calls[caller as usize].attempt.push(request);
        } else if purpose == Purpose::Register {
            self.registering[process as usize].push(request);
            self.started_processes[process as usize] = true;
        }
    }

    /// A script run on the server at `server_us`.
    fn executed(&mut self, request: u32, server_us: u64, reply: ReplyDigest) {
        let info = &self.requests[request as usize];
        let (caller, process, purpose) = (info.caller, info.process, info.purpose);
        if !matches!(purpose, Some(Purpose::Register | Purpose::Acquire)) {
            return;
        }
        self.checks.count(&[Invariant::Script, Invariant::Events]);
        // The script stores the configuration, with its time (or the fixed origin) as the
        // origin, when absent.
        let own = self.scenario.configured(process);
        let stored = *self.stored.get_or_insert(own);
        self.limits.insert(self.epoch, stored.0);
        let period = NonZeroU128::new(u128::from(stored.1)).unwrap_or(NonZeroU128::MIN);
        let grid = *self.grid.get_or_insert_with(|| {
            Grid::new(
                u128::from(self.scenario.origin.unwrap_or(server_us)),
                period,
            )
        });
        if purpose == Some(Purpose::Register) {
            self.registration_accepted[process as usize] = Some(own == stored);
        }
        if own != stored {
            self.refused(request, caller, server_us, reply);
            return;
        }
        let values = match reply {
            ReplyDigest::Four { values } => values,
            ReplyDigest::Error { .. } => {
                self.report(Invariant::Script, caller, || {
                    format!("request {request}: the script failed with an error")
                });
                return;
            }
            ReplyDigest::Other => {
                self.report(Invariant::Events, caller, || {
                    format!("request {request}: the script answered something it never does")
                });
                return;
            }
        };
        let parsed = ScriptReply::parse(&values);
        let Some(caller) = caller.filter(|_| purpose == Some(Purpose::Acquire)) else {
            self.registration(grid, parsed, server_us);
            return;
        };
        let spec = self.scenario.callers[caller as usize];
        let run = Run {
            request,
            caller,
            key: spec.key,
            server_us,
            grid,
            weight: spec.weight.permits(),
        };
        match parsed {
            Some(ScriptReply::Permitted {
                remaining,
                now,
                window_start,
            }) => {
                self.check_time(caller, now, server_us);
                self.permitted_run(&run, remaining, window_start);
            }
            Some(ScriptReply::Full {
                retry_after,
                now,
                window_start,
            }) => {
                self.check_time(caller, now, server_us);
                self.full_run(&run, retry_after, now, window_start);
            }
            other => self.report(Invariant::Events, Some(caller), || {
                format!("an attempt answered {other:?}")
            }),
        }
    }

    /// A process's registration went through (`accepted`) or was refused: as the server's
    /// answer to its latest registration run says it must.
    fn registered(&mut self, process: u16, accepted: bool) {
        self.checks
            .count(&[Invariant::Unavailable, Invariant::Configuration]);
        self.registering[process as usize].clear();
        if accepted {
            self.unregistered[process as usize] = None;
        }
        if self.scenario.processes[process as usize].slow_link() {
            self.report(Invariant::Unavailable, None, || {
                format!("process {process}, whose link is slower than its timeout, got an answer to its registration")
            });
        }
        if self.registration_accepted[process as usize] != Some(accepted) {
            self.report(Invariant::Configuration, None, || {
                if accepted {
                    format!(
                        "process {process} registered, but the server refused its configuration"
                    )
                } else {
                    format!(
                        "process {process} was refused, but the server accepted its configuration"
                    )
                }
            });
        }
    }

    /// A script run by a process configured apart from the stored configuration: the server
    /// must refuse it with the stored one, counting nothing.
    fn refused(&mut self, request: u32, caller: Option<u32>, server_us: u64, reply: ReplyDigest) {
        self.checks.count(&[Invariant::Configuration]);
        let expected =
            self.grid
                .zip(self.stored)
                .map(|(grid, (limit, period))| ScriptReply::Conflict {
                    period,
                    limit: u64::from(limit),
                    origin: u64::try_from(grid.origin()).unwrap_or(u64::MAX),
                });
        let got = match reply {
            ReplyDigest::Four { values } => ScriptReply::parse(&values),
            _ => None,
        };
        if expected.is_none() || got != expected {
            self.report(Invariant::Configuration, caller, || {
                format!("request {request} of a process configured apart, run at server time {server_us}, answered {got:?}, not the refusal {expected:?}")
            });
        }
    }

    fn registration(&mut self, grid: Grid, reply: Option<ScriptReply>, server_us: u64) {
        self.checks.count(&[Invariant::Alignment]);
        let origin = grid.origin();
        match reply {
            Some(ScriptReply::Registered { origin: got, now }) => {
                if u128::from(got) != origin {
                    self.report(Invariant::Alignment, None, || {
                        format!("a registration got origin {got}, not the shared origin {origin}")
                    });
                }
                if now != server_us {
                    self.report(Invariant::Events, None, || {
                        format!("a registration read time {now}, not the server's {server_us}")
                    });
                }
            }
            other => self.report(Invariant::Events, None, || {
                format!("a registration answered {other:?}")
            }),
        }
    }

    /// The script counted a permit that left `remaining`.
    fn permitted_run(&mut self, run: &Run, remaining: u32, window_start: u64) {
        let Run {
            request,
            caller,
            key,
            server_us,
            grid,
            weight,
        } = *run;
        self.checks.count(&[
            Invariant::CarryOver,
            Invariant::WindowLimit,
            Invariant::Alignment,
            Invariant::DoubleCount,
        ]);
        let count = self.counts[key as usize].unwrap_or_default();
        let now = u128::from(server_us);
        let limit = self.limit();
        let (index, used) = count.at(&grid, now);
        let Some(n) = weight else {
            self.drained_run(run, remaining, window_start);
            return;
        };
        match count.decide_n(&grid, limit, now, now, n) {
            Decision::Permit {
                remaining: model, ..
            } => {
                if remaining < model && used == 0 {
                    self.report(Invariant::CarryOver, Some(caller), || {
                        format!("the first permit of window {index} of key {key} left {remaining}, not {model}")
                    });
                } else if remaining > model {
                    self.report(Invariant::WindowLimit, Some(caller), || {
                        format!("a permit in window {index} of key {key} left {remaining}, but {used} of {limit} were used: the script forgot permits")
                    });
                } else if remaining != model {
                    self.report(Invariant::Events, Some(caller), || {
                        format!("a permit in window {index} of key {key} left {remaining}, expected {model}")
                    });
                }
            }
            _ => self.report(Invariant::WindowLimit, Some(caller), || {
                format!("permitted at server time {server_us} although window {index} of key {key} was full ({used} of {limit})")
            }),
        }
        self.check_window_start(caller, window_start, grid.start(index));
        if n == 0 {
            // Nothing counted, nothing written.
            return;
        }
        // The server counted it, whatever the model expected.
        let before = self.counts[key as usize];
        let mut after = count;
        after.apply_n(
            Decision::Permit {
                index,
                remaining: 0,
            },
            n,
        );
        self.counts[key as usize] = Some(after);
        self.counted[key as usize].push((request, index));
        let epoch = self.epoch;
        self.requests[request as usize].counted = Some(Counted {
            epoch,
            key,
            window: index,
            before,
        });
        self.ledgers
            .entry((epoch, key, index))
            .or_default()
            .push(LedgerOp::Grant(request));
        let call = &mut self.calls[caller as usize];
        call.counted.push(request);
        if call.counted.len() > 1 {
            let counted = call.counted.clone();
            self.report(Invariant::DoubleCount, Some(caller), || {
                format!(
                    "one call counted on the server {} times (requests {counted:?})",
                    counted.len()
                )
            });
        }
    }

    /// The script drained the key's window: it took what was left, leaving none, and counted
    /// no permit for anyone.
    fn drained_run(&mut self, run: &Run, remaining: u32, window_start: u64) {
        let Run {
            request,
            caller,
            key,
            server_us,
            grid,
            ..
        } = *run;
        let count = self.counts[key as usize].unwrap_or_default();
        let now = u128::from(server_us);
        let (index, used) = count.at(&grid, now);
        if remaining != 0 {
            self.report(Invariant::WindowLimit, Some(caller), || {
                format!("a drain of window {index} of key {key} left {remaining}")
            });
        }
        self.check_window_start(caller, window_start, grid.start(index));
        if used >= self.limit() {
            // Full already: nothing taken, nothing written.
            return;
        }
        let before = self.counts[key as usize];
        let mut after = count;
        after.drain(&grid, self.limit(), now);
        self.counts[key as usize] = Some(after);
        self.requests[request as usize].counted = Some(Counted {
            epoch: self.epoch,
            key,
            window: index,
            before,
        });
    }

    /// The permits `request` takes: its caller's weight (none for a drain, which takes them
    /// for no caller).
    fn units(&self, request: u32) -> u32 {
        self.requests
            .get(request as usize)
            .and_then(|info| info.caller)
            .and_then(|caller| self.scenario.callers[caller as usize].weight.permits())
            .unwrap_or(0)
    }

    /// The script found the window full, `retry_after` µs from its reading `read`.
    fn full_run(&mut self, run: &Run, retry_after: u64, read: u64, window_start: u64) {
        self.checks
            .count(&[Invariant::FalseRejection, Invariant::Alignment]);
        let Run {
            caller,
            key,
            server_us,
            grid,
            weight,
            ..
        } = *run;
        let count = self.counts[key as usize].unwrap_or_default();
        let now = u128::from(server_us);
        let (index, _) = count.at(&grid, now);
        let Some(n) = weight else {
            self.report(Invariant::FalseRejection, Some(caller), || {
                format!("a drain of window {index} of key {key} was refused as full")
            });
            return;
        };
        let model = match count.decide_n(&grid, self.limit(), now, now, n) {
            Decision::Permit { remaining, .. } => {
                self.report(Invariant::FalseRejection, Some(caller), || {
                    format!("the server rejected {n} at {server_us} with {} permits free in window {index} of key {key}", remaining + n)
                });
                return;
            }
            Decision::Reject { retry_after } => retry_after,
            Decision::Wait { until } => until - now,
        };
        if u128::from(retry_after) != model {
            let ends = u128::from(read) + u128::from(retry_after);
            if grid.on_boundary(ends) {
                self.report(Invariant::Events, Some(caller), || {
                    format!(
                        "retry_after {retry_after} µs at server time {server_us}, expected {model}"
                    )
                });
            } else {
                self.report(Invariant::Alignment, Some(caller), || {
                    format!("retry_after {retry_after} µs at {read} ends at {ends}, not a boundary of the shared grid (expected {model})")
                });
            }
        }
        self.check_window_start(caller, window_start, grid.start(index));
    }

    fn check_time(&mut self, caller: u32, read: u64, server_us: u64) {
        if read != server_us {
            self.report(Invariant::Events, Some(caller), || {
                format!("the script read time {read}, not the server's clock {server_us}")
            });
        }
    }

    fn check_window_start(&mut self, caller: u32, window_start: u64, expected: u128) {
        if u128::from(window_start) != expected {
            self.report(Invariant::Alignment, Some(caller), || {
                format!(
                    "the script's window starts at {window_start}, the shared grid's at {expected}"
                )
            });
        }
    }

    /// The server's clock at virtual time `t`, in microseconds.
    fn server_us(&self, t: u64) -> u128 {
        let ns = i128::from(SERVER_EPOCH_NS) + i128::from(t) + self.offset_ns;
        u128::try_from(ns.max(0) / 1_000).unwrap_or(0)
    }

    fn expired(&mut self, key: &str, expires_at_ms: u64) {
        self.checks.count(&[Invariant::Expiry]);
        let Some(&index) = self.counter_keys.get(key) else {
            return;
        };
        let (Some(count), Some(grid)) = (self.counts[index as usize], self.grid) else {
            return;
        };
        let gone = (u128::from(expires_at_ms) + 1) * 1_000;
        if let Some(end) = grid.end(count.index())
            && gone < end
        {
            self.report(Invariant::Expiry, None, || {
                format!("key {key} expired at server time {gone}, before its window ended at {end}")
            });
        }
        // The server forgot it: only a clock that steps back into its window can tell.
        self.forget_key(index, count.index());
    }

    /// The server no longer holds `key`'s counter of `window`. What it forgets is that
    /// window's permits and those of every earlier window of the key: a counter that moved on
    /// to a later window still guarded the earlier ones (a reading stepped back before it
    /// counts against it), and without it a clock that steps back far enough finds them afresh.
    fn forget_key(&mut self, key: u16, window: u128) {
        let epoch = self.epoch;
        let mut kept = Vec::new();
        for (request, w) in std::mem::take(&mut self.counted[key as usize]) {
            if w <= window {
                self.ledgers
                    .entry((epoch, key, w))
                    .or_default()
                    .push(LedgerOp::Forget(request));
            } else {
                kept.push((request, w));
            }
        }
        self.counted[key as usize] = kept;
        self.counts[key as usize] = None;
    }

    /// Everything of the epoch is lost: a new origin comes with the next run.
    fn new_epoch(&mut self) {
        for key in 0..self.counts.len() {
            if let Some(count) = self.counts[key] {
                self.forget_key(u16::try_from(key).unwrap_or(0), count.index());
            }
            self.counted[key].clear();
        }
        self.grid = None;
        self.stored = None;
        self.epoch += 1;
    }

    fn fault(&mut self, t: u64, fault: &FaultRecord) {
        match fault {
            FaultRecord::Restart { .. } => {
                self.new_epoch();
                self.last_excuse = Some(t);
            }
            FaultRecord::Failover { undone, .. } => {
                for (request, key) in undone {
                    if **key == *self.config_key {
                        self.new_epoch();
                        continue;
                    }
                    let info = self
                        .requests
                        .get(*request as usize)
                        .cloned()
                        .unwrap_or_default();
                    let Some(counted) = info.counted.filter(|c| c.epoch == self.epoch) else {
                        continue;
                    };
                    let k = counted.key as usize;
                    self.counts[k] = counted.before;
                    self.counted[k].retain(|&(r, _)| r != *request);
                    self.ledgers
                        .entry((counted.epoch, counted.key, counted.window))
                        .or_default()
                        .push(LedgerOp::Forget(*request));
                }
                self.last_excuse = Some(t);
            }
            FaultRecord::ClockStep { delta_ns } => {
                self.offset_ns += i128::from(*delta_ns);
                self.last_step = Some(t);
                if *delta_ns > 0 {
                    self.last_excuse = Some(t);
                }
            }
            FaultRecord::Crash { process, .. } => {
                self.remembered.retain(|&(p, _), _| p != *process);
                // It starts again as a new process, registering anew.
                self.registering[*process as usize].clear();
                self.unregistered[*process as usize] = None;
            }
            FaultRecord::Reset { .. } | FaultRecord::Pause { .. } | FaultRecord::Flush => {}
        }
    }

    fn process_of(&self, caller: u32) -> u16 {
        self.scenario.callers[caller as usize].process
    }

    fn key_of(&self, caller: u32) -> u16 {
        self.scenario.callers[caller as usize].key
    }

    fn decided(
        &mut self,
        t: u64,
        caller: u32,
        local: u64,
        at: u64,
        request: Option<u32>,
        decision: DecisionDigest,
    ) {
        let attempt = std::mem::take(&mut self.calls[caller as usize].attempt);
        let deadline = self.calls[caller as usize].deadline;
        self.calls[caller as usize].last = Some((decision, request));
        let (process, key) = (self.process_of(caller), self.key_of(caller));
        let reply = self.script_reply(request);
        let refusal = matches!(reply, Some(ScriptReply::Conflict { .. }));
        if refusal || decision == DecisionDigest::Conflict {
            self.refused_decision(caller, decision, refusal);
            return;
        }
        self.checks.count(&[
            Invariant::Events,
            Invariant::FalseRejection,
            Invariant::Deadline,
        ]);
        match (decision, request) {
            (DecisionDigest::Permitted { remaining }, Some(request)) => {
                if !matches!(reply, Some(ScriptReply::Permitted { remaining: r, .. }) if r == remaining)
                {
                    self.report(Invariant::Events, Some(caller), || {
                        format!("permitted with {remaining} remaining on the reply {reply:?} of request {request}")
                    });
                }
                if remaining == 0 {
                    self.remember(process, key, request, local, at);
                }
            }
            (
                DecisionDigest::Rejected {
                    retry_after,
                    local: false,
                }
                | DecisionDigest::Wait { until: retry_after },
                Some(request),
            ) => {
                let Some(ScriptReply::Full {
                    retry_after: server,
                    ..
                }) = reply
                else {
                    self.report(Invariant::Events, Some(caller), || {
                        format!("rejected or waiting on the reply {reply:?} of request {request}")
                    });
                    return;
                };
                self.remember_full(caller, request, local, at);
                let server_ns = u128::from(server) * 1_000;
                let opens_by = u128::from(local) + server_ns;
                if let DecisionDigest::Rejected { .. } = decision {
                    if retry_after != server_ns {
                        self.report(Invariant::Events, Some(caller), || {
                            format!("rejected with retry_after {retry_after} ns, the server said {server_ns}")
                        });
                    }
                    if opens_by <= u128::from(deadline) && at < deadline {
                        self.report(Invariant::FalseRejection, Some(caller), || {
                            format!("rejected at {at} although the window opens by {opens_by}, before its deadline {deadline}")
                        });
                    }
                } else {
                    let until = retry_after;
                    if until > u128::from(deadline) {
                        self.report(Invariant::Deadline, Some(caller), || {
                            format!("waits until {until}, past its deadline {deadline}")
                        });
                    }
                    if opens_by > u128::from(deadline) {
                        self.report(Invariant::Deadline, Some(caller), || {
                            format!("waits although the window opens at {opens_by}, after its deadline {deadline}")
                        });
                    }
                }
            }
            (
                DecisionDigest::Rejected {
                    retry_after,
                    local: true,
                }
                | DecisionDigest::Wait { until: retry_after },
                None,
            ) => {
                let is_wait = matches!(decision, DecisionDigest::Wait { .. });
                if is_wait && retry_after > u128::from(deadline) {
                    self.report(Invariant::Deadline, Some(caller), || {
                        format!("waits until {retry_after}, past its deadline {deadline}")
                    });
                }
                self.local_decision(t, caller, (!is_wait).then_some(retry_after));
            }
            (DecisionDigest::FailedOpen { .. } | DecisionDigest::Unavailable { .. }, _) => {
                self.failed_decision(caller, decision, attempt);
            }
            (other, request) => self.report(Invariant::Events, Some(caller), || {
                format!("decided {other:?} (request {request:?})")
            }),
        }
    }

    /// `Unavailable` or a fail-open permit, decided after sending `attempt`: it must be the
    /// process's policy, and a fault on those requests must explain it, checked when the
    /// trace has ended.
    fn failed_decision(&mut self, caller: u32, decision: DecisionDigest, attempt: Vec<u32>) {
        self.checks.count(&[Invariant::Unavailable]);
        let process = self.process_of(caller);
        let policy = self.scenario.processes[process as usize].fail_policy;
        let open = matches!(decision, DecisionDigest::FailedOpen { .. });
        if open != (policy == FailPolicy::Open) {
            self.report(Invariant::Unavailable, Some(caller), || {
                format!("{decision:?} under the {policy:?} policy")
            });
        }
        // Answered without a round trip by a process that has no limiter: explained by what
        // made its registration fail.
        let explaining = match &self.unregistered[process as usize] {
            Some(registration) if attempt.is_empty() => registration.clone(),
            _ => attempt,
        };
        self.failed.push((caller, explaining, open, self.record));
    }

    /// The script's reply to `request`, if it ran and answered as the script does.
    fn script_reply(&self, request: Option<u32>) -> Option<ScriptReply> {
        match self.requests.get(request? as usize)?.reply? {
            ReplyDigest::Four { values } => ScriptReply::parse(&values),
            _ => None,
        }
    }

    /// A decision on a refusal, or a refusal decided: only the one on the other.
    fn refused_decision(&mut self, caller: u32, decision: DecisionDigest, refusal: bool) {
        self.checks.count(&[Invariant::Configuration]);
        if refusal != (decision == DecisionDigest::Conflict) {
            self.report(Invariant::Configuration, Some(caller), || {
                if refusal {
                    format!(
                        "the server refused the configuration, but the call decided {decision:?}"
                    )
                } else {
                    "the call decided a configuration error the server never answered".to_owned()
                }
            });
        }
    }

    /// The memory of a window `request` found full for `caller`: none if the caller asked
    /// several permits, since the window may hold fewer.
    fn remember_full(&mut self, caller: u32, request: u32, sent: u64, received: u64) {
        let spec = self.scenario.callers[caller as usize];
        if spec.weight.permits().is_none_or(|n| n <= 1) {
            self.remember(spec.process, spec.key, request, sent, received);
        }
    }

    fn remember(&mut self, process: u16, key: u16, request: u32, sent: u64, received: u64) {
        let ran_at = self.requests.get(request as usize).map_or(0, |r| r.ran_at);
        self.remembered.insert(
            (process, key),
            Remembered {
                ran_at,
                sent,
                received,
            },
        );
    }

    /// A decision from the local memory at virtual time `t`: the key's window must be full
    /// on the server then, unless the documentation allows a late one.
    fn local_decision(&mut self, t: u64, caller: u32, retry_after: Option<u128>) {
        self.checks
            .count(&[Invariant::Events, Invariant::FalseRejection]);
        let (process, key) = (self.process_of(caller), self.key_of(caller));
        let Some(source) = self.remembered.get(&(process, key)).copied() else {
            self.report(Invariant::Events, Some(caller), || {
                "decided locally with no full window remembered".to_owned()
            });
            return;
        };
        if self
            .last_excuse
            .is_some_and(|excuse| excuse >= source.ran_at)
        {
            return;
        }
        let Some(grid) = self.grid else {
            return;
        };
        let now = self.server_us(t);
        let count = self.counts[key as usize].unwrap_or_default();
        let (index, used) = count.at(&grid, now);
        let limit = self.limit();
        if used < limit {
            self.report(Invariant::FalseRejection, Some(caller), || {
                format!("decided locally at server time {now} that key {key} is full, but window {index} has {} of {limit} permits free", limit - used)
            });
            return;
        }
        let (Some(retry_after), Some(end)) = (retry_after, grid.end(index)) else {
            return;
        };
        if self.last_step.is_some_and(|step| step >= source.ran_at) {
            return;
        }
        // The wait to the window's end, as the process's clock measures it, with the
        // rounding of server microseconds and the process's rate error.
        let remaining = (end - now) * 1_000;
        let ppm = u128::from(
            self.scenario.processes[process as usize]
                .clock
                .ppm
                .unsigned_abs(),
        );
        let elapsed = u128::from(t.saturating_sub(source.ran_at));
        let slack = (remaining + elapsed) * ppm / 1_000_000 + 2_000;
        let round_trip = u128::from(source.received.saturating_sub(source.sent));
        if retry_after + slack < remaining || retry_after > remaining + round_trip + slack {
            self.report(Invariant::Events, Some(caller), || {
                format!("a local rejection's retry_after {retry_after} ns, but the window ends in {remaining} ns (round trip {round_trip} ns)")
            });
        }
    }

    fn finish(&mut self, caller: u32, local: u64, outcome: SharedOutcome, event: EventDigest) {
        self.checks
            .count(&[Invariant::Deadline, Invariant::Liveness, Invariant::Events]);
        let process = self.process_of(caller);
        let call = &mut self.calls[caller as usize];
        call.finished = true;
        let (start, deadline, last) = (call.start, call.deadline, call.last);
        let timeout = u64::try_from(self.scenario.processes[process as usize].timeout.as_nanos())
            .unwrap_or(u64::MAX);
        // A clock running fast skips readings: a timer fires at the first reading at or past
        // its target, which may be a nanosecond past it.
        let skip = u64::from(self.scenario.processes[process as usize].clock.ppm > 0);
        if !matches!(outcome, SharedOutcome::Crashed | SharedOutcome::Unfinished)
            && local
                > deadline
                    .max(start)
                    .saturating_add(timeout)
                    .saturating_add(skip)
        {
            self.report(Invariant::Deadline, Some(caller), || {
                format!("ended at {local}, past its deadline {deadline} and one timeout")
            });
        }
        let weight = self.scenario.callers[caller as usize].weight;
        let limit = self.scenario.configured(process).0;
        let too_many = matches!(weight, Weight::Units(n) if n > limit);
        if too_many != (outcome == SharedOutcome::TooMany) {
            self.report(Invariant::Events, Some(caller), || {
                format!("{weight:?} of a limit of {limit} ended {outcome:?}")
            });
        }
        let drain = weight == Weight::Rest;
        let consistent = match (outcome, event, last) {
            (
                SharedOutcome::Drained,
                EventDigest::None,
                Some((
                    DecisionDigest::Permitted { .. }
                    | DecisionDigest::Rejected { .. }
                    | DecisionDigest::Wait { .. },
                    _,
                )),
            )
            | (
                SharedOutcome::Unavailable,
                EventDigest::None,
                Some((DecisionDigest::Unavailable { .. } | DecisionDigest::FailedOpen { .. }, _)),
            ) => drain,
            (
                SharedOutcome::Permitted { remaining: Some(r) },
                EventDigest::Permitted { remaining: e },
                Some((DecisionDigest::Permitted { remaining: d }, request)),
            ) => {
                if let Some(request) = request {
                    self.mark_granted(request);
                }
                r == e && r == d
            }
            (
                SharedOutcome::Permitted { remaining: None },
                EventDigest::Unavailable { failed_open: true },
                Some((DecisionDigest::FailedOpen { .. }, _)),
            )
            | (
                SharedOutcome::Unavailable,
                EventDigest::Unavailable { failed_open: false },
                Some((DecisionDigest::Unavailable { .. }, _)),
            )
            | (SharedOutcome::Conflict, EventDigest::None, Some((DecisionDigest::Conflict, _)))
            | (SharedOutcome::Crashed, EventDigest::None, _)
            | (SharedOutcome::TooMany, EventDigest::None, None) => true,
            (
                SharedOutcome::Rejected {
                    retry_after,
                    fields_match,
                },
                EventDigest::Rejected { retry_after: e },
                Some((DecisionDigest::Rejected { retry_after: d, .. }, _)),
            ) => fields_match && retry_after == e && retry_after == d,
            (
                SharedOutcome::Rejected {
                    retry_after,
                    fields_match,
                },
                EventDigest::Rejected { retry_after: e },
                // A waiter whose clock did not move across its sleep.
                Some((DecisionDigest::Wait { .. }, _)),
            ) => fields_match && retry_after == e,
            (SharedOutcome::Unfinished, ..) => {
                self.report(Invariant::Liveness, Some(caller), || {
                    "the call never ended".to_owned()
                });
                true
            }
            _ => false,
        };
        if !consistent {
            self.report(Invariant::Events, Some(caller), || {
                format!("ended {outcome:?} with event {event:?} after deciding {last:?}")
            });
        }
        self.slow_link_outcome(caller, outcome);
    }

    /// A call of a process whose link is slower than its timeout: no answer from the server
    /// can come in time, so the call is answered by the fail policy, or its process crashed.
    fn slow_link_outcome(&mut self, caller: u32, outcome: SharedOutcome) {
        let process = &self.scenario.processes[self.process_of(caller) as usize];
        if !process.slow_link() {
            return;
        }
        self.checks.count(&[Invariant::Unavailable]);
        let policy = process.fail_policy;
        let expected = match (policy, self.scenario.callers[caller as usize].weight) {
            // A drain takes no permit: it fails whatever the policy.
            (FailPolicy::Closed, _) | (_, Weight::Rest) => SharedOutcome::Unavailable,
            (FailPolicy::Open, _) => SharedOutcome::Permitted { remaining: None },
        };
        // Too many permits at once are refused before the server is asked.
        if outcome != expected
            && !matches!(outcome, SharedOutcome::Crashed | SharedOutcome::TooMany)
        {
            self.report(Invariant::Unavailable, Some(caller), || {
                format!("ended {outcome:?}, but its process's link is slower than its timeout: it can only fail {policy:?}")
            });
        }
    }

    fn mark_granted(&mut self, request: u32) {
        let index = request as usize;
        if self.granted.len() <= index {
            self.granted.resize(index + 1, false);
        }
        self.granted[index] = true;
    }

    fn keyspace(&mut self, keys: &[(Box<str>, Option<u64>)]) {
        self.checks.count(&[Invariant::Expiry]);
        for (key, expires_at_ms) in keys {
            let Some(&index) = self.counter_keys.get(&**key) else {
                continue;
            };
            let Some(when) = *expires_at_ms else {
                self.report(Invariant::Expiry, None, || {
                    format!("counter {key} never expires")
                });
                continue;
            };
            let (Some(count), Some(grid)) = (self.counts[index as usize], self.grid) else {
                continue;
            };
            if let Some(end) = grid.end(count.index()) {
                let latest = end.div_ceil(1_000) + u128::from(EXPIRY_MARGIN_MILLIS);
                if u128::from(when) > latest {
                    self.report(Invariant::Expiry, None, || {
                        format!("counter {key} lives until millisecond {when}, past its window's end plus the margin ({latest})")
                    });
                }
            }
        }
    }

    fn end(&mut self, run: &SharedRun) {
        self.record = run.records.len();
        self.checks.count(&[
            Invariant::WindowLimit,
            Invariant::Unavailable,
            Invariant::Liveness,
        ]);
        // Each window's permits granted to callers, against limit plus what was forgotten.
        let ledgers = std::mem::take(&mut self.ledgers);
        for ((epoch, key, window), ops) in ledgers {
            let limit = self
                .limits
                .get(&epoch)
                .copied()
                .unwrap_or(self.scenario.limit);
            let mut ledger = Ledger::new(limit);
            for op in ops {
                match op {
                    LedgerOp::Grant(request) if self.is_granted(request) => {
                        let units = self.units(request);
                        if !(0..units).all(|_| ledger.grant(window)) {
                            let (granted, allowed) = (ledger.granted(), ledger.allowed());
                            self.report(Invariant::WindowLimit, None, || {
                                format!("{granted} permits granted in window {window} of key {key} (epoch {epoch}), more than limit {limit} plus the {} the server forgot", allowed - u64::from(limit))
                            });
                        }
                    }
                    LedgerOp::Forget(request) if self.is_granted(request) => {
                        ledger.forget(window, u64::from(self.units(request)));
                    }
                    LedgerOp::Grant(_) | LedgerOp::Forget(_) => {}
                }
            }
        }
        for (caller, requests, open, record) in std::mem::take(&mut self.failed) {
            let explained = requests.iter().any(|&r| {
                self.requests
                    .get(r as usize)
                    .is_some_and(|info| info.faulted)
            });
            if !explained {
                let violation = Violation {
                    invariant: Invariant::Unavailable,
                    caller: Some(caller),
                    record,
                    detail: format!(
                        "{} with no fault on its requests {requests:?}",
                        if open { "failed open" } else { "unavailable" }
                    ),
                };
                if self.violations.len() < MOST_VIOLATIONS {
                    self.violations.push(violation);
                }
            }
        }
        if run.out_of_budget {
            self.report(Invariant::Liveness, None, || {
                "the run used up its event budget".to_owned()
            });
        }
        // A process refused at registration never connects, and one rolled out once a
        // configuration is stored never starts if none is: their callers have no limiter to
        // call.
        let never: Vec<usize> = (0..self.calls.len())
            .filter(|&c| !self.calls[c].started || !self.calls[c].finished)
            .filter(|&c| {
                let process = self.scenario.callers[c].process as usize;
                let serving = self.started_processes[process] && !self.refused_processes[process];
                self.calls[c].started || serving
            })
            .collect();
        if !never.is_empty() && !run.out_of_budget {
            self.report(Invariant::Liveness, None, || {
                format!(
                    "{} calls never began or never ended (first: caller {})",
                    never.len(),
                    never[0]
                )
            });
        }
    }

    fn is_granted(&self, request: u32) -> bool {
        self.granted.get(request as usize).copied().unwrap_or(false)
    }
}
