//! A modest sweep reaches every part of the scenario space the simulator promises, and the
//! real limiter breaks no rule on it.

use core::time::Duration;
use std::collections::BTreeSet;

use fixed_window_sim::{
    CallKind, ClockKind, OpKind, OpOutput, Outcome, Record, Scenario, ScenarioId, Target, check,
    run,
};

const SEEDS: u64 = 300;

/// Everything a sweep of this size must have reached.
pub(crate) const REQUIRED: [&str; 21] = [
    "clock ordinary",
    "clock near max",
    "clock centuries",
    "clock jumps forward",
    "clock steps backward",
    "clock stands still",
    "limit one",
    "limit over a billion",
    "period one nanosecond",
    "period of years",
    "max wait zero",
    "max wait Duration::MAX",
    "blocking call waited then was permitted",
    "blocking call interrupted while waiting",
    "async call interrupted while waiting",
    "async call cancelled",
    "operation panicked",
    "operation failed",
    "listener panicked on a permit",
    "listener panicked on a rejection",
    "rejected because the clock did not move across a sleep",
];

#[test]
fn a_sweep_covers_the_scenario_space_and_the_limiter_passes_it() {
    let mut seen = BTreeSet::new();
    for seed in 0..SEEDS {
        let scenario = Scenario::generate(&ScenarioId::seed(seed));
        let trace = run(&scenario, Target::Real).unwrap();
        let violations = check(&scenario, &trace);
        assert!(violations.is_empty(), "seed {seed}: {:?}", &violations[..1]);
        note(&mut seen, &scenario, &trace.records);
    }
    let missing: Vec<&str> = REQUIRED
        .into_iter()
        .filter(|feature| !seen.contains(feature))
        .collect();
    assert!(missing.is_empty(), "not reached: {missing:?}");
}

pub(crate) fn note(seen: &mut BTreeSet<&'static str>, scenario: &Scenario, records: &[Record]) {
    let config = scenario.config;
    let mut mark = |condition: bool, feature: &'static str| {
        if condition {
            seen.insert(feature);
        }
    };
    mark(
        true,
        match scenario.clock.kind() {
            ClockKind::Ordinary => "clock ordinary",
            ClockKind::NearMax => "clock near max",
            ClockKind::Centuries => "clock centuries",
            ClockKind::JumpsForward => "clock jumps forward",
            ClockKind::StepsBackward => "clock steps backward",
            ClockKind::StandsStill => "clock stands still",
        },
    );
    mark(config.limit == 1, "limit one");
    mark(config.limit > 1_000_000_000, "limit over a billion");
    mark(
        config.period == Duration::from_nanos(1),
        "period one nanosecond",
    );
    mark(
        config.period >= Duration::from_secs(365 * 86_400),
        "period of years",
    );
    mark(config.max_wait.is_zero(), "max wait zero");
    mark(config.max_wait == Duration::MAX, "max wait Duration::MAX");
    // Every listener is told of every event, in the order the recorder saw them.
    let mut told = 0_u64;
    let mut panics_on_next_event = || {
        told += 1;
        scenario
            .panicking_listeners
            .iter()
            .any(|listener| told.is_multiple_of(listener.every))
    };
    let spec = |caller: u32| scenario.callers[caller as usize];
    let mut last_sleep = vec![None; scenario.callers.len()];
    for record in records {
        match *record {
            Record::Sleep { caller, at, .. } => last_sleep[caller as usize] = Some(at),
            Record::Permitted { .. } => {
                mark(panics_on_next_event(), "listener panicked on a permit");
            }
            Record::Rejected { caller, at, .. } => {
                mark(
                    caller
                        .and_then(|caller| last_sleep[caller as usize])
                        .is_some_and(|slept| at <= slept),
                    "rejected because the clock did not move across a sleep",
                );
                mark(panics_on_next_event(), "listener panicked on a rejection");
            }
            Record::Finish {
                caller, outcome, ..
            } => {
                let blocking = spec(caller).kind == CallKind::CallBlocking;
                let slept = last_sleep[caller as usize].is_some();
                match outcome {
                    Outcome::Permitted { op, .. } => {
                        mark(blocking && slept, "blocking call waited then was permitted");
                        mark(op == Some(OpOutput::Failed), "operation failed");
                    }
                    Outcome::Interrupted => {
                        mark(blocking && slept, "blocking call interrupted while waiting");
                        mark(!blocking && slept, "async call interrupted while waiting");
                    }
                    Outcome::Cancelled => mark(true, "async call cancelled"),
                    Outcome::Panicked { simulated: true } => {
                        mark(spec(caller).op == OpKind::Panics, "operation panicked");
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}
