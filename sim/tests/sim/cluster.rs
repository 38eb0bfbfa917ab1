//! The shared limiter on a simulated Redis Cluster: the real client and script pass with
//! slots migrating and primaries failing over, and every planted cluster bug is caught.

use fixed_window_sim::shared::{
    ClusterFault, FaultRecord, Purpose, RedirectKind, ReplyDigest, SharedPlantedBug, SharedRecord,
    SharedScenario, check_shared, run_shared, shrink_shared,
};
use fixed_window_sim::{Invariant, ScenarioId};

/// The cluster scenarios among the first `seeds`.
fn clusters(seeds: u64) -> impl Iterator<Item = SharedScenario> {
    (0..seeds)
        .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
        .filter(|scenario| scenario.cluster.is_some())
}

#[test]
fn the_real_limiter_passes_on_a_cluster_and_follows_every_moved() {
    let (mut scenarios, mut redirected, mut failovers) = (0, 0, 0);
    for scenario in clusters(600) {
        let run = run_shared(&scenario, None);
        let violations = check_shared(&scenario, &run);
        assert!(
            violations.is_empty(),
            "seed {}: {:?}",
            scenario.id.seed,
            &violations[..violations.len().min(3)]
        );
        scenarios += 1;
        redirected += usize::from(
            run.records
                .iter()
                .any(|r| matches!(r, SharedRecord::Redirected { .. })),
        );
        failovers += usize::from(run.records.iter().any(|r| {
            matches!(
                r,
                SharedRecord::Fault {
                    fault: FaultRecord::ShardFailover { .. },
                    ..
                }
            )
        }));
    }
    assert!(scenarios > 100, "{scenarios} cluster scenarios");
    assert!(
        redirected > 20 && failovers > 10,
        "{redirected} {failovers}"
    );
}

#[test]
fn a_migration_on_a_quiet_cluster_moves_counts_and_no_window_passes_its_limit() {
    // Healthy cluster scenarios with a migration added: only the migration happens.
    let mut checked = 0;
    for mut scenario in clusters(400).take(60) {
        scenario.faults = fixed_window_sim::shared::Faults::default();
        let cluster = scenario.cluster.as_mut().expect("a cluster");
        let span = scenario.callers.last().map_or(0, |c| c.arrival);
        cluster.faults = vec![(
            span / 2,
            ClusterFault::Migrate {
                first: 0,
                last: fixed_window_sim::shared::SLOTS - 1,
                to: cluster.nodes - 1,
                moves: 3,
                per_move: 1,
                step_ns: span / 8,
            },
        )];
        let run = run_shared(&scenario, None);
        let violations = check_shared(&scenario, &run);
        assert!(
            violations.is_empty(),
            "seed {}: {:?}",
            scenario.id.seed,
            &violations[..violations.len().min(3)]
        );
        checked += 1;
    }
    assert_eq!(checked, 60);
}

/// The first cluster scenario among 400 seeds whose planted run breaks `expected`, which the
/// real limiter passes; how many of those scenarios caught it.
fn assert_caught(planted: SharedPlantedBug, expected: Invariant) -> usize {
    let mut caught = 0;
    for scenario in clusters(400) {
        let violations = check_shared(&scenario, &run_shared(&scenario, Some(planted)));
        if violations.iter().any(|v| v.invariant == expected) {
            let real = check_shared(&scenario, &run_shared(&scenario, None));
            assert!(real.is_empty(), "the real limiter fails too: {real:?}");
            caught += 1;
        }
    }
    assert!(caught > 0, "{planted} went unnoticed");
    caught
}

#[test]
fn a_counter_read_from_the_wrong_primary_is_caught() {
    assert_caught(SharedPlantedBug::WrongSlot, Invariant::WindowLimit);
}

#[test]
fn a_redirect_not_followed_is_caught() {
    assert_caught(
        SharedPlantedBug::RedirectNotFollowed,
        Invariant::Unavailable,
    );
}

#[test]
fn an_ask_not_followed_is_caught() {
    let caught = assert_caught(SharedPlantedBug::AskNotFollowed, Invariant::Unavailable);
    // Only `ASK` reveals it: the real limiter follows one in those scenarios.
    let asked = clusters(400).any(|scenario| {
        run_shared(&scenario, None).records.iter().any(|r| {
            matches!(
                r,
                SharedRecord::Redirected {
                    kind: RedirectKind::Ask,
                    ..
                }
            )
        })
    });
    assert!(asked && caught > 0);
}

#[test]
fn a_conflicting_configuration_answered_otherwise_on_a_cluster_is_caught() {
    // Processes configured apart are drawn on a cluster too: refused when they register, and
    // by the counters the others wrote once one registered after the configuration key was
    // lost. A refusal read as an outage, or a started limiter answering by its policy, is
    // caught there as on one node.
    assert_caught(SharedPlantedBug::ConflictIgnored, Invariant::Configuration);
    assert_caught(
        SharedPlantedBug::StartedRefusedByPolicy,
        Invariant::Configuration,
    );
}

#[test]
fn a_counter_of_other_settings_refuses_an_attempt_on_a_cluster() {
    // Attempts on a cluster read no configuration: once the configuration key was lost and a
    // process configured apart registered afresh, each period counts on its own grid, and a
    // process meeting a counter the other settings wrote is refused there. The real limiter
    // passes every such scenario.
    let mut refused = 0;
    for scenario in
        clusters(2_000).filter(|s| s.processes.iter().any(|p| p.misconfigured.is_some()))
    {
        let run = run_shared(&scenario, None);
        let attempts: Vec<u32> = run
            .records
            .iter()
            .filter_map(|r| match r {
                SharedRecord::Sent {
                    request,
                    caller: Some(_),
                    purpose: Purpose::Acquire,
                    ..
                } => Some(*request),
                _ => None,
            })
            .collect();
        if run.records.iter().any(|r| {
            matches!(r, SharedRecord::Executed { request, reply: ReplyDigest::Four { values }, .. }
                if values[0] == -1 && attempts.contains(request))
        }) {
            let violations = check_shared(&scenario, &run);
            assert!(
                violations.is_empty(),
                "seed {}: {:?}",
                scenario.id.seed,
                &violations[..violations.len().min(3)]
            );
            refused += 1;
        }
    }
    assert!(
        refused > 0,
        "no attempt on a cluster met a counter of other settings"
    );
}

#[test]
fn one_call_in_flight_for_every_primary_is_caught() {
    // An attempt held behind a call to another primary: caught by the liveness rule per node.
    assert_caught(SharedPlantedBug::OneCallInFlight, Invariant::Liveness);
}

#[test]
fn an_attempt_behind_its_own_slots_call_sent_again_is_live() {
    // A healthy scenario: callers timed out in a batch and queued their next attempts, and the
    // batch, still in flight, was sent again after `ASK`. Its sends again name those callers
    // while their new attempts wait behind it, a call of their own slot: no liveness failure.
    let scenario = SharedScenario::generate(&ScenarioId::seed(779_101_040_553_563_694));
    assert!(scenario.cluster.is_some());
    let run = run_shared(&scenario, None);
    let mut queued: Vec<Option<u64>> = vec![None; scenario.callers.len()];
    let mut named_again = 0;
    for record in &run.records {
        match *record {
            SharedRecord::Queued { t, caller } => queued[caller as usize] = Some(t),
            SharedRecord::Sent {
                t,
                caller: Some(caller),
                purpose: Purpose::Acquire,
                again,
                ..
            } => {
                let waiting = queued[caller as usize].take();
                if again && let Some(since) = waiting {
                    named_again += 1;
                    assert!(since < t);
                    // Still waiting: its own send comes later.
                    queued[caller as usize] = Some(since);
                }
            }
            _ => {}
        }
    }
    assert!(named_again > 0, "no call sent again named a waiting caller");
    let violations = check_shared(&scenario, &run);
    assert!(
        violations.is_empty(),
        "{:?}",
        &violations[..violations.len().min(3)]
    );
}

#[test]
fn a_batch_crossing_slots_is_refused_and_caught() {
    assert_caught(SharedPlantedBug::BatchCrossingSlots, Invariant::Unavailable);
    // Refused by the primaries: CROSSSLOT, nothing run.
    let refused = clusters(200).any(|scenario| {
        let run = run_shared(&scenario, Some(SharedPlantedBug::BatchCrossingSlots));
        run.records.iter().any(|r| {
            matches!(
                r,
                SharedRecord::Executed {
                    ran_script: false,
                    reply: fixed_window_sim::shared::ReplyDigest::Error { noscript: false },
                    ..
                }
            )
        })
    });
    assert!(refused);
}

#[test]
fn a_limit_changed_on_a_cluster_reaches_attempts_through_the_counters() {
    // Attempts on a cluster read no configuration: a process holding an older limit is told
    // the newer one only by a counter that a process of the newer one wrote.
    let told = clusters(600)
        .filter(|scenario| !scenario.limit_changes.is_empty())
        .filter(|scenario| {
            let run = run_shared(scenario, None);
            assert!(
                check_shared(scenario, &run).is_empty(),
                "seed {}",
                scenario.id.seed
            );
            let attempts: Vec<u32> = run
                .records
                .iter()
                .filter_map(|r| match r {
                    SharedRecord::Sent {
                        request,
                        purpose: Purpose::Acquire,
                        ..
                    } => Some(*request),
                    _ => None,
                })
                .collect();
            run.records.iter().any(|r| {
                matches!(r, SharedRecord::Executed { request, reply: ReplyDigest::Four { values }, .. }
                    if values[0] == 3 && attempts.contains(request))
            })
        })
        .count();
    assert!(
        told > 5,
        "{told} cluster scenarios told an attempt of a changed limit"
    );
}

#[test]
fn a_counter_of_a_newer_limit_taken_for_an_older_one_is_caught() {
    // The version check skipped. Attempts on a cluster read no configuration, so a violation
    // of an attempt's is the counters' check failing.
    let caught = clusters(600)
        .filter(|scenario| !scenario.limit_changes.is_empty())
        .filter(|scenario| {
            let planted = run_shared(scenario, Some(SharedPlantedBug::OldLimitAfterChange));
            check_shared(scenario, &planted)
                .iter()
                .any(|v| v.invariant == Invariant::Configuration && v.caller.is_some())
        })
        .count();
    assert!(
        caught > 0,
        "old-limit-after-change went unnoticed on the counters"
    );
}

#[test]
fn a_call_split_by_a_migration_is_tried_again_and_no_window_passes_its_limit() {
    // Two keys of one slot, so that one call carries both; a migration of that slot moves
    // one key at a time, and a call for both between two steps is answered `TRYAGAIN`.
    let slot = |key: &str| fixed_window_sim::shared::key_slot(key);
    let mut seen = std::collections::HashMap::new();
    let (a, b) = (0..100_000)
        .map(|k| format!("t{k}"))
        .find_map(|key| {
            seen.insert(slot(&key), key.clone())
                .map(|other| (other, key))
        })
        .expect("two keys in one slot");
    let mut tried_again = 0;
    for mut scenario in clusters(400).take(60) {
        scenario.keys = vec![a.clone(), b.clone()];
        for (index, caller) in scenario.callers.iter_mut().enumerate() {
            caller.key = u16::from(index % 2 == 1);
        }
        // Live changes of keys' limits onto the two keys.
        for change in &mut scenario.key_live {
            change.key %= 2;
        }
        let span = scenario.callers.last().map_or(0, |c| c.arrival);
        let cluster = scenario.cluster.as_mut().expect("a cluster");
        let owner = u8::try_from(
            u32::from(slot(&a)) * u32::from(cluster.nodes)
                / u32::from(fixed_window_sim::shared::SLOTS),
        )
        .expect("a primary");
        cluster.faults = vec![(
            span / 4,
            ClusterFault::Migrate {
                first: slot(&a),
                last: slot(&a),
                to: (owner + 1) % cluster.nodes,
                moves: 2,
                per_move: 1,
                step_ns: span / 4,
            },
        )];
        let run = run_shared(&scenario, None);
        let violations = check_shared(&scenario, &run);
        assert!(
            violations.is_empty(),
            "seed {}: {:?}",
            scenario.id.seed,
            &violations[..violations.len().min(3)]
        );
        tried_again += usize::from(run.records.iter().any(|r| {
            matches!(
                r,
                SharedRecord::Redirected {
                    kind: RedirectKind::TryAgain,
                    ..
                }
            )
        }));
    }
    assert!(
        tried_again > 5,
        "{tried_again} scenarios tried a call again"
    );
}

#[test]
fn a_cluster_bug_shrinks_to_fewer_cluster_faults_and_still_fails() {
    let planted = Some(SharedPlantedBug::WrongSlot);
    let (id, whole) = (0..2_000)
        .map(ScenarioId::seed)
        .map(|id| (id.clone(), SharedScenario::generate(&id)))
        .find(|(_, scenario)| {
            scenario
                .cluster
                .as_ref()
                .is_some_and(|cluster| cluster.faults.len() >= 2)
                && check_shared(scenario, &run_shared(scenario, planted))
                    .iter()
                    .any(|v| v.invariant == Invariant::WindowLimit)
        })
        .expect("a wrong-slot scenario with two cluster faults or more");
    let (small, cut) = shrink_shared(&id, planted, Invariant::WindowLimit);
    let shrunk = cut.scenario(&small);
    let faults =
        |scenario: &SharedScenario| scenario.cluster.as_ref().map_or(0, |c| c.faults.len());
    assert!(
        faults(&shrunk) < faults(&whole),
        "{} cluster faults kept of {} ({cut})",
        faults(&shrunk),
        faults(&whole)
    );
    // The counter read from the wrong primary needs a migration: one is kept.
    assert!(faults(&shrunk) >= 1, "{cut}");
    assert!(
        check_shared(&shrunk, &run_shared(&shrunk, planted))
            .iter()
            .any(|v| v.invariant == Invariant::WindowLimit),
        "the shrunk scenario ({cut}) no longer fails"
    );
    // Its replay line takes the cut back.
    assert_eq!(
        cut.to_string()
            .parse::<fixed_window_sim::shared::SharedCut>(),
        Ok(cut)
    );
}
