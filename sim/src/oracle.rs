//! The oracle: an independent model of SPEC.md that reads a trace and reports every rule the
//! limiter broke.
//!
//! It deliberately shares nothing with `fixed-window`'s window arithmetic: the rules come from
//! `fixed-window-spec`, the one model every checker uses, which computes windows in `u128` from
//! the origin (the clock's reading when the limiter was made) and the period, so that a bug in
//! the limiter's arithmetic cannot hide itself by being repeated here. It knows only what the
//! trace says: calls starting and ending, the events the listeners saw, sleeps, operations and
//! interrupts.

use core::fmt;

use fixed_window_spec::{Count, Decision, NEVER, Next, Rules, Waiting};

use crate::clock_model::ClockKind;
use crate::record::{CallKind, OpKind, OpOutput, Outcome, Record};
use crate::scenario::Scenario;
use crate::simulation::Run;

/// A rule of the specification the oracle checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Invariant {
    /// At most `limit` permits in every window.
    WindowLimit,
    /// A new window starts with all its permits and no more: nothing carries over.
    CarryOver,
    /// Waits and `retry_after` end exactly on window boundaries from origin and period.
    Alignment,
    /// A call is rejected only when its window is full and the next one opens after its
    /// deadline (or its clock did not move across a sleep); it never waits while a permit is
    /// free.
    FalseRejection,
    /// No wait is planned past the deadline; a call whose next window opens after its
    /// deadline is rejected without sleeping; on a clock that never jumps forward, every
    /// call ends by its deadline.
    Deadline,
    /// The operation runs exactly once, right after its permit, and never without one; its
    /// own result and panic come back unchanged.
    Operation,
    /// Events match outcomes: one `Permitted` or `Rejected` per decided call, exact
    /// `remaining` and `retry_after`, error fields as configured.
    Events,
    /// An interrupted wait fails with `Interrupted`, takes no permit and emits no event.
    Interrupt,
    /// No panic escapes the limiter (the operation's own panic excepted).
    Panic,
    /// Every call ends.
    Liveness,
    /// (Shared limiter) `Unavailable`, or a permit granted by the fail-open policy, only when
    /// a fault explains it (a request or reply lost or late, a reset, a server down), and
    /// each only under its own policy.
    Unavailable,
    /// (Shared limiter) A call counts at most one permit on the server, whatever its
    /// retries.
    DoubleCount,
    /// (Shared limiter) Every counter lives through its window and expires by its end plus
    /// the margin: no counter expires early, none lives forever.
    Expiry,
    /// (Shared limiter) The script runs without error, on the commands the simulated server
    /// models.
    Script,
}

impl Invariant {
    /// Every invariant, in report order.
    pub const ALL: [Invariant; 10] = [
        Invariant::WindowLimit,
        Invariant::CarryOver,
        Invariant::Alignment,
        Invariant::FalseRejection,
        Invariant::Deadline,
        Invariant::Operation,
        Invariant::Events,
        Invariant::Interrupt,
        Invariant::Panic,
        Invariant::Liveness,
    ];

    /// The invariants the shared limiter's oracle checks, in report order.
    pub const SHARED: [Invariant; 11] = [
        Invariant::WindowLimit,
        Invariant::CarryOver,
        Invariant::Alignment,
        Invariant::FalseRejection,
        Invariant::Deadline,
        Invariant::Events,
        Invariant::Unavailable,
        Invariant::DoubleCount,
        Invariant::Expiry,
        Invariant::Script,
        Invariant::Liveness,
    ];

    /// The invariant's name in reports and `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::WindowLimit => "window_limit",
            Invariant::CarryOver => "carry_over",
            Invariant::Alignment => "alignment",
            Invariant::FalseRejection => "false_rejection",
            Invariant::Deadline => "deadline",
            Invariant::Operation => "operation",
            Invariant::Events => "events",
            Invariant::Interrupt => "interrupt",
            Invariant::Panic => "panic",
            Invariant::Liveness => "liveness",
            Invariant::Unavailable => "unavailable",
            Invariant::DoubleCount => "double_count",
            Invariant::Expiry => "expiry",
            Invariant::Script => "script",
        }
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken rule, where it was broken, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub invariant: Invariant,
    /// The caller concerned, if the rule concerns one.
    pub caller: Option<u32>,
    /// The index of the trace record where it was found.
    pub record: usize,
    /// What was seen against what the model expected.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.caller {
            Some(caller) => write!(
                f,
                "{} (caller {caller}, record {}): {}",
                self.invariant, self.record, self.detail
            ),
            None => write!(
                f,
                "{} (record {}): {}",
                self.invariant, self.record, self.detail
            ),
        }
    }
}

/// Reports past this many per run are dropped: one scenario's first violations say enough.
const MOST_VIOLATIONS: usize = 64;
#[derive(Debug, Default, Clone)]
struct Caller {
    kind: Option<CallKind>,
    op: Option<OpKind>,
    waiting: Waiting,
    permits: u32,
    permit_remaining: Option<u32>,
    rejections: u32,
    rejection: Option<u128>,
    op_runs: u32,
    interrupt_sent: bool,
    interrupted_while_sleeping: bool,
    finished: bool,
}

struct Checker {
    /// The configured limiter's rules.
    rules: Rules,
    /// The stored window and its count, updated only by permits.
    count: Count,
    callers: Vec<Caller>,
    /// The window in effect: windows never move backwards, whatever the clock does.
    effective: Option<u128>,
    /// Permits counted in the window in effect.
    counted: u64,
    violations: Vec<Violation>,
    record: usize,
    /// Whether the clock never jumps forward, so that a wait ends when planned (or, on a
    /// clock that stands still or steps back, at an earlier reading) and every call by its
    /// deadline.
    no_jumps: bool,
}

/// Checks the trace of `run` against the specification, for the limiter `scenario`
/// configured; returns every violation found (at most the first few dozen).
///
/// # Examples
///
/// The real limiter breaks no rule.
///
/// ```
/// use fixed_window_sim::{Scenario, ScenarioId, Target, check, run};
///
/// let scenario = Scenario::generate(&ScenarioId::seed(3));
/// let violations = check(&scenario, &run(&scenario, Target::Real)?);
/// assert!(violations.is_empty(), "{violations:?}");
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub fn check(scenario: &Scenario, run: &Run) -> Vec<Violation> {
    let config = &scenario.config;
    let Some(rules) = Rules::new(
        u128::from(scenario.origin()),
        config.limit,
        config.period.as_nanos(),
        config.max_wait.as_nanos(),
    ) else {
        return vec![Violation {
            invariant: Invariant::Events,
            caller: None,
            record: 0,
            detail: format!("the scenario's configuration is not a limiter's: {config:?}"),
        }];
    };
    let mut checker = Checker {
        rules,
        count: Count::new(),
        callers: vec![Caller::default(); scenario.callers.len()],
        effective: None,
        counted: 0,
        violations: Vec::new(),
        record: 0,
        no_jumps: scenario.clock.kind() != ClockKind::JumpsForward,
    };
    let mut previous = None;
    for (i, record) in run.records.iter().enumerate() {
        checker.record = i;
        checker.read(record, previous);
        previous = Some(record);
    }
    checker.end(run);
    checker.violations
}

impl Checker {
    fn report(&mut self, invariant: Invariant, caller: u32, detail: impl FnOnce() -> String) {
        self.report_for(invariant, Some(caller), detail);
    }

    fn report_for(
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

    /// The caller's state, or a report that the record names no started, unfinished call.
    fn caller(&mut self, caller: u32) -> Option<&mut Caller> {
        let known = self
            .callers
            .get(caller as usize)
            .is_some_and(|state| state.kind.is_some() && !state.finished);
        if !known {
            self.report(Invariant::Events, caller, || {
                format!("a record for caller {caller}, which is not in a call")
            });
            return None;
        }
        self.callers.get_mut(caller as usize)
    }

    fn read(&mut self, record: &Record, previous: Option<&Record>) {
        match *record {
            Record::Start {
                caller,
                at,
                kind,
                max_wait,
                op,
            } => {
                if let Some(state) = self.callers.get_mut(caller as usize) {
                    *state = Caller {
                        kind: Some(kind),
                        op: Some(op),
                        waiting: Waiting::new(fixed_window_spec::deadline(
                            u128::from(at),
                            max_wait,
                        )),
                        ..Caller::default()
                    };
                }
            }
            Record::Permitted {
                caller: Some(caller),
                at,
                remaining,
            } => self.permitted(caller, at, remaining),
            Record::Rejected {
                caller: Some(caller),
                at,
                retry_after,
            } => self.rejected(caller, at, retry_after),
            Record::Sleep { caller, at, until } => self.sleep(caller, at, until),
            Record::OpRan {
                caller: Some(caller),
                at,
            } => self.op_ran(caller, at, previous),
            Record::Permitted { caller: None, .. }
            | Record::Rejected { caller: None, .. }
            | Record::OpRan { caller: None, .. } => {
                self.report_for(Invariant::Events, None, || {
                    "a record outside any call".to_owned()
                });
            }
            Record::Interrupt { caller, sleeping } => {
                if let Some(state) = self.callers.get_mut(caller as usize) {
                    state.interrupt_sent = true;
                    state.interrupted_while_sleeping |= sleeping;
                }
            }
            Record::Finish {
                caller,
                at,
                outcome,
                ..
            } => self.finish(caller, at, outcome),
        }
    }

    fn permitted(&mut self, caller: u32, at: u64, remaining: u32) {
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.permits += 1;
        state.permit_remaining = Some(remaining);
        let (deadline, permits) = (state.waiting.deadline(), state.permits);
        if permits > 1 {
            self.report(Invariant::Events, caller, || {
                "a second permit for one call".into()
            });
        }
        match self.rules.decide(&self.count, u128::from(at), deadline) {
            decision @ Decision::Permit {
                remaining: expected,
                ..
            } => {
                if remaining != expected {
                    self.report(Invariant::Events, caller, || {
                        format!("remaining {remaining} at {at}, expected {expected}")
                    });
                }
                self.count.apply(decision);
            }
            decision => self.report(Invariant::WindowLimit, caller, || {
                format!("permitted at {at} although the window was full ({decision:?})")
            }),
        }
        // Counted independently of the model's decisions: the window in effect is the latest
        // one any permit's reading fell in.
        let window = self.rules.grid.index_of(u128::from(at));
        let limit = self.rules.limit;
        let window = self.effective.map_or(window, |current| current.max(window));
        if self.effective != Some(window) {
            self.effective = Some(window);
            self.counted = 0;
            if remaining != limit - 1 {
                self.report(Invariant::CarryOver, caller, || {
                    format!(
                        "first permit of window {window} left {remaining} permits, not {}",
                        limit - 1
                    )
                });
            }
        }
        self.counted += 1;
        if self.counted == u64::from(limit) + 1 {
            let counted = self.counted;
            self.report(Invariant::WindowLimit, caller, || {
                format!("{counted} permits in window {window} (limit {limit})")
            });
        }
    }

    fn rejected(&mut self, caller: u32, at: u64, retry_after: u128) {
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.rejections += 1;
        state.rejection = Some(retry_after);
        let mut waiting = state.waiting;
        let (deadline, rejections) = (waiting.deadline(), state.rejections);
        if rejections > 1 {
            self.report(Invariant::Events, caller, || {
                "a second rejection for one call".into()
            });
        }
        // A call whose clock did not move across its sleep may give up (the spec's
        // stalled-clock rule).
        let decision = self.rules.decide(&self.count, u128::from(at), deadline);
        let expected = match waiting.next(decision, u128::from(at)) {
            Next::Permit { remaining } => {
                self.report(Invariant::FalseRejection, caller, || {
                    format!("rejected at {at} with {} permits free", remaining + 1)
                });
                return;
            }
            Next::Sleep { until } => {
                self.report(Invariant::FalseRejection, caller, || {
                    format!("rejected at {at}; the next window opens at {until}, by the deadline {deadline}")
                });
                return;
            }
            Next::Reject { retry_after } => retry_after,
        };
        if retry_after != expected {
            self.report(Invariant::Events, caller, || {
                format!("retry_after {retry_after} at {at}, expected {expected}")
            });
        }
        if retry_after != NEVER && !self.rules.grid.on_boundary(u128::from(at) + retry_after) {
            self.report(Invariant::Alignment, caller, || {
                format!("retry_after {retry_after} at {at} does not end on a window boundary")
            });
        }
    }

    fn sleep(&mut self, caller: u32, at: u64, until: u128) {
        let (rules, count) = (self.rules, self.count);
        let Some(state) = self.caller(caller) else {
            return;
        };
        let deadline = state.waiting.deadline();
        let decision = rules.decide(&count, u128::from(at), deadline);
        let next = state.waiting.next(decision, u128::from(at));
        if until > deadline {
            self.report(Invariant::Deadline, caller, || {
                format!("sleeps at {at} until {until}, past its deadline {deadline}")
            });
        }
        if !self.rules.grid.on_boundary(until) {
            self.report(Invariant::Alignment, caller, || {
                format!("sleeps at {at} until {until}, not a window boundary")
            });
        }
        match (decision, next) {
            (_, Next::Sleep { until: expected }) if expected == until => {}
            (_, Next::Sleep { until: expected }) => self.report(Invariant::Events, caller, || {
                format!("sleeps at {at} until {until}, expected until {expected}")
            }),
            (Decision::Wait { .. }, _) => self.report(Invariant::Liveness, caller, || {
                format!(
                    "sleeps again at {at} although its clock did not move across its last sleep"
                )
            }),
            (Decision::Reject { .. }, _) => self.report(Invariant::Deadline, caller, || {
                format!(
                    "sleeps at {at} although the next window opens after its deadline {deadline}"
                )
            }),
            (Decision::Permit { remaining, .. }, _) => {
                self.report(Invariant::FalseRejection, caller, || {
                    format!("sleeps at {at} with {} permits free", remaining + 1)
                });
            }
        }
    }

    fn op_ran(&mut self, caller: u32, at: u64, previous: Option<&Record>) {
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.op_runs += 1;
        let (runs, kind) = (state.op_runs, state.kind);
        let right_after_permit = matches!(
            previous,
            Some(&Record::Permitted { caller: c, at: when, .. }) if c == Some(caller) && when == at
        );
        if !right_after_permit {
            self.report(Invariant::Operation, caller, || {
                format!("operation ran at {at}, not right after its permit")
            });
        }
        if runs > 1 || !kind.is_some_and(CallKind::runs_operation) {
            self.report(Invariant::Operation, caller, || {
                format!("operation ran {runs} times")
            });
        }
    }

    fn finish(&mut self, caller: u32, at: u64, outcome: Outcome) {
        let no_jumps = self.no_jumps;
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.finished = true;
        let deadline = state.waiting.deadline();
        let problems = problems(state, outcome);
        // A run cut short by its event budget ends its calls wherever they were.
        if no_jumps && outcome != Outcome::Unfinished && u128::from(at) > deadline {
            self.report(Invariant::Deadline, caller, || {
                format!("ended at {at}, past its deadline {deadline}")
            });
        }
        for (invariant, detail) in problems {
            self.report(invariant, caller, || detail);
        }
    }

    fn end(&mut self, run: &Run) {
        if run.out_of_budget {
            self.report_for(Invariant::Liveness, None, || {
                "the run used up its event budget".into()
            });
        }
        let unfinished = self
            .callers
            .iter()
            .filter(|state| state.kind.is_some() && !state.finished)
            .count();
        if unfinished > 0 {
            self.report_for(Invariant::Liveness, None, || {
                format!("{unfinished} calls never ended")
            });
        }
    }
}

/// What is wrong with a call that ended with `outcome`, given what its trace showed.
fn problems(state: &Caller, outcome: Outcome) -> Vec<(Invariant, String)> {
    let mut problems: Vec<(Invariant, String)> = Vec::new();
    if state.interrupted_while_sleeping && outcome != Outcome::Interrupted {
        problems.push((
            Invariant::Interrupt,
            format!("interrupted while waiting, but ended {}", outcome.name()),
        ));
    }
    match outcome {
        Outcome::Permitted { remaining, op } => {
            permitted_problems(state, remaining, op, &mut problems);
        }
        Outcome::Rejected {
            retry_after,
            fields_match,
        } => {
            if state.rejections != 1 || state.permits != 0 || state.rejection != Some(retry_after) {
                problems.push((
                    Invariant::Events,
                    format!(
                        "rejected (retry_after {retry_after}) with {} Rejected events (retry_after {:?}) and {} Permitted",
                        state.rejections, state.rejection, state.permits
                    ),
                ));
            }
            if !fields_match {
                problems.push((
                    Invariant::Events,
                    "the error's fields are not the limiter's".into(),
                ));
            }
            if state.op_runs != 0 {
                problems.push((
                    Invariant::Operation,
                    "a rejected call ran its operation".into(),
                ));
            }
        }
        Outcome::Interrupted => {
            if !state.interrupt_sent {
                problems.push((
                    Invariant::Interrupt,
                    "failed as interrupted without an interrupt".into(),
                ));
            }
            if state.permits != 0 || state.rejections != 0 || state.op_runs != 0 {
                problems.push((
                    Invariant::Interrupt,
                    "an interrupted call took a permit, emitted an event or ran".into(),
                ));
            }
        }
        Outcome::Cancelled => {
            if state.permits != 0 || state.op_runs != 0 {
                problems.push((Invariant::Events, "a cancelled call took a permit".into()));
            }
        }
        Outcome::Panicked { simulated } => {
            let own = simulated && state.op == Some(OpKind::Panics) && state.op_runs == 1;
            if !own {
                problems.push((Invariant::Panic, "a panic escaped the limiter".into()));
            }
        }
        Outcome::Unfinished => {
            problems.push((Invariant::Liveness, "the call never ended".into()));
        }
    }
    if state.op == Some(OpKind::Panics)
        && state.op_runs == 1
        && !matches!(outcome, Outcome::Panicked { .. })
    {
        problems.push((
            Invariant::Operation,
            "the operation's panic was swallowed".into(),
        ));
    }
    problems
}

/// What is wrong with a call that ended with a permit.
fn permitted_problems(
    state: &Caller,
    remaining: Option<u32>,
    op: Option<OpOutput>,
    problems: &mut Vec<(Invariant, String)>,
) {
    let runs_op = state.kind.is_some_and(CallKind::runs_operation);
    if state.permits != 1 || state.rejections != 0 {
        problems.push((
            Invariant::Events,
            format!(
                "permitted with {} Permitted and {} Rejected events",
                state.permits, state.rejections
            ),
        ));
    }
    if remaining.is_some() && remaining != state.permit_remaining {
        problems.push((
            Invariant::Events,
            format!(
                "permit says {remaining:?} remaining, event {:?}",
                state.permit_remaining
            ),
        ));
    }
    if runs_op != op.is_some() || (runs_op && state.op_runs != 1) {
        problems.push((
            Invariant::Operation,
            format!("permitted call ran its operation {} times", state.op_runs),
        ));
    }
    let expected = match state.op {
        Some(OpKind::Fails) => Some(OpOutput::Failed),
        Some(OpKind::Succeeds) => Some(OpOutput::Succeeded),
        _ => None,
    };
    if op.is_some() && op != expected {
        problems.push((
            Invariant::Operation,
            format!("operation's result changed: {op:?}, not {expected:?}"),
        ));
    }
}
