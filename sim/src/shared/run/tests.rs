//! The run's pieces on scenarios cut to what each shows: one process on a healthy link, a link
//! that loses every request, a crash, a registration that never answers.

use core::time::Duration;

use fixed_window_redis::FailPolicy;

use super::run_shared;
use crate::oracle::Invariant;
use crate::scenario::ScenarioId;
use crate::shared::faults::{Fault, Faults};
use crate::shared::limit_changes::LimitChange;
use crate::shared::oracle::check_shared;
use crate::shared::planted::SharedPlantedBug;
use crate::shared::process::{Link, Misconfiguration, ProcessClock};
use crate::shared::record::{DecisionDigest, LimitOutcome, Purpose, SharedOutcome, SharedRecord};
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
    scenario.limit_changes.clear();
    scenario.key_live.clear();
    scenario.processes.truncate(1);
    let process = &mut scenario.processes[0];
    process.start = 0;
    process.clock = ProcessClock {
        offset_ns: 0,
        ppm: 0,
        tick: 1,
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
fn a_link_that_loses_every_request_leaves_a_local_process_its_share() {
    let mut scenario = one_process(5, 10);
    scenario.faults.request_loss_ppm = 1_000_000;
    scenario.processes[0].fail_policy = FailPolicy::Local { share: 2 };
    let outcomes = outcomes(&scenario);
    let granted = outcomes
        .iter()
        .filter(|outcome| **outcome == SharedOutcome::Permitted { remaining: None })
        .count();
    let rejected = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, SharedOutcome::Rejected { .. }))
        .count();
    assert_eq!((granted, rejected), (2, 3), "{outcomes:?}");
    assert_eq!(check_shared(&scenario, &run_shared(&scenario, None)), []);
    // Without its local limiter, every call gets a permit: over the share, caught.
    let ignored = run_shared(&scenario, Some(SharedPlantedBug::ShareIgnored));
    assert!(
        check_shared(&scenario, &ignored)
            .iter()
            .any(|v| v.invariant == Invariant::Unavailable && v.detail.contains("over its share"))
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

#[test]
fn a_change_by_another_process_is_learnt_and_the_windows_count_counts_against_it() {
    // Process 0 takes 3 of 5; process 1 lowers the limit to 2, raises it to 6, then asks 0.
    let mut scenario = one_process(5, 5);
    scenario.processes.push(scenario.processes[0].clone());
    for (caller, at) in scenario.callers.iter_mut().zip([1, 2, 3, 5, 7]) {
        caller.arrival = at * 1_000_000;
    }
    scenario.limit_changes = [(4, 2), (6, 6), (8, 0)]
        .map(|(at, limit)| LimitChange {
            at: at * 1_000_000,
            process: 1,
            limit,
        })
        .to_vec();
    let run = run_shared(&scenario, None);
    assert_eq!(check_shared(&scenario, &run), []);
    let set: Vec<LimitOutcome> = run
        .records
        .iter()
        .filter_map(|record| match *record {
            SharedRecord::LimitSet { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect();
    assert_eq!(
        set,
        [
            LimitOutcome::Set { limit: 2 },
            LimitOutcome::Set { limit: 6 },
            LimitOutcome::Refused
        ]
    );
    // Zero is refused unsent: two changes went to the server.
    assert_eq!(sent(&scenario, Purpose::Limit), 2);
    // Process 0 is told of each change by its next attempt, made again under it: with 3 used
    // of 2 the fourth caller is rejected; under 6, the fifth caller's permit leaves 2.
    let told: Vec<u32> = run
        .records
        .iter()
        .filter_map(|record| match *record {
            SharedRecord::Decided {
                decision: DecisionDigest::LimitChanged { limit },
                ..
            } => Some(limit),
            _ => None,
        })
        .collect();
    assert_eq!(told, [2, 6]);
    let outcomes = outcomes(&scenario);
    assert!(
        matches!(
            outcomes[3],
            SharedOutcome::Rejected {
                fields_match: true,
                ..
            }
        ),
        "{outcomes:?}"
    );
    assert_eq!(outcomes[4], SharedOutcome::Permitted { remaining: Some(2) });
    // A script that counts the window afresh at the change, or lets process 0 count by its
    // old limit, grants the fourth caller a fourth permit over a limit of 2.
    for planted in [
        SharedPlantedBug::LimitChangeAppliedToPastWindow,
        SharedPlantedBug::OldLimitAfterChange,
    ] {
        let violations = check_shared(&scenario, &run_shared(&scenario, Some(planted)));
        assert!(
            violations
                .iter()
                .any(|v| v.invariant == Invariant::WindowLimit),
            "{planted}: {violations:?}"
        );
    }
}

#[test]
fn a_window_remembered_full_learns_a_raise_from_the_background_read() {
    // Process 0 fills its window (2 of 2) and remembers it full; process 1 raises the limit
    // to 10. Process 0's next call after the raise is still rejected from memory, but sends
    // the background read that learns it: the call after that one is counted under 10.
    let mut scenario = one_process(5, 2);
    scenario.processes[0].local_memory = 16;
    scenario.processes.push(scenario.processes[0].clone());
    for (caller, at) in scenario
        .callers
        .iter_mut()
        .zip([1_000, 1_010, 1_020, 3_000, 4_000])
    {
        caller.arrival = at * 1_000_000;
    }
    scenario.limit_changes = vec![LimitChange {
        at: 2_000_000_000,
        process: 1,
        limit: 10,
    }];
    let run = run_shared(&scenario, None);
    assert_eq!(check_shared(&scenario, &run), []);
    // At the third call (the window remembered full since the second, a second after the
    // process started), which tells nothing new, and at the fourth, which tells of the raise.
    assert_eq!(sent(&scenario, Purpose::Refresh), 2);
    let outcomes = outcomes(&scenario);
    assert!(
        matches!(outcomes[3], SharedOutcome::Rejected { .. }),
        "{outcomes:?}"
    );
    assert_eq!(outcomes[4], SharedOutcome::Permitted { remaining: Some(7) });
}

#[test]
fn a_process_with_nothing_remembered_on_one_node_reads_nothing_in_the_background() {
    // Calls spread over seconds, every one permitted: nothing remembered full, no cluster.
    let mut scenario = one_process(5, 10);
    scenario.processes[0].local_memory = 16;
    for (caller, at) in scenario.callers.iter_mut().zip(1_u64..) {
        caller.arrival = at * 1_000_000_000;
    }
    assert_eq!(sent(&scenario, Purpose::Refresh), 0);
}

/// One process whose user is deleted at 2 ms for 100 ms: calls during the refusal, and calls
/// at `after` (virtual times).
fn refused_user(after: &[u64]) -> SharedScenario {
    let mut scenario = one_process(3, 100);
    for &arrival in after {
        scenario.callers.push(SharedCaller {
            arrival,
            ..scenario.callers[0]
        });
    }
    for caller in &mut scenario.callers[..3] {
        caller.arrival += 1_000_000;
    }
    scenario.faults.planned = vec![(
        2_000_000,
        Fault::Refuse {
            refusal: crate::shared::faults::Refusal::NoUser,
            for_ns: 100_000_000,
        },
    )];
    scenario
}

#[test]
fn a_deleted_user_is_refused_then_the_process_connects_anew_and_decides() {
    // The calls during the refusal fail `Denied` (fail closed), the first call after it may
    // meet the refusal the connection kept, and the calls half a second later are counted.
    let scenario = refused_user(&[150_000_000, 800_000_000, 801_000_000]);
    let run = run_shared(&scenario, None);
    assert_eq!(check_shared(&scenario, &run), []);
    let outcomes = outcomes(&scenario);
    assert_eq!(outcomes[..3], [SharedOutcome::Unavailable; 3]);
    assert!(
        outcomes[4..]
            .iter()
            .all(|outcome| matches!(outcome, SharedOutcome::Permitted { remaining: Some(_) })),
        "{outcomes:?}"
    );
    // The planted client keeps its refused connection: refused for good, which the oracle
    // reports as a process not recovering.
    let planted = run_shared(&scenario, Some(SharedPlantedBug::NeverRecovers));
    let violations = check_shared(&scenario, &planted);
    assert!(
        violations
            .iter()
            .any(|v| v.invariant == Invariant::Liveness),
        "{violations:?}"
    );
}

#[test]
fn a_refused_process_that_crashed_answers_by_its_policy_when_its_new_registration_fails() {
    // Process 1, made with `start` and configured apart, is refused, then crashes. The new
    // process knows of no refusal: its registration, held up by a pause of the server, times
    // out, so it has no limiter and answers its caller by its fail policy. Kept refused across
    // the crash, it left that caller waiting for good.
    let mut scenario = one_process(2, 10);
    let mut apart = scenario.processes[0].clone();
    apart.misconfigured = Some(Misconfiguration::Limit(11));
    apart.started = true;
    scenario.processes.push(apart);
    scenario.callers[1].process = 1;
    scenario.callers[1].arrival = 30_000_000;
    scenario.faults.planned = vec![
        (
            5_000_000,
            Fault::Crash {
                process: 1,
                for_ns: 20_000_000,
            },
        ),
        (
            25_000_000,
            Fault::Pause {
                for_ns: 400_000_000,
            },
        ),
    ];
    let run = run_shared(&scenario, None);
    let refused = run
        .records
        .iter()
        .position(|r| matches!(r, SharedRecord::Conflicted { process: 1, .. }));
    let failed = run
        .records
        .iter()
        .position(|r| matches!(r, SharedRecord::RegistrationFailed { process: 1, .. }));
    assert!(
        refused.is_some() && failed > refused,
        "refused {refused:?}, then failed {failed:?}"
    );
    assert_eq!(
        outcomes(&scenario),
        [
            SharedOutcome::Permitted { remaining: Some(9) },
            SharedOutcome::Unavailable
        ]
    );
    let violations = check_shared(&scenario, &run);
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn a_call_waiting_on_the_local_share_when_its_process_is_refused_wakes_to_conflict() {
    // Process 1, made with `start` and configured apart, fails its first registration (the
    // server paused) and answers by its local share: the first caller gets the share, the
    // second waits for the next window of the process's grid. Its registration is refused
    // meanwhile, so the waiting call's next attempt answers `Conflict`, as the limiter's
    // finds the refusal before anything else.
    let mut scenario = one_process(3, 10);
    scenario.period_us = 1_000_000;
    let mut apart = scenario.processes[0].clone();
    apart.misconfigured = Some(Misconfiguration::Limit(11));
    apart.started = true;
    apart.fail_policy = FailPolicy::Local { share: 1 };
    apart.max_wait = Duration::from_secs(2);
    scenario.processes.push(apart);
    for (caller, arrival) in [(1, 260_000_000), (2, 270_000_000)] {
        scenario.callers[caller].process = 1;
        scenario.callers[caller].arrival = arrival;
        scenario.callers[caller].waits = true;
    }
    scenario.faults.planned = vec![(
        350_000,
        Fault::Pause {
            for_ns: 300_000_000,
        },
    )];
    let run = run_shared(&scenario, None);
    let violations = check_shared(&scenario, &run);
    assert!(violations.is_empty(), "{violations:?}");
    assert_eq!(
        outcomes(&scenario)[1..],
        [
            SharedOutcome::Permitted { remaining: None },
            SharedOutcome::Conflict
        ]
    );
}

#[test]
fn a_share_handed_back_is_granted_to_another_process_in_the_same_window() {
    // Process 0 leases 8 of 10 for its one call, then hands the 7 it did not spend back;
    // process 1, counting exactly, is granted 9 of its 10 calls in the same window.
    let mut scenario = one_process(11, 10);
    let mut exact = scenario.processes[0].clone();
    exact.lease = None;
    scenario.processes[0].lease = fixed_window_redis::Lease::new(8)
        .and_then(|lease| lease.with_divisor(1))
        .ok();
    scenario.processes.push(exact);
    for (i, caller) in scenario.callers.iter_mut().enumerate() {
        if i > 0 {
            caller.process = 1;
            caller.arrival += 2_000_000;
        }
    }
    scenario.hand_backs = vec![crate::shared::HandBack {
        at: 2_000_000,
        process: 0,
    }];
    let run = run_shared(&scenario, None);
    assert_eq!(check_shared(&scenario, &run), []);
    let taken: Vec<Option<u32>> = run
        .records
        .iter()
        .filter_map(|record| match *record {
            SharedRecord::HandedBack { taken, .. } => Some(taken),
            _ => None,
        })
        .collect();
    assert_eq!(taken, [Some(7)]);
    let permitted = outcomes(&scenario)
        .iter()
        .filter(|o| matches!(o, SharedOutcome::Permitted { remaining: Some(_) }))
        .count();
    assert_eq!(permitted, 10);
    // Without the hand-back, process 1 gets the 2 the share left.
    scenario.hand_backs.clear();
    let permitted = outcomes(&scenario)
        .iter()
        .filter(|o| matches!(o, SharedOutcome::Permitted { remaining: Some(_) }))
        .count();
    assert_eq!(permitted, 3);
}
