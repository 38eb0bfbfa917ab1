//! The oracle on hand-written traces: each rule fails on the trace that breaks it.

use core::time::Duration;

use fixed_window_sim::{
    CallKind, ClockKind, ClockModel, Config, Invariant, OpKind, Outcome, Record, Run, Scenario,
    ScenarioId, Segment, Stats, check,
};

use crate::rules_broken;

fn scenario(limit: u32, period: u64, max_wait: u64, callers: usize) -> Scenario {
    let mut scenario = Scenario::generate(&ScenarioId::seed(0));
    scenario.config = Config {
        limit,
        period: Duration::from_nanos(period),
        max_wait: Duration::from_nanos(max_wait),
    };
    scenario.clock = ClockModel::ordinary(100);
    scenario.origin_choice = fixed_window::Origin::Creation;
    scenario.callers.truncate(callers);
    assert_eq!(scenario.callers.len(), callers);
    scenario
}

fn trace(records: Vec<Record>) -> Run {
    Run {
        records,
        stats: Stats::default(),
        out_of_budget: false,
        panics: Vec::new(),
    }
}

fn start(caller: u32, at: u64, max_wait: u128) -> Record {
    Record::Start {
        caller,
        at,
        kind: CallKind::AcquireAsync,
        max_wait,
        op: OpKind::Succeeds,
        key: 0,
        weight: 1,
    }
}

/// Caller 0 (waiting up to `first_max_wait`) takes a permit at 100, then caller 1 starts at
/// `at`, waiting up to `max_wait`.
fn second_after_first_permit(first_max_wait: u128, at: u64, max_wait: u128) -> Vec<Record> {
    let mut records = vec![start(0, 100, first_max_wait)];
    records.extend(permitted(0, 100, 0));
    records.push(start(1, at, max_wait));
    records
}

fn permitted(caller: u32, at: u64, remaining: u32) -> [Record; 2] {
    [
        Record::Permitted {
            caller: Some(caller),
            at,
            remaining,
        },
        Record::Finish {
            caller,
            at,
            t: at,
            outcome: Outcome::Permitted {
                remaining: Some(remaining),
                op: None,
            },
        },
    ]
}

#[test]
fn a_correct_trace_passes() {
    let s = scenario(1, 10, 10, 2);
    let mut records = second_after_first_permit(10, 105, 10);
    records.push(Record::Sleep {
        caller: 1,
        at: 105,
        until: 110,
    });
    records.extend(permitted(1, 110, 0));
    assert_eq!(check(&s, &trace(records)), vec![]);
}

#[test]
fn two_permits_in_a_window_of_one_break_the_limit() {
    let s = scenario(1, 10, 0, 2);
    let mut records = second_after_first_permit(0, 109, 0);
    records.extend(permitted(1, 109, 0));
    assert!(rules_broken(&check(&s, &trace(records))).contains(&Invariant::WindowLimit));
}

#[test]
fn a_sleep_past_the_deadline_breaks_it() {
    let s = scenario(1, 10, 4, 2);
    let mut records = second_after_first_permit(0, 105, 4);
    records.push(Record::Sleep {
        caller: 1,
        at: 105,
        until: 110,
    });
    records.extend(permitted(1, 110, 0));
    assert!(rules_broken(&check(&s, &trace(records))).contains(&Invariant::Deadline));
}

#[test]
fn a_rejection_with_a_free_permit_is_false() {
    let s = scenario(2, 10, 0, 1);
    let records = vec![
        start(0, 100, 0),
        Record::Rejected {
            caller: Some(0),
            at: 100,
            retry_after: 10,
        },
        Record::Finish {
            caller: 0,
            at: 100,
            t: 0,
            outcome: Outcome::Rejected {
                retry_after: 10,
                fields_match: true,
                limit: 2,
            },
        },
    ];
    assert!(rules_broken(&check(&s, &trace(records))).contains(&Invariant::FalseRejection));
}

#[test]
fn a_wrong_retry_after_breaks_events_and_alignment() {
    let s = scenario(1, 10, 0, 2);
    let mut records = second_after_first_permit(0, 103, 0);
    records.push(Record::Rejected {
        caller: Some(1),
        at: 103,
        retry_after: 8,
    });
    records.push(Record::Finish {
        caller: 1,
        at: 103,
        t: 3,
        outcome: Outcome::Rejected {
            retry_after: 8,
            fields_match: true,
            limit: 1,
        },
    });
    let found = rules_broken(&check(&s, &trace(records)));
    assert!(found.contains(&Invariant::Events) && found.contains(&Invariant::Alignment));
}

/// Caller 0 takes the window's one permit at 100; caller 1 (deadline 115) sleeps at 105 until
/// the next window, 110, and is interrupted while it sleeps.
fn interrupted_sleeper(first_max_wait: u128) -> Vec<Record> {
    let mut records = second_after_first_permit(first_max_wait, 105, 10);
    records.push(Record::Sleep {
        caller: 1,
        at: 105,
        until: 110,
    });
    records.push(Record::Interrupt {
        caller: 1,
        sleeping: true,
    });
    records
}

#[test]
fn an_interrupted_sleeper_that_carries_on_breaks_the_interrupt_rule() {
    let s = scenario(1, 10, 10, 2);
    let mut records = interrupted_sleeper(0);
    records.extend(permitted(1, 110, 0));
    assert!(rules_broken(&check(&s, &trace(records))).contains(&Invariant::Interrupt));
}

#[test]
fn an_operation_without_a_permit_breaks_the_operation_rule() {
    let s = scenario(1, 10, 0, 1);
    let records = vec![
        Record::Start {
            caller: 0,
            at: 100,
            kind: CallKind::CallAsync,
            max_wait: 0,
            op: OpKind::Succeeds,
            key: 0,
            weight: 1,
        },
        Record::OpRan {
            caller: Some(0),
            at: 100,
        },
    ];
    let found = rules_broken(&check(&s, &trace(records)));
    assert!(found.contains(&Invariant::Operation) && found.contains(&Invariant::Liveness));
}

#[test]
fn an_event_outside_any_callers_turn_breaks_events_and_names_no_caller() {
    let s = scenario(1, 10, 0, 1);
    let mut records = vec![start(0, 100, 0)];
    records.extend(permitted(0, 100, 0));
    records.insert(
        1,
        Record::Rejected {
            caller: None,
            at: 100,
            retry_after: 10,
        },
    );
    let violations = check(&s, &trace(records));
    assert_eq!(rules_broken(&violations), [Invariant::Events]);
    assert_eq!(violations[0].caller, None);
    assert_eq!(
        violations[0].to_string(),
        "events (record 1): a record outside any call"
    );
}

#[test]
fn a_call_that_ends_past_its_deadline_breaks_it_unless_its_clock_jumped() {
    let s = scenario(1, 10, 10, 2);
    // Caller 1's only sleep was planned within its deadline, 115, yet the call ends at 120.
    let mut records = interrupted_sleeper(10);
    records.push(Record::Finish {
        caller: 1,
        at: 120,
        t: 20,
        outcome: Outcome::Interrupted,
    });
    let ordinary = check(&s, &trace(records.clone()));
    assert_eq!(rules_broken(&ordinary), [Invariant::Deadline]);
    let mut jumping = s;
    jumping.clock = ClockModel::new(
        ClockKind::JumpsForward,
        vec![Segment {
            from: 0,
            base: 100,
            frozen: false,
        }],
    );
    assert_eq!(check(&jumping, &trace(records)), vec![]);
}

#[test]
fn on_a_coarse_clock_a_call_may_end_at_the_first_reading_after_its_deadline_and_no_later() {
    // Caller 1's deadline is 115; a clock ticking every 10 ns reads 110 and then 120, so a call
    // that sees its next window open by its deadline can first do so at 120.
    let mut s = scenario(1, 10, 10, 2);
    s.clock = ClockModel::ordinary(100).with_tick(10);
    let ending = |at: u64| {
        let mut records = interrupted_sleeper(10);
        records.push(Record::Finish {
            caller: 1,
            at,
            t: at - 100,
            outcome: Outcome::Interrupted,
        });
        trace(records)
    };
    assert_eq!(check(&s, &ending(120)), vec![]);
    assert_eq!(
        rules_broken(&check(&s, &ending(130))),
        [Invariant::Deadline]
    );
}
