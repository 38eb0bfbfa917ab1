//! How a call's end is judged: the rules its outcome is checked against, and what is wrong
//! with it given what its trace showed.

use super::{Caller, Invariant};
use crate::record::{CallKind, CallOutcome, OpKind, OpOutput, Outcome};

/// Every way a call ends, each at its discriminant: the ends a run's calls came to are counted
/// by it, and their checks added up once the trace has been read.
pub(super) const ENDINGS: [CallOutcome; 8] = [
    CallOutcome::Permitted,
    CallOutcome::Rejected,
    CallOutcome::TooMany,
    CallOutcome::Drained,
    CallOutcome::Interrupted,
    CallOutcome::Cancelled,
    CallOutcome::Panicked,
    CallOutcome::Unfinished,
];

/// The rules a call's end is judged by ([`problems`] and the deadline), by how it ended.
pub(super) fn rules_at_the_end(ending: CallOutcome, no_jumps: bool) -> &'static [Invariant] {
    use Invariant::{Deadline, Events, Interrupt, Liveness, Operation, Panic};
    match (ending, no_jumps) {
        (CallOutcome::Permitted | CallOutcome::Rejected | CallOutcome::Cancelled, true) => {
            &[Interrupt, Events, Operation, Deadline]
        }
        (CallOutcome::Permitted | CallOutcome::Rejected | CallOutcome::Cancelled, false) => {
            &[Interrupt, Events, Operation]
        }
        (CallOutcome::Interrupted, true) => &[Interrupt, Operation, Deadline],
        (CallOutcome::Interrupted, false) => &[Interrupt, Operation],
        (CallOutcome::Panicked, true) => &[Interrupt, Panic, Operation, Deadline],
        (CallOutcome::Panicked, false) => &[Interrupt, Panic, Operation],
        (CallOutcome::TooMany, _) => &[Events, Operation],
        (CallOutcome::Drained, _) => &[Events],
        (CallOutcome::Unfinished, _) => &[Interrupt, Liveness, Operation],
    }
}

/// What is wrong with a call that ended with `outcome`, given what its trace showed, on a
/// limiter whose limit in force is `limit`: the call's last decision, made as it ends, used it
/// (a call refused as too many when it began ends then too). Pushed to `problems`.
pub(super) fn problems(
    state: &Caller,
    outcome: Outcome,
    limit: u32,
    problems: &mut Vec<(Invariant, String)>,
) {
    kind_problems(state, outcome, limit, problems);
    if state.interrupted_while_sleeping && outcome != Outcome::Interrupted {
        problems.push((
            Invariant::Interrupt,
            format!("interrupted while waiting, but ended {}", outcome.name()),
        ));
    }
    match outcome {
        Outcome::Permitted { remaining, op } => {
            permitted_problems(state, remaining, op, problems);
        }
        Outcome::Rejected {
            retry_after,
            fields_match,
            limit: reported,
        } => {
            if reported != limit {
                problems.push((
                    Invariant::Events,
                    format!("rejected naming a limit of {reported}, not the {limit} in force"),
                ));
            }
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
        // Judged by `kind_problems`.
        Outcome::TooMany { .. } | Outcome::Drained { .. } => {}
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
}

/// What is wrong with how a call of its kind and weight ended: `TooMany` exactly when it asked
/// for more permits than `limit`, the limit in force at its last decision (a waiting call
/// whose weight a lowering passed ends so at its next one), `Drained` exactly for a drain,
/// and either with no permit, no event and no operation.
fn kind_problems(
    state: &Caller,
    outcome: Outcome,
    limit: u32,
    problems: &mut Vec<(Invariant, String)>,
) {
    let too_many = state.weight > limit;
    let refused = matches!(outcome, Outcome::TooMany { .. });
    let decided = matches!(
        outcome,
        Outcome::Permitted { .. } | Outcome::Rejected { .. } | Outcome::TooMany { .. }
    );
    if decided && too_many != refused {
        let weight = state.weight;
        problems.push((
            Invariant::Events,
            format!(
                "asked for {weight} permits (limit {limit}) and ended {}",
                outcome.name()
            ),
        ));
    }
    let drain = state.kind == Some(CallKind::Drain);
    if drain != matches!(outcome, Outcome::Drained { .. }) && outcome != Outcome::Unfinished {
        problems.push((
            Invariant::Events,
            format!("a call of kind {:?} ended {}", state.kind, outcome.name()),
        ));
    }
    match outcome {
        Outcome::TooMany {
            fields_match,
            limit: reported,
        } => {
            if reported != limit {
                problems.push((
                    Invariant::Events,
                    format!(
                        "refused as too many naming a limit of {reported}, not the {limit} in force"
                    ),
                ));
            }
            if state.permits != 0 || state.rejections != 0 || state.op_runs != 0 {
                problems.push((
                    Invariant::Events,
                    "a call refused as too many took a permit, emitted an event or ran".into(),
                ));
            }
            if !fields_match {
                problems.push((
                    Invariant::Events,
                    "the error's fields are not the limiter's and the call's".into(),
                ));
            }
        }
        Outcome::Drained { retry_after } => {
            if state.drains != 1 || state.drained != Some(retry_after) {
                problems.push((
                    Invariant::Events,
                    format!(
                        "drained (retry_after {retry_after}) with {} drains recorded (last {:?})",
                        state.drains, state.drained
                    ),
                ));
            }
            if state.permits != 0 || state.rejections != 0 || state.op_runs != 0 {
                problems.push((
                    Invariant::Events,
                    "a drain took a permit, emitted an event or ran".into(),
                ));
            }
        }
        _ => {}
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ending_is_at_its_discriminant() {
        for (index, ending) in ENDINGS.into_iter().enumerate() {
            assert_eq!(ending as usize, index, "{ending:?}");
        }
    }
}
