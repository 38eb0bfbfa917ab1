//! The keyed limiter in the simulator: keyed scenarios reach a hot key, a few keys and long
//! runs of keys the table must let go of, and the real keyed limiter passes them; on one key it
//! is the plain limiter; each planted keyed limiter of the catalogue is caught on a scenario the
//! real one passes; and the oracle, on hand-written traces, judges keys a sweep may have
//! reclaimed and the keys held against the bound.

use core::time::Duration;
use std::collections::BTreeSet;

use fixed_window_sim::{
    CallKind, CallerSpec, ClockModel, Config, Invariant, KeyLimits, KeyedPlantedBug, OpKind,
    Outcome, Population, Record, Run, Scenario, ScenarioId, Stats, Target, check, run, verdict,
};

use crate::coverage::{REQUIRED, note};
use crate::rules_broken;

/// Seeds searched here.
const SEEDS: u64 = 300;
/// Scenarios with more callers than this are left to the sweep, which runs optimised.
const MOST_CALLERS: usize = 20_000;

/// The keyed scenario of `seed`, unless it is one of the sweep's long runs.
fn keyed(seed: u64) -> Option<Scenario> {
    let scenario = Target::Keyed.scenario(&ScenarioId::seed(seed));
    (scenario.callers.len() <= MOST_CALLERS).then_some(scenario)
}

#[test]
fn a_keyed_sweep_covers_its_populations_and_the_keyed_limiter_passes_it() {
    let mut seen = BTreeSet::new();
    for seed in 0..SEEDS {
        let Some(scenario) = keyed(seed) else {
            continue;
        };
        let trace = run(&scenario, Target::Keyed).expect("drawn configurations are valid");
        let verdict = verdict(&scenario, &trace);
        assert!(
            verdict.violations.is_empty(),
            "seed {seed}: {:?}",
            &verdict.violations[..1]
        );
        note(&mut seen, &scenario, &trace.records);
        note_keys(&mut seen, &scenario, &trace.records);
        let memory = verdict.memory.expect("a keyed scenario");
        let keys = scenario.keys.map_or(0, Population::keys);
        let mark = |seen: &mut BTreeSet<&str>, condition: bool, feature| {
            if condition {
                seen.insert(feature);
            }
        };
        mark(&mut seen, memory.at_bound > 0, "keys held at the bound");
        mark(
            &mut seen,
            keys >= 1_000 && memory.most_held * 10 <= keys,
            "a run of a thousand keys or more, a tenth of them held at most",
        );
    }
    let keyed = [
        "population hot",
        "population few",
        "population few, skewed",
        "population many",
        "population many, spread",
        "keys reclaimed",
        "keys held at the bound",
        "a run of a thousand keys or more, a tenth of them held at most",
        "blocking call on a key that is not the first",
    ];
    let missing: Vec<&str> = REQUIRED
        .into_iter()
        .chain(keyed)
        .filter(|feature| !seen.contains(feature))
        .collect();
    assert!(missing.is_empty(), "not reached: {missing:?}");
}

fn note_keys(seen: &mut BTreeSet<&'static str>, scenario: &Scenario, records: &[Record]) {
    let feature = match scenario.keys {
        Some(Population::Hot) => "population hot",
        Some(Population::Few { skewed: false, .. }) => "population few",
        Some(Population::Few { skewed: true, .. }) => "population few, skewed",
        Some(Population::Many { spread: false, .. }) => "population many",
        Some(Population::Many { spread: true, .. }) => "population many, spread",
        None => "population none",
    };
    seen.insert(feature);
    let mut held = 0;
    for record in records {
        match *record {
            Record::Held { len, .. } => {
                if len < held {
                    seen.insert("keys reclaimed");
                }
                held = len;
            }
            Record::Start {
                kind: CallKind::CallBlocking,
                key,
                ..
            } if key > 0 => {
                seen.insert("blocking call on a key that is not the first");
            }
            _ => {}
        }
    }
}

#[test]
fn on_one_key_the_keyed_limiter_is_the_plain_one() {
    let mut compared = 0;
    for seed in 0..SEEDS {
        let Some(scenario) = keyed(seed) else {
            continue;
        };
        // A key's own limit is the keyed limiter's alone.
        if scenario.keys != Some(Population::Hot) || !scenario.key_limits.is_empty() {
            continue;
        }
        // The keyed scenario draws no zero weights (it asks for one permit instead): the plain
        // limiter is given its callers.
        let mut plain = Scenario::generate(&ScenarioId::seed(seed));
        plain.callers.clone_from(&scenario.callers);
        let keyed = run(&scenario, Target::Keyed).expect("a valid configuration");
        let alone = run(&plain, Target::Real).expect("a valid configuration");
        let without_held: Vec<Record> = keyed
            .records
            .iter()
            .copied()
            .filter(|record| !matches!(record, Record::Held { .. }))
            .collect();
        assert_eq!(without_held, alone.records, "seed {seed}");
        compared += 1;
    }
    assert!(compared >= 50, "only {compared} scenarios of one key");
}

#[test]
fn keyed_runs_are_deterministic() {
    let mut blocking = 0;
    for seed in 0..60 {
        let Some(scenario) = keyed(seed) else {
            continue;
        };
        blocking += usize::from(
            scenario
                .callers
                .iter()
                .any(|caller| caller.kind == CallKind::CallBlocking),
        );
        let first = run(&scenario, Target::Keyed).expect("a valid configuration");
        let second = run(&scenario, Target::Keyed).expect("a valid configuration");
        assert_eq!(first.records, second.records, "seed {seed}");
    }
    assert!(blocking > 0, "no keyed scenario with blocking callers");
}

/// Searches the seeds for a keyed scenario on which `bug` breaks `expected` and the real
/// keyed limiter breaks nothing.
fn assert_caught(bug: KeyedPlantedBug, expected: Invariant) {
    let found = (0..SEEDS).filter_map(keyed).find(|scenario| {
        let planted_run = run(scenario, Target::PlantedKeyed(bug)).expect("a valid configuration");
        rules_broken(&check(scenario, &planted_run)).contains(&expected) && {
            let real = run(scenario, Target::Keyed).expect("a valid configuration");
            check(scenario, &real).is_empty()
        }
    });
    assert!(
        found.is_some(),
        "{bug:?} went unnoticed (as {expected:?}) over {SEEDS} seeds"
    );
}

#[test]
fn a_live_key_reclaimed_is_caught() {
    assert_caught(KeyedPlantedBug::ReclaimLive, Invariant::WindowLimit);
}

#[test]
fn a_claim_lost_to_a_removal_is_caught() {
    assert_caught(KeyedPlantedBug::ClaimLostToRemoval, Invariant::WindowLimit);
}

#[test]
fn one_count_shared_by_all_keys_is_caught() {
    assert_caught(KeyedPlantedBug::SharedCount, Invariant::FalseRejection);
}

#[test]
fn a_limiter_that_never_reclaims_is_caught() {
    assert_caught(KeyedPlantedBug::NeverReclaims, Invariant::Memory);
}

#[test]
fn the_default_limit_used_for_a_key_with_its_own_is_caught() {
    assert_caught(
        KeyedPlantedBug::DefaultLimitForOwnKey,
        Invariant::FalseRejection,
    );
}

#[test]
fn keyed_scenarios_give_keys_limits_of_their_own_and_change_them() {
    let scenarios: Vec<Scenario> = (0..SEEDS).filter_map(keyed).collect();
    let giving = scenarios
        .iter()
        .filter(|scenario| !scenario.key_limits.is_empty())
        .count();
    assert!(
        giving * 5 >= scenarios.len(),
        "{giving} of {}",
        scenarios.len()
    );
    let mut changed = 0;
    for scenario in scenarios
        .iter()
        .filter(|s| !s.key_limits.changes.is_empty())
        .take(20)
    {
        let real = run(scenario, Target::Keyed).expect("a valid configuration");
        changed += real
            .records
            .iter()
            .filter(|record| matches!(record, Record::KeyLimitSet { accepted: true, .. }))
            .count();
        assert!(check(scenario, &real).is_empty(), "{:?}", scenario.id);
    }
    assert!(changed > 0, "no key's limit changed in a run");
}

/// A keyed scenario of `limit` permits per 10 ns from reading 0, with `callers` callers of
/// `try_acquire` (their keys are in the records).
fn scenario(limit: u32, callers: usize) -> Scenario {
    let mut scenario = Target::Keyed.scenario(&ScenarioId::seed(0));
    scenario.config = Config {
        limit,
        period: Duration::from_nanos(10),
        max_wait: Duration::ZERO,
    };
    scenario.clock = ClockModel::ordinary(0);
    scenario.origin_choice = fixed_window::Origin::Creation;
    scenario.panicking_listeners.clear();
    scenario.key_limits = KeyLimits::default();
    scenario.keys = Some(Population::Few {
        keys: 100,
        skewed: false,
    });
    scenario.callers = (0..callers)
        .map(|_| CallerSpec {
            arrival: 0,
            kind: CallKind::TryAcquire,
            op: OpKind::Succeeds,
            interrupt_at: None,
            cancel_at: None,
            key: 99,
            weight: 1,
        })
        .collect();
    scenario
}

fn start(caller: u32, at: u64, key: u64) -> Record {
    Record::Start {
        caller,
        at,
        kind: CallKind::TryAcquire,
        max_wait: 0,
        op: OpKind::Succeeds,
        key,
        weight: 1,
    }
}

/// A call of `caller` on `key` at `at`, permitted with `remaining` left, after which the
/// limiter holds `len` keys.
fn permitted(caller: u32, key: u64, at: u64, remaining: u32, len: u64) -> [Record; 4] {
    [
        start(caller, at, key),
        Record::Permitted {
            caller: Some(caller),
            at,
            remaining,
        },
        Record::Held {
            caller: Some(caller),
            key,
            len,
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

/// A call of `caller` on `key` at `at`, rejected with `retry_after` by a limiter of one permit.
fn rejected(caller: u32, key: u64, at: u64, retry_after: u128, len: u64) -> [Record; 4] {
    [
        start(caller, at, key),
        Record::Rejected {
            caller: Some(caller),
            at,
            retry_after,
        },
        Record::Held {
            caller: Some(caller),
            key,
            len,
        },
        Record::Finish {
            caller,
            at,
            t: at,
            outcome: Outcome::Rejected {
                retry_after,
                fields_match: true,
                limit: 1,
            },
        },
    ]
}

fn trace(records: Vec<Record>) -> Run {
    Run {
        records,
        stats: Stats::default(),
        out_of_budget: false,
        panics: Vec::new(),
    }
}

/// Key 0 takes window 0's permit at 5; then `turns` calls on keys 1, 2, ... at 35, each
/// taking a turn at sweeping for window 3 (the limiter holding every key but key 0).
fn key_0_then_sweeps(turns: u32) -> Vec<Record> {
    let mut records = permitted(0, 0, 5, 0, 1).to_vec();
    for caller in 1..=turns {
        records.extend(permitted(
            caller,
            u64::from(caller),
            35,
            0,
            u64::from(caller),
        ));
    }
    records
}

#[test]
fn a_key_swept_for_a_later_window_is_added_anew_in_that_window_on_a_clock_stepping_back() {
    let s = scenario(1, 67);
    // 64 turns for window 3: key 0 must have been reclaimed, the horizon is window 3.
    let mut records = key_0_then_sweeps(64);
    // The clock steps back into window 0: key 0, added anew, counts in window 3...
    records.extend(permitted(65, 0, 7, 0, 65));
    let mut passes = records.clone();
    // ...so its next call is refused until window 3 ends, at 40.
    passes.extend(rejected(66, 0, 8, 32, 65));
    assert_eq!(check(&s, &trace(passes)), []);
    // A limiter that counted it in window 0 again would say window 0 ends at 10.
    let mut reopens = records;
    reopens.extend(rejected(66, 0, 8, 2, 65));
    assert_eq!(
        rules_broken(&check(&s, &trace(reopens))),
        [Invariant::Events]
    );
    // And one that kept key 0 (window 0 used up) would have refused the call at 7.
    let mut kept = key_0_then_sweeps(64);
    kept.extend(rejected(65, 0, 7, 3, 65));
    assert_eq!(
        rules_broken(&check(&s, &trace(kept))),
        [Invariant::FalseRejection]
    );
}

#[test]
fn a_key_a_sweep_may_have_reclaimed_may_be_either_kept_or_added_anew() {
    let s = scenario(1, 12);
    // Ten turns for window 3: key 0's shard may or may not have been swept.
    let mut added = key_0_then_sweeps(10);
    added.extend(permitted(11, 0, 7, 0, 11));
    assert_eq!(check(&s, &trace(added)), []);
    let mut kept = key_0_then_sweeps(10);
    kept.extend(rejected(11, 0, 7, 3, 11));
    assert_eq!(check(&s, &trace(kept)), []);
}

#[test]
fn keys_held_past_the_bound_break_the_memory_rule() {
    let s = scenario(100, 70);
    // Keys 0, 1 and 2 take a permit in window 0.
    let mut records = Vec::new();
    for key in 0..3_u32 {
        records.extend(permitted(key, u64::from(key), 5, 99, u64::from(key) + 1));
    }
    // Key 3 is called 63 times in window 1: 63 turns, one shard left to sweep, so keys 0 to 2
    // may all still be held.
    let mut remaining = 100;
    for caller in 3..66_u32 {
        remaining -= 1;
        records.extend(permitted(caller, 3, 15, remaining, 4));
    }
    assert_eq!(check(&s, &trace(records.clone())), []);
    // The 64th turn sweeps the last shard: only key 3 may be held.
    let mut leaks = records.clone();
    leaks.extend(permitted(66, 3, 15, remaining - 1, 2));
    let found = check(&s, &trace(leaks));
    assert_eq!(rules_broken(&found), [Invariant::Memory], "{found:?}");
    let mut lets_go = records;
    lets_go.extend(permitted(66, 3, 15, remaining - 1, 1));
    assert_eq!(check(&s, &trace(lets_go)), []);
}

#[test]
fn an_event_for_another_key_than_the_calls_breaks_the_events_rule() {
    let s = scenario(1, 1);
    let mut records = permitted(0, 4, 5, 0, 1).to_vec();
    if let Record::Held { key, .. } = &mut records[2] {
        *key = 5;
    }
    assert_eq!(
        rules_broken(&check(&s, &trace(records))),
        [Invariant::Events]
    );
}
