//! The shared limiter under simulation: the real client and script pass under every fault
//! drawn (the oracle catching each of its planted bugs is in `shared_planted`).

use fixed_window_sim::shared::{
    FAULT_NAMES, ReplyDigest, SharedCut, SharedOutcome, SharedPlantedBug, SharedRecord,
    SharedScenario, SharedTarget, TIME_KEY, Weight, check_shared, run_shared,
};
use fixed_window_sim::{ScenarioId, Sweep, sweep};

#[test]
fn the_real_shared_limiter_breaks_no_rule() {
    let mut failures = Vec::new();
    for seed in 0..500 {
        let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
        let run = run_shared(&scenario, None);
        let violations = check_shared(&scenario, &run);
        if !violations.is_empty() {
            failures.push((seed, violations));
        }
    }
    for (seed, violations) in failures.iter().take(20) {
        eprintln!(
            "seed {seed}: {} violations, first: {}",
            violations.len(),
            violations[0]
        );
    }
    assert!(
        failures.is_empty(),
        "{} of 500 scenarios failed",
        failures.len()
    );
}

/// A kind of scenario: its name, and whether a scenario is of it.
type Kind<'a> = (&'a str, &'a dyn Fn(&SharedScenario) -> bool);

#[test]
fn limits_periods_keys_and_ages_drawn_as_wide_as_users_meet_break_no_rule() {
    use fixed_window_redis::{MAX_KEY_LEN, MAX_PERIOD};
    let longest = u64::try_from(MAX_PERIOD.as_micros()).unwrap();
    let day = 86_400_000_000;
    // Limits a few below `u32::MAX`, periods of days and within a day of the longest, keys of
    // more than half `MAX_KEY_LEN` bytes, processes born with their clock beside older ones and
    // clocks that read a century: a dozen scenarios of each, granting permits.
    let kinds: [Kind; 6] = [
        ("limit near u32::MAX", &|s| s.limit >= u32::MAX - 3),
        ("period of days", &|s| {
            (day..longest - day).contains(&s.period_us)
        }),
        ("period near the longest", &|s| s.period_us >= longest - day),
        ("long keys", &|s| {
            s.keys.iter().any(|k| k.len() > MAX_KEY_LEN / 2)
        }),
        (
            "processes of different ages, one born with its clock",
            &|s| {
                s.processes.iter().any(|p| p.clock.offset_ns == 0)
                    && s.processes.iter().any(|p| p.clock.offset_ns > 1 << 30)
            },
        ),
        ("a clock that reads years", &|s| {
            s.processes.iter().any(|p| p.clock.offset_ns >= 1 << 55)
        }),
    ];
    for (name, is_kind) in kinds {
        let (mut found, mut permits) = (0, 0);
        for seed in 0..5_000 {
            let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
            if !is_kind(&scenario) {
                continue;
            }
            let run = run_shared(&scenario, None);
            assert_eq!(check_shared(&scenario, &run), [], "{name}: seed {seed}");
            permits += run.stats.permits;
            found += 1;
            if found == 12 {
                break;
            }
        }
        assert_eq!(found, 12, "{name}");
        assert!(permits > 0, "{name}");
    }
}

/// Whether `caller` asks more permits at once than its process's limit: refused before
/// anything else.
fn too_many(scenario: &SharedScenario, caller: u32) -> bool {
    let spec = scenario.callers[caller as usize];
    matches!(spec.weight, Weight::Units(n) if n > scenario.configured(spec.process).0)
}

/// Seeds searched for a scenario that exposes a planted bug.
pub(crate) const PLANTED_SEEDS: u64 = 400;

#[test]
fn a_link_slower_than_its_timeout_is_drawn_and_every_call_is_answered_by_the_fail_policy() {
    use fixed_window_redis::FailPolicy;
    let (mut slow, mut closed, mut open, mut local) = (0, 0, 0, 0);
    for seed in 0..PLANTED_SEEDS {
        let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
        let slow_processes: Vec<u16> = (0_u16..)
            .zip(&scenario.processes)
            .filter(|(_, p)| p.slow_link())
            .map(|(index, _)| index)
            .collect();
        if slow_processes.is_empty() {
            continue;
        }
        slow += 1;
        assert!(!scenario.healthy(), "seed {seed}");
        let run = run_shared(&scenario, None);
        assert!(!run.out_of_budget, "seed {seed}");
        assert_eq!(check_shared(&scenario, &run), [], "seed {seed}");
        // It never registers, never sends an attempt, and answers every call of its own.
        for record in &run.records {
            match *record {
                SharedRecord::Registered { process, .. } => {
                    assert!(!slow_processes.contains(&process), "seed {seed}");
                }
                SharedRecord::Finish {
                    caller, outcome, ..
                } => {
                    let spec = scenario.callers[caller as usize];
                    let process = spec.process;
                    if !slow_processes.contains(&process) || outcome == SharedOutcome::TooMany {
                        // Too many permits at once are refused before anything is sent.
                        continue;
                    }
                    if spec.weight == Weight::Rest {
                        // A drain takes no permit: it fails whatever the policy.
                        assert_eq!(outcome, SharedOutcome::Unavailable, "seed {seed}");
                        continue;
                    }
                    match scenario.processes[process as usize].fail_policy {
                        FailPolicy::Closed => {
                            assert_eq!(outcome, SharedOutcome::Unavailable, "seed {seed}");
                            closed += 1;
                        }
                        FailPolicy::Open => {
                            assert_eq!(
                                outcome,
                                SharedOutcome::Permitted { remaining: None },
                                "seed {seed}"
                            );
                            open += 1;
                        }
                        FailPolicy::Local { share } => {
                            // Its local share decides: a permit, or a rejection by its window;
                            // more than the share at once fails closed.
                            let above = spec.weight.permits().is_some_and(|n| n > share);
                            assert!(
                                matches!(
                                    outcome,
                                    SharedOutcome::Permitted { remaining: None }
                                        | SharedOutcome::Rejected { .. }
                                ) || (above && outcome == SharedOutcome::Unavailable),
                                "seed {seed}: {outcome:?}"
                            );
                            local += 1;
                        }
                        other => panic!("the simulator draws no {other:?}"),
                    }
                }
                _ => {}
            }
        }
        let calls = scenario
            .callers
            .iter()
            .filter(|c| slow_processes.contains(&c.process))
            .count();
        let answered = run
            .records
            .iter()
            .filter(|r| matches!(r, SharedRecord::Finish { caller, .. } if slow_processes.contains(&scenario.callers[*caller as usize].process)))
            .count();
        assert_eq!(answered, calls, "seed {seed}");
    }
    assert!(slow >= 5, "only {slow} scenarios with a slow link");
    assert!(
        closed > 0 && open > 0 && local > 0,
        "{closed} closed, {open} open, {local} local"
    );
}

#[test]
fn a_slow_link_once_drawn_as_healthy_now_registers_and_passes() {
    // A 50,000-scenario sweep drew this process with a tight timeout on a clock running fast:
    // the timeout, measured on that clock, fell below the least round trip, so every
    // registration timed out in a scenario labelled healthy. Timeouts are now drawn clear of
    // the least round trip as the process's clock measures it.
    let id: ScenarioId = "3503911093684101230:167".parse().unwrap();
    let cut: SharedCut = "p:0/f:/l:0".parse().unwrap();
    let scenario = cut.scenario(&id);
    assert!(scenario.healthy());
    let run = run_shared(&scenario, None);
    assert!(!run.out_of_budget);
    assert_eq!(check_shared(&scenario, &run), []);
    assert_eq!(run.stats.calls, 1);
    // With its timeout cut below the round trip, the same process never registers: its one
    // call is answered by its fail policy (closed), and the run ends.
    let mut slow = scenario.clone();
    slow.processes[0].timeout = core::time::Duration::from_millis(2);
    assert!(slow.processes[0].slow_link() && !slow.healthy());
    let run = run_shared(&slow, None);
    assert!(!run.out_of_budget);
    assert_eq!(check_shared(&slow, &run), []);
    assert_eq!((run.stats.calls, run.stats.unavailable), (1, 1));
}

/// The shrunk replay line of a scenario of a fresh-seed sweep: healthy, it must pass.
fn passes(id: &str, cut: &str) {
    let id: ScenarioId = id.parse().unwrap();
    let cut: SharedCut = cut.parse().unwrap();
    let scenario = cut.scenario(&id);
    let run = run_shared(&scenario, None);
    assert!(!run.out_of_budget);
    assert_eq!(check_shared(&scenario, &run), []);
}

#[test]
fn a_failover_after_a_key_expired_and_migrated_away_undoes_nothing_of_it() {
    // A 100,000-scenario cluster sweep (seed 20261211): a key expired on its primary while its
    // slot migrated, was written again on the target, and the old primary failed over. Its
    // write from before the expiry stayed in the old primary's log, so the failover reported
    // it undone and the oracle forgot the target's count.
    passes("988845122755306340:19,60,68", "p:2/f:/c:1,2/s:/l:0");
}

#[test]
fn a_failover_undoing_writes_across_a_keys_expiry_restores_its_settings_from_before_them() {
    // A 100,000-scenario cluster sweep (seed 20261212): the server's clock stepped forward, a
    // key expired and was written anew, the clock stepped back, and a failover undid the
    // writes from before the expiry on. The server's counter came back with the settings the
    // oldest undone write found; the oracle restored only those of the write after the
    // expiry (none), and took the next attempt's "changed" reply for a false one.
    passes(
        "10729009514873872056:178,189-192,194-203,227-228",
        "p:0,2,3/f:4,5/c:4/s:1/l:0",
    );
}

#[test]
fn a_step_back_past_an_expired_counter_reopens_its_earlier_windows_as_documented() {
    // A 20,000-scenario sweep: a key counted in window 0, then in window 3 (its counter moved
    // on), whose counter then expired; the server's clock stepped back before the origin and
    // window 0 granted again. The README says so (a step back to a window whose counter
    // expired opens that window afresh): the expiry forgot window 0's permit as well as
    // window 3's, and the oracle must count both as forgotten.
    let id: ScenarioId = "11123313056198883897:8,47,49,56-58,65-66,69,73,77,79,156"
        .parse()
        .unwrap();
    let cut: SharedCut = "p:2,3/f:0,3,5/l:0".parse().unwrap();
    let scenario = cut.scenario(&id);
    let run = run_shared(&scenario, None);
    assert_eq!(check_shared(&scenario, &run), []);
    // The run does reach the case: key 2's first window granted twice, once before and once
    // after the step back.
    let origin = run.records.iter().find_map(|r| match r {
        SharedRecord::Registered { origin_us, .. } => Some(*origin_us),
        _ => None,
    });
    let on_key_2: Vec<u32> = run
        .records
        .iter()
        .filter_map(|r| match r {
            SharedRecord::Sent {
                request,
                caller: Some(caller),
                ..
            } if scenario.callers[*caller as usize].key == 2 => Some(*request),
            _ => None,
        })
        .collect();
    let first_window = run
        .records
        .iter()
        .filter(|r| {
            matches!(r, SharedRecord::Executed { request, reply: ReplyDigest::Four { values }, .. }
                if on_key_2.contains(request) && values[0] == 1
                    && Some(u64::try_from(values[3]).unwrap()) == origin)
        })
        .count();
    assert_eq!(first_window, 2);
}

/// Whether a process configured apart answered as it must without a round trip: `Conflict` once
/// refused (made with `start`), by its fail policy before.
fn answered_apart(refused: bool, decision: fixed_window_sim::shared::DecisionDigest) -> bool {
    use fixed_window_sim::shared::DecisionDigest;
    if refused {
        decision == DecisionDigest::Conflict
    } else {
        matches!(
            decision,
            DecisionDigest::Unavailable { .. } | DecisionDigest::FailedOpen { .. }
        )
    }
}

#[test]
fn a_process_configured_apart_is_refused_and_never_permitted() {
    use fixed_window_sim::shared::{DecisionDigest, Fault, Misconfiguration};
    let (mut refused, mut attempts_refused) = (0, 0);
    // Calls answered `Conflict` by a process made with `start`.
    let mut started_conflicts = 0;
    for seed in 0..PLANTED_SEEDS {
        let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
        let apart: Vec<u16> = (0_u16..)
            .zip(&scenario.processes)
            .filter(|(_, p)| p.misconfigured.is_some())
            .map(|(index, _)| index)
            .collect();
        if apart.is_empty() {
            continue;
        }
        let run = run_shared(&scenario, None);
        assert_eq!(check_shared(&scenario, &run), [], "seed {seed}");
        refused += run
            .records
            .iter()
            .filter(|r| matches!(r, SharedRecord::Conflicted { process, .. } if apart.contains(process)))
            .count();
        // After a restart or a failover, whichever process runs first stores its own
        // configuration: then the others' attempts are refused.
        attempts_refused += run
            .records
            .iter()
            .filter(|r| {
                matches!(
                    r,
                    SharedRecord::Decided {
                        decision: DecisionDigest::Conflict,
                        request: Some(_),
                        ..
                    }
                )
            })
            .count();
        let state_lost = scenario.faults.planned.iter().any(|(_, f)| {
            matches!(
                f,
                Fault::Restart { .. } | Fault::RestartWithoutUser { .. } | Fault::Failover { .. }
            )
        });
        // Once the limit is changed, a newer version of it supersedes any configured limit: a
        // process configured apart only by its limit then registers, adopting the new one. A
        // live change of a key's limit stores a newer version too (the limit kept).
        let changed =
            scenario.limit_changes.iter().any(|c| c.limit > 0) || !scenario.key_live.is_empty();
        let superseded = changed
            && apart.iter().any(|&p| {
                matches!(
                    scenario.processes[p as usize].misconfigured,
                    Some(Misconfiguration::Limit(_))
                )
            });
        if !state_lost && !superseded {
            // The shared configuration stays stored: the process apart never registers, and
            // none of its callers gets a permit counted on the server. The only calls it
            // answers are answered while its registration fails `Unavailable`, before the
            // server has refused it: by its fail policy, without a round trip.
            assert!(
                !run.records.iter().any(|r| matches!(r, SharedRecord::Registered { process, .. } if apart.contains(process))),
                "seed {seed}"
            );
            // Made with `connect`, it serves nothing once refused; made with `start`, it
            // answers every call `Conflict`, never a permit nor its fail policy.
            let mut refused_yet = false;
            for record in &run.records {
                match *record {
                    SharedRecord::Conflicted { process, .. } if apart.contains(&process) => {
                        refused_yet = true;
                    }
                    SharedRecord::Start { caller, .. }
                        if apart.contains(&scenario.callers[caller as usize].process)
                            && !too_many(&scenario, caller) =>
                    {
                        let process = scenario.callers[caller as usize].process;
                        assert!(
                            !refused_yet || scenario.processes[process as usize].started,
                            "seed {seed}: caller {caller} began after the refusal"
                        );
                    }
                    SharedRecord::Decided {
                        caller,
                        request,
                        decision,
                        ..
                    } if apart.contains(&scenario.callers[caller as usize].process) => {
                        assert!(
                            request.is_none() && answered_apart(refused_yet, decision),
                            "seed {seed}: caller {caller} decided {decision:?} (request {request:?}, refused: {refused_yet})"
                        );
                        if refused_yet {
                            started_conflicts += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(refused >= 10, "only {refused} refusals");
    assert!(attempts_refused > 0, "no attempt was refused");
    assert!(
        started_conflicts >= 10,
        "only {started_conflicts} calls answered `Conflict`"
    );
}

#[test]
fn skewed_client_clocks_change_no_outcome_but_the_clients_clock_plant_does() {
    use fixed_window_redis::FailPolicy;
    // Time comes from the server: shifting every process's clock by its own amount must leave
    // every call's outcome as it was. The planted client that sends its own reading breaks it.
    let outcomes = |scenario: &SharedScenario, planted| -> Vec<(u32, SharedOutcome)> {
        run_shared(scenario, planted)
            .records
            .iter()
            .filter_map(|r| match r {
                &SharedRecord::Finish {
                    caller, outcome, ..
                } => Some((caller, outcome)),
                _ => None,
            })
            .collect()
    };
    let mut differed_planted = 0;
    for seed in 0..200 {
        let mut scenario = SharedScenario::generate(&ScenarioId::seed(seed));
        // Except under `FailPolicy::Local`, whose windows are each process's own, on its clock.
        for process in &mut scenario.processes {
            if matches!(process.fail_policy, FailPolicy::Local { .. }) {
                process.fail_policy = FailPolicy::Closed;
            }
        }
        let mut skewed = scenario.clone();
        // Whole ticks: a coarse clock's readings keep their phase against the time.
        for (n, process) in (1_u64..).zip(&mut skewed.processes) {
            let shift = n * 7_777_777_777_777;
            process.clock.offset_ns += shift - shift % process.clock.tick.max(1);
        }
        assert_eq!(
            outcomes(&scenario, None),
            outcomes(&skewed, None),
            "seed {seed}"
        );
        if outcomes(&scenario, Some(SharedPlantedBug::ClientClock))
            != outcomes(&skewed, Some(SharedPlantedBug::ClientClock))
        {
            differed_planted += 1;
            // And the oracle catches it under the skew, on its own.
            let run = run_shared(&skewed, Some(SharedPlantedBug::ClientClock));
            assert!(!check_shared(&skewed, &run).is_empty(), "seed {seed}");
        }
    }
    assert!(differed_planted > 0);
}

#[test]
fn the_time_key_path_is_drawn_and_read() {
    let (mut read, mut caught) = (0, 0);
    for seed in 0..200 {
        let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
        if !scenario.time_key {
            continue;
        }
        let run = run_shared(&scenario, None);
        assert_eq!(check_shared(&scenario, &run), [], "seed {seed}");
        let kept = run.records.iter().any(|r| {
            matches!(r, SharedRecord::Keyspace { keys, .. } if keys.iter().any(|(k, _)| **k == *TIME_KEY))
        });
        read += usize::from(kept && run.stats.scripts > 0);
        // The script's window arithmetic off by one is caught on that path too.
        let planted = run_shared(&scenario, Some(SharedPlantedBug::BoundaryOffByOne));
        caught += usize::from(!check_shared(&scenario, &planted).is_empty());
    }
    assert!(read >= 10, "only {read} scenarios read the time key");
    assert!(
        caught > 0,
        "the boundary off by one went unnoticed on the time key"
    );
}

#[test]
fn a_scenario_gives_the_same_trace_on_every_thread() {
    let ids: Vec<ScenarioId> = (0..40).map(ScenarioId::seed).collect();
    let hashes = |ids: &[ScenarioId]| -> Vec<u64> {
        ids.iter()
            .map(|id| run_shared(&SharedScenario::generate(id), None).trace_hash())
            .collect()
    };
    let here = hashes(&ids);
    let there = std::thread::scope(|scope| scope.spawn(|| hashes(&ids)).join().unwrap());
    assert_eq!(here, there);
    assert_eq!(here, hashes(&ids));
}

#[test]
fn a_sweep_injects_every_fault_and_keeps_most_scenarios_healthy() {
    let summary = sweep(
        &Sweep {
            seed: 1,
            scenarios: 300,
            shard: (0, 1),
            threads: 2,
            target: SharedTarget { planted: None },
            check_determinism: false,
        },
        |_| {},
    );
    for name in FAULT_NAMES {
        assert!(
            summary.counts.faults[name] > 0,
            "{name} never happened: {:?}",
            summary.counts.faults
        );
    }
    assert!(
        summary.counts.healthy * 3 > summary.scenarios,
        "{} healthy of {}",
        summary.counts.healthy,
        summary.scenarios
    );
    assert!(
        summary.counts.local_rejections > 0 && summary.waits > 0 && summary.counts.failed_open > 0
    );
    assert!(summary.failures.is_empty());
}

#[test]
fn a_failing_sweep_reports_its_failures_shrunk_and_each_shrunk_one_still_fails() {
    let summary = sweep(
        &Sweep {
            seed: 3,
            scenarios: 120,
            shard: (0, 1),
            threads: 2,
            target: SharedTarget {
                planted: Some(SharedPlantedBug::RetryLostReply),
            },
            check_determinism: false,
        },
        |_| {},
    );
    let shrunk: Vec<_> = summary
        .failures
        .iter()
        .filter_map(|f| Some((f, f.shrunk.as_ref()?)))
        .collect();
    assert!(!shrunk.is_empty(), "no failure was shrunk");
    let mut smaller = 0;
    for (failure, (id, cut)) in shrunk {
        let whole = SharedScenario::generate(&failure.id);
        let small = cut.scenario(id);
        assert!(small.callers.len() <= whole.callers.len());
        assert!(small.processes.len() <= whole.processes.len());
        assert!(small.faults.planned.len() <= whole.faults.planned.len());
        let rule = failure.violations[0].invariant;
        let run = run_shared(&small, Some(SharedPlantedBug::RetryLostReply));
        assert!(
            check_shared(&small, &run)
                .iter()
                .any(|v| v.invariant == rule),
            "{id} {cut} no longer breaks {rule}"
        );
        // The cut travels as text and comes back the same.
        assert_eq!(cut.to_string().parse::<SharedCut>().as_ref(), Ok(cut));
        smaller += usize::from(small.callers.len() < whole.callers.len());
    }
    assert!(smaller > 0);
}

#[test]
fn a_window_too_full_for_several_permits_is_not_remembered_full() {
    // Two 100,000-scenario sweeps: a process told its window was too full for several
    // permits remembers nothing (it may hold fewer), and its later local rejections come from
    // an earlier full window; the oracle had taken the refusal for the memory's source.
    for (id, cut) in [
        (
            "13063304306699067484:148-150,154,156-159,165,167,170,172",
            "p:0,1,2/f:1/l:0",
        ),
        (
            "14033189822898626028:21,28,32,36,42,47,51,75,101",
            "p:0,1,5,6/f:1,2/l:0",
        ),
    ] {
        let id: ScenarioId = id.parse().unwrap();
        let cut: SharedCut = cut.parse().unwrap();
        let scenario = cut.scenario(&id);
        let run = run_shared(&scenario, None);
        assert_eq!(check_shared(&scenario, &run), [], "{id}");
        assert!(run.stats.local_rejections > 0, "{id}");
        assert!(
            scenario
                .callers
                .iter()
                .any(|c| matches!(c.weight, Weight::Units(2..) | Weight::Rest)),
            "{id}"
        );
    }
}
