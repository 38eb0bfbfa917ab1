//! The oracle: an independent model of the rules (`docs/rules.md`) that reads a trace and
//! reports every rule the limiter broke.
//!
//! It deliberately shares nothing with `fixed-window`'s window arithmetic: the rules come from
//! `fixed-window-spec`, the one model every checker uses, which computes windows in `u128` from
//! the origin (the clock's reading when the limiter was made) and the period, so that a bug in
//! the limiter's arithmetic cannot hide itself by being repeated here. It knows only what the
//! trace says: calls starting and ending, the events the listeners saw, sleeps, operations and
//! interrupts.
//!
//! Every rule is a rule per key: the plain limiter is the one key every call is for, and a
//! keyed limiter's keys are each judged as that one would be, on the limiter's one grid
//! ([`keys`] says what is known of a key a keyed limiter may have reclaimed). For a keyed
//! limiter the oracle also follows the reclamation its documentation describes, and checks
//! after every event that the keys the limiter holds stay within the bound that follows
//! ([`reclamation`] states it).

use core::cell::Cell;
use core::num::NonZeroU128;

use fixed_window::Origin;
use fixed_window_spec::{Grid, Rules, Waiting};

mod attempts;
mod budget;
mod checks;
mod invariant;
mod keys;
mod memory;
mod outcome;
mod reclamation;

pub use self::checks::Checks;
pub use self::invariant::{Invariant, Violation};
use self::keys::KeyState;
pub use self::memory::Memory;
use self::outcome::{ENDINGS, problems, rules_at_the_end};
use self::reclamation::Reclamation;

use crate::clock_model::ClockKind;
use crate::record::{CallKind, CallOutcome, OpKind, Outcome, Record};
use crate::scenario::Scenario;
use crate::simulation::Run;

/// Reports past this many per run are dropped: one scenario's first violations say enough.
const MOST_VIOLATIONS: usize = 64;

thread_local! {
    /// The memory of the callers the thread's last verdict followed, for its next: a sweep
    /// judges thousands of traces on each thread, and a scenario's callers take a block larger
    /// than the allocator keeps at hand.
    static SPARE_CALLERS: Cell<Vec<Caller>> = const { Cell::new(Vec::new()) };
}

#[derive(Debug, Default, Clone)]
struct Caller {
    kind: Option<CallKind>,
    op: Option<OpKind>,
    /// The key the call is for.
    key: u64,
    /// The permits it asks for.
    weight: u32,
    waiting: Waiting,
    permits: u32,
    permit_remaining: Option<u32>,
    rejections: u32,
    rejection: Option<u128>,
    op_runs: u32,
    /// What its drains returned: how many, and the last.
    drains: u32,
    drained: Option<u128>,
    interrupt_sent: bool,
    interrupted_while_sleeping: bool,
    finished: bool,
}

/// What the oracle found in a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Every violation found (at most the first few dozen).
    pub violations: Vec<Violation>,
    /// For a keyed limiter, its memory against the bound.
    pub memory: Option<Memory>,
    /// How many times each rule was checked.
    pub checks: Checks,
}

struct Checker {
    /// The limiter's rules, with the limit in force.
    rules: Rules,
    /// The limit the limiter was built with.
    built_limit: u32,
    /// What is known of each key's window, by key.
    keys: Vec<KeyState>,
    /// Each key's own limit, if it has one (`docs/rules.md`: Limits per key), by key: the
    /// limit its window is judged by in place of the limiter's.
    own_limits: Vec<Option<u32>>,
    callers: Vec<Caller>,
    /// A keyed limiter's reclamation, as its documentation describes it; `None` for the
    /// plain limiter.
    reclamation: Option<Reclamation>,
    memory: Memory,
    checks: Checks,
    /// The calls that ended each way, by [`ENDINGS`]: the rules an end is judged by are
    /// counted for all of them at the end of the trace, rather than rule by rule at each.
    ends: [u64; ENDINGS.len()],
    violations: Vec<Violation>,
    /// What the rule being judged found wrong, reported and emptied after each record: one
    /// buffer for the whole trace rather than a vector handed back from every judgement.
    found: budget::Found,
    record: usize,
    /// Whether the clock never jumps forward, so that a wait ends when planned (or, on a
    /// clock that stands still or steps back, at an earlier reading) and every call by its
    /// deadline.
    no_jumps: bool,
    /// The clock's resolution: its readings are whole ticks, so a call whose next window opens
    /// by its deadline, between two readings, first sees it open at the tick at or after the
    /// deadline.
    tick: u128,
}

/// Checks the trace of `run` against the specification, for the limiter `scenario`
/// configured (a keyed one if the scenario draws keys); returns every violation found (at most
/// the first few dozen).
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
    verdict(scenario, run).violations
}

/// [`check`], with what the oracle saw of a keyed limiter's memory.
///
/// # Examples
///
/// The keyed limiter breaks no rule, and holds no more keys than the bound.
///
/// ```
/// use fixed_window_sim::{ScenarioId, Target, run, verdict};
///
/// let scenario = Target::Keyed.scenario(&ScenarioId::seed(3));
/// let verdict = verdict(&scenario, &run(&scenario, Target::Keyed)?);
/// assert!(verdict.violations.is_empty(), "{:?}", verdict.violations);
/// let memory = verdict.memory.expect("a keyed scenario");
/// assert!(memory.most_held <= memory.most_bound);
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub fn verdict(scenario: &Scenario, run: &Run) -> Verdict {
    let config = &scenario.config;
    let Some(rules) = Rules::new(
        0,
        config.limit,
        config.period.as_nanos(),
        config.max_wait.as_nanos(),
    )
    .and_then(|rules| {
        Some(Rules {
            grid: judged_grid(scenario)?,
            ..rules
        })
    }) else {
        return Verdict {
            violations: vec![Violation {
                invariant: Invariant::Events,
                caller: None,
                record: 0,
                detail: format!("the scenario's configuration is not a limiter's: {config:?}"),
            }],
            memory: None,
            checks: Checks::default(),
        };
    };
    let keys = scenario
        .callers
        .iter()
        .map(|caller| caller.key)
        .max()
        .map_or(0, |key| {
            usize::try_from(key).map_or(usize::MAX, |key| key + 1)
        });
    let keyed = scenario.keys.is_some();
    let mut own_limits = vec![None; keys];
    for &(key, limit) in &scenario.key_limits.built {
        if let Some(own) = usize::try_from(key)
            .ok()
            .and_then(|key| own_limits.get_mut(key))
        {
            *own = Some(limit);
        }
    }
    let mut checker = Checker {
        own_limits,
        built_limit: rules.limit,
        rules,
        keys: vec![
            if keyed {
                KeyState::unseen()
            } else {
                KeyState::plain()
            };
            keys
        ],
        callers: {
            let mut callers = SPARE_CALLERS.take();
            callers.clear();
            callers.resize(scenario.callers.len(), Caller::default());
            callers
        },
        reclamation: keyed.then(|| Reclamation::new(rules.grid)),
        memory: Memory::default(),
        checks: Checks::default(),
        ends: [0; ENDINGS.len()],
        violations: Vec::new(),
        found: budget::Found::new(),
        record: 0,
        no_jumps: scenario.clock.kind() != ClockKind::JumpsForward,
        tick: u128::from(scenario.clock.tick()),
    };
    for (i, record) in run.records.iter().enumerate() {
        checker.record = i;
        checker.read(record, &run.records[..i]);
    }
    checker.end(run);
    SPARE_CALLERS.set(checker.callers);
    Verdict {
        violations: checker.violations,
        memory: keyed.then_some(checker.memory),
        checks: checker.checks,
    }
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

    /// Reports what the last judgement found, if anything (rarely: only a broken rule).
    #[inline]
    fn report_found(&mut self, caller: u32) {
        if !self.found.is_empty() {
            self.report_each_found(caller);
        }
    }

    #[cold]
    fn report_each_found(&mut self, caller: u32) {
        let mut found = core::mem::take(&mut self.found);
        for (invariant, detail) in found.drain(..) {
            self.report(invariant, caller, || detail);
        }
        self.found = found;
    }

    /// The caller's state, or a report that the record names no started, unfinished call.
    #[inline]
    fn caller(&mut self, caller: u32) -> Option<&mut Caller> {
        let known = self
            .callers
            .get(caller as usize)
            .is_some_and(|state| state.kind.is_some() && !state.finished);
        if !known {
            self.not_in_a_call(caller);
            return None;
        }
        self.callers.get_mut(caller as usize)
    }

    #[cold]
    fn not_in_a_call(&mut self, caller: u32) {
        self.report(Invariant::Events, caller, || {
            format!("a record for caller {caller}, which is not in a call")
        });
    }

    /// An attempt of the limiter's at reading `at`: a keyed limiter's takes its turn at
    /// sweeping, if it has one.
    #[inline]
    fn attempt(&mut self, at: u64) {
        if let Some(reclamation) = &mut self.reclamation {
            reclamation.attempt(u128::from(at));
        }
    }

    #[expect(
        clippy::inline_always,
        reason = "one call per record: inlined into the loop over the trace, it saves its entry \
                  and exit at every record (callgrind: the oracle from 271 M to 258 M \
                  instructions per 1,000 scenarios), which the compiler left to itself does not"
    )]
    #[inline(always)]
    fn read(&mut self, record: &Record, before: &[Record]) {
        match *record {
            Record::Start {
                caller,
                at,
                kind,
                max_wait,
                op,
                key,
                weight,
            } => self.start(caller, at, kind, max_wait, op, key, weight),
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
            Record::Drained {
                caller,
                at,
                retry_after,
            } => self.drained(caller, at, retry_after),
            Record::Peeked {
                caller,
                at,
                remaining,
                limit,
                resets_in,
            } => self.peeked(caller, at, (remaining, limit, resets_in)),
            Record::OpRan {
                caller: Some(caller),
                at,
            } => self.op_ran(caller, at, before),
            Record::Held {
                caller: Some(caller),
                key,
                len,
            } => self.held(caller, key, len),
            Record::Permitted { caller: None, .. }
            | Record::Rejected { caller: None, .. }
            | Record::OpRan { caller: None, .. }
            | Record::Held { caller: None, .. } => {
                self.report_for(Invariant::Events, None, || {
                    "a record outside any call".to_owned()
                });
            }
            Record::LimitSet {
                at,
                limit,
                ceiling,
                accepted,
            } => self.limit_set(at, limit, ceiling, accepted),
            Record::KeyLimitSet {
                at,
                key,
                limit,
                ceiling,
                accepted,
            } => self.key_limit_set(at, key, limit, ceiling, accepted),
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

    #[allow(clippy::too_many_arguments)] // one per field of the record
    fn start(
        &mut self,
        caller: u32,
        at: u64,
        kind: CallKind,
        max_wait: u128,
        op: OpKind,
        key: u64,
        weight: u32,
    ) {
        if let Some(state) = self.callers.get_mut(caller as usize) {
            *state = Caller {
                kind: Some(kind),
                op: Some(op),
                key,
                weight,
                waiting: Waiting::new(fixed_window_spec::deadline(u128::from(at), max_wait)),
                ..Caller::default()
            };
        }
        self.checks.count(&[Invariant::Events]);
        if usize::try_from(key).map_or(true, |key| key >= self.keys.len()) {
            self.report(Invariant::Events, caller, || {
                format!("a call for key {key}, which no caller of the scenario has")
            });
        }
    }

    /// After an event of a keyed limiter: the event's key must be the call's, and the keys it
    /// holds within the bound.
    fn held(&mut self, caller: u32, key: u64, len: u64) {
        let Some(state) = self.caller(caller) else {
            return;
        };
        let expected = state.key;
        self.checks.count(&[Invariant::Events]);
        if key != expected {
            self.report(Invariant::Events, caller, || {
                format!("an event for key {key} in a call for key {expected}")
            });
        }
        let Some(reclamation) = &self.reclamation else {
            return;
        };
        let bound = reclamation.bound();
        self.checks.count(&[Invariant::Memory]);
        self.memory.saw(len, bound);
        if len > bound {
            self.report(Invariant::Memory, caller, || {
                format!("holds {len} keys; its reclamation leaves at most {bound}")
            });
        }
    }

    /// An operation ran: right after its call's permit, which is the record before it but
    /// for what the keyed limiter held (said between an event and what follows it). Only this
    /// record looks back, so the trace's earlier records (`before`) are searched here rather
    /// than the one before followed at every record.
    fn op_ran(&mut self, caller: u32, at: u64, before: &[Record]) {
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.op_runs += 1;
        let (runs, kind) = (state.op_runs, state.kind);
        self.checks.count(&[Invariant::Operation]);
        let previous = before
            .iter()
            .rev()
            .find(|record| !matches!(record, Record::Held { .. }));
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

    /// The scenario changed the limit: a limiter takes every limit from one to its ceiling,
    /// which is at least the limit it was built with, and refuses the others; a limit taken
    /// is in force at once, for the windows' counts as they are.
    fn limit_set(&mut self, at: u64, limit: u32, ceiling: u32, accepted: bool) {
        self.checks.count(&[Invariant::Events]);
        let built = self.built_limit;
        if ceiling < built {
            self.report_for(Invariant::Events, None, || {
                format!("a ceiling of {ceiling} below the limit {built} the limiter was built with")
            });
        }
        if accepted != (1..=ceiling).contains(&limit) {
            self.report_for(Invariant::Events, None, || {
                format!(
                    "set_limit({limit}) at {at} with a ceiling of {ceiling} was {}",
                    if accepted { "taken" } else { "refused" }
                )
            });
        }
        if let Some(rules) = self.rules.with_limit(limit).filter(|_| accepted) {
            self.rules = rules;
        }
    }

    /// The scenario changed one key's own limit: taken if it is from one to the ceiling, or
    /// taken away (`None`); in force at once for that key alone, its window's count as it is.
    fn key_limit_set(
        &mut self,
        at: u64,
        key: u64,
        limit: Option<u32>,
        ceiling: u32,
        accepted: bool,
    ) {
        self.checks.count(&[Invariant::Events]);
        let takes = limit.is_none_or(|limit| (1..=ceiling).contains(&limit));
        if accepted != takes {
            self.report_for(Invariant::Events, None, || {
                format!(
                    "set_key_limit({key}, {limit:?}) at {at} with a ceiling of {ceiling} was {}",
                    if accepted { "taken" } else { "refused" }
                )
            });
        }
        if let Some(own) = usize::try_from(key)
            .ok()
            .and_then(|key| self.own_limits.get_mut(key))
            .filter(|_| accepted)
        {
            *own = limit;
        }
    }

    /// The limit `key`'s window is judged by: its own, or the limiter's.
    fn limit_of(&self, key: u64) -> u32 {
        usize::try_from(key)
            .ok()
            .and_then(|key| self.own_limits.get(key).copied().flatten())
            .unwrap_or(self.rules.limit)
    }

    fn finish(&mut self, caller: u32, at: u64, outcome: Outcome) {
        let key = self
            .callers
            .get(caller as usize)
            .map_or(0, |state| state.key);
        let (no_jumps, tick, limit) = (self.no_jumps, self.tick, self.limit_of(key));
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.finished = true;
        // The first reading at or after the deadline: exactly it on a clock that reads
        // nanoseconds.
        let deadline = state
            .waiting
            .deadline()
            .checked_next_multiple_of(tick)
            .unwrap_or(u128::MAX);
        // Refused as too many after a sleep: by an attempt (a lowering passed the weight while
        // the call waited), which takes a keyed limiter's turn at sweeping as any attempt does.
        // Refused when it began, it made none.
        let attempted =
            matches!(outcome, Outcome::TooMany { .. }) && state.waiting.slept_from().is_some();
        problems(
            &self.callers[caller as usize],
            outcome,
            limit,
            &mut self.found,
        );
        if attempted {
            self.attempt(at);
        }
        self.ends[CallOutcome::from(outcome) as usize] += 1;
        // A run cut short by its event budget ends its calls wherever they were.
        if no_jumps && outcome != Outcome::Unfinished && u128::from(at) > deadline {
            self.report(Invariant::Deadline, caller, || {
                format!("ended at {at}, past its deadline {deadline}")
            });
        }
        self.report_found(caller);
    }

    fn end(&mut self, run: &Run) {
        for (ending, calls) in ENDINGS.into_iter().zip(self.ends) {
            self.checks
                .count_times(rules_at_the_end(ending, self.no_jumps), calls);
        }
        self.checks.count(&[Invariant::Liveness]);
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

/// The grid the oracle judges the limiter by, numbered from the window holding the clock's
/// reading at virtual time 0 (when the limiter is built); `None` for a zero period.
///
/// Windows at whole periods of Unix time are worked out here from the wall time alone, not
/// by the rule the limiter and the specification share ([`Grid::unix`]): the clock's first
/// reading stands for the scenario's Unix time, and the Unix time moves with the reading (as
/// the virtual clock's does), so the first boundary after that reading lies the rest of the
/// period on, at `reading + period − unix mod period`: a grid through it, whatever the
/// process's age.
fn judged_grid(scenario: &Scenario) -> Option<Grid> {
    let period = NonZeroU128::new(scenario.config.period.as_nanos())?;
    if scenario.origin_choice != Origin::UnixEpoch {
        return scenario.grid();
    }
    let reading = u128::from(scenario.clock.reading(0));
    let next = reading + (period.get() - u128::from(scenario.unix_time) % period.get());
    Some(Grid::through(next, false, period, reading))
}
