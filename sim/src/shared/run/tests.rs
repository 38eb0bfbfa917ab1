//! The run's pieces on scenarios cut to what each shows: one process on a healthy link, a link
//! that loses every request, a crash, a registration that never answers.

use core::time::Duration;

use fixed_window_redis::FailPolicy;

use super::run_shared;
use crate::scenario::ScenarioId;
use crate::shared::faults::{Fault, Faults};
use crate::shared::process::{Link, ProcessClock};
use crate::shared::record::{Purpose, SharedOutcome, SharedRecord};
use crate::shared::scenario::{SharedCaller, SharedScenario, Weight};

/// One healthy process and `calls` callers for one key, 10 µs apart, in a window of an hour:
/// all in the first window the process sees.
fn one_process(calls: u32, limit: u32) -> SharedScenario {
    let mut scenario = SharedScenario::generate(&ScenarioId::seed(1));
    scenario.limit = limit;
    scenario.period_us = 3_600_000_000;
    scenario.time_key = false;
    scenario.origin = None;
    scenario.faults = Faults::default();
    scenario.processes.truncate(1);
    let process = &mut scenario.processes[0];
    process.start = 0;
    process.clock = ProcessClock {
        offset_ns: 0,
        ppm: 0,
    };
    process.link = Link {
        delay_ns: 50_000,
        jitter_ns: 0,
    };
    process.timeout = Duration::from_millis(250);
    process.max_wait = Duration::ZERO;
    process.fail_policy = FailPolicy::Closed;
    process.misconfigured = None;
    scenario.keys.truncate(1);
    scenario.callers = (0..calls)
        .map(|i| SharedCaller {
            arrival: 1_000_000 + u64::from(i) * 10_000,
            process: 0,
            key: 0,
            waits: false,
            weight: Weight::One,
        })
        .collect();
    scenario
}

fn outcomes(scenario: &SharedScenario) -> Vec<SharedOutcome> {
    let run = run_shared(scenario, None);
    let mut outcomes: Vec<(u32, SharedOutcome)> = run
        .records
        .iter()
        .filter_map(|record| match *record {
            SharedRecord::Finish {
                caller, outcome, ..
            } => Some((caller, outcome)),
            _ => None,
        })
        .collect();
    outcomes.sort_by_key(|&(caller, _)| caller);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

/// How many script calls went for `purpose`: a batch's attempts each have a request id of
/// their own in the trace, all sent at the batch's one instant.
fn sent(scenario: &SharedScenario, purpose: Purpose) -> usize {
    let mut instants: Vec<u64> = run_shared(scenario, None)
        .records
        .iter()
        .filter_map(|record| match *record {
            SharedRecord::Sent { t, purpose: p, .. } if p == purpose => Some(t),
            _ => None,
        })
        .collect();
    instants.dedup();
    instants.len()
}

#[test]
fn a_healthy_process_counts_down_to_the_limit_then_rejects() {
    let outcomes = outcomes(&one_process(5, 3));
    let remaining: Vec<Option<u32>> = outcomes
        .iter()
        .map(|outcome| match *outcome {
            SharedOutcome::Permitted { remaining } => remaining,
            _ => None,
        })
        .collect();
    assert_eq!(remaining[..3], [Some(2), Some(1), Some(0)]);
    assert!(
        outcomes[3..].iter().all(|outcome| matches!(
            outcome,
            SharedOutcome::Rejected {
                fields_match: true,
                ..
            }
        )),
        "{outcomes:?}"
    );
}

#[test]
fn a_process_loads_the_script_once_and_batches_the_calls_that_queue() {
    // Callers 10 µs apart on a 100 µs round trip: each finds the last call in flight and
    // queues behind it, so the calls go in batches: fewer requests than attempts.
    let scenario = one_process(8, 100);
    // The first `EVALSHA` finds no script: `SCRIPT LOAD`, then `EVALSHA` again, once.
    assert_eq!(sent(&scenario, Purpose::Register), 2);
    assert_eq!(sent(&scenario, Purpose::Load), 1);
    let calls = sent(&scenario, Purpose::Acquire);
    assert!(calls < 8, "{calls} script calls for 8 attempts");
    // Spread a round trip apart, each goes alone.
    let mut spread = scenario.clone();
    for (i, caller) in (0_u64..).zip(&mut spread.callers) {
        caller.arrival = 1_000_000 + i * 1_000_000;
    }
    assert_eq!(sent(&spread, Purpose::Acquire), 8);
}

#[test]
fn a_link_that_loses_every_request_leaves_a_closed_process_unavailable_and_an_open_one_permitting()
{
    let mut scenario = one_process(3, 10);
    scenario.faults.request_loss_ppm = 1_000_000;
    assert!(
        outcomes(&scenario)
            .iter()
            .all(|outcome| *outcome == SharedOutcome::Unavailable)
    );
    scenario.processes[0].fail_policy = FailPolicy::Open;
    assert!(
        outcomes(&scenario)
            .iter()
            .all(|outcome| *outcome == SharedOutcome::Permitted { remaining: None })
    );
}

#[test]
fn a_crash_ends_the_calls_in_flight_and_the_process_serves_again_after_it() {
    let mut scenario = one_process(2, 10);
    // The second caller arrives while the first's request is on the wire; the crash takes
    // both, and a third caller after the restart is served.
    scenario.callers[1].arrival = 1_000_010;
    scenario.callers.push(SharedCaller {
        arrival: 20_000_000,
        ..scenario.callers[0]
    });
    scenario.faults.planned = vec![(
        1_000_020,
        Fault::Crash {
            process: 0,
            for_ns: 1_000_000,
        },
    )];
    let outcomes = outcomes(&scenario);
    assert_eq!(
        outcomes[..2],
        [SharedOutcome::Crashed, SharedOutcome::Crashed]
    );
    assert!(
        matches!(outcomes[2], SharedOutcome::Permitted { remaining: Some(_) }),
        "{outcomes:?}"
    );
}

#[test]
fn a_link_slower_than_the_timeout_never_registers_and_answers_by_the_policy() {
    let mut scenario = one_process(2, 10);
    scenario.processes[0].timeout = Duration::from_micros(50);
    let run = run_shared(&scenario, None);
    assert!(
        !run.records
            .iter()
            .any(|record| matches!(record, SharedRecord::Registered { .. }))
    );
    assert!(
        outcomes(&scenario)
            .iter()
            .all(|outcome| *outcome == SharedOutcome::Unavailable)
    );
}
