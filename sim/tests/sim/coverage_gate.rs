//! The coverage a summary counts: a reading exactly on a boundary counts, a flood's window counts
//! past 65,535 permits, and `--require-coverage` fails a sweep (or a merge) too small to reach
//! every feature, naming the ones it missed.

use core::time::Duration;
use std::process::Output;

use fixed_window_sim::{
    CallKind, CallerSpec, ClockKind, ClockModel, OpKind, PLAIN_FEATURES, Pattern, Scenario,
    ScenarioId, Segment, Target, check, plain_features, run,
};

use crate::{scratch, simulator};

/// Whether `mask` has the bit of `feature`.
fn has(mask: u32, feature: &str) -> bool {
    let bit = PLAIN_FEATURES
        .iter()
        .position(|&name| name == feature)
        .expect("a plain feature");
    mask & (1 << bit) != 0
}

/// A scenario of one caller arriving `arrival` nanoseconds after the limiter was made, on an
/// ordinary clock, with windows of ten nanoseconds.
fn one_caller(arrival: u64) -> Scenario {
    let mut scenario = Scenario::generate(&ScenarioId::seed(1));
    scenario.config.limit = 1;
    scenario.config.period = Duration::from_nanos(10);
    scenario.config.max_wait = Duration::ZERO;
    scenario.origin_choice = fixed_window::Origin::Creation;
    scenario.clock = ClockModel::new(
        ClockKind::Ordinary,
        vec![Segment {
            from: 0,
            base: 1_000,
            frozen: false,
        }],
    );
    scenario.panicking_listeners.clear();
    scenario.callers = vec![CallerSpec {
        arrival,
        kind: CallKind::TryAcquire,
        op: OpKind::Succeeds,
        interrupt_at: None,
        cancel_at: None,
        key: 0,
        weight: 1,
    }];
    scenario
}

#[test]
fn a_call_exactly_on_a_boundary_counts_and_one_inside_a_window_does_not() {
    let on = one_caller(20);
    let trace = run(&on, Target::Real).unwrap();
    let mask = plain_features(&on, &trace);
    assert!(has(mask, "reading_on_boundary"));
    assert!(
        has(mask, "window_filled"),
        "limit 1: its one permit fills it"
    );
    assert!(has(mask, "clock_ordinary"));
    let inside = one_caller(25);
    let mask = plain_features(&inside, &run(&inside, Target::Real).unwrap());
    assert!(!has(mask, "reading_on_boundary"));
    assert!(!has(mask, "window_over_65535_permits"));
}

#[test]
fn a_flood_grants_a_window_more_than_65535_permits_and_counts_it() {
    // The first seed whose scenario floods, on an ordinary clock.
    let scenario = (0..1_000_000)
        .map(|seed| Scenario::generate(&ScenarioId::seed(seed)))
        .find(|scenario| {
            scenario.patterns == [Pattern::Flood] && scenario.clock.kind() == ClockKind::Ordinary
        })
        .unwrap();
    assert!(scenario.config.limit > 65_535);
    assert!((65_536..100_000).contains(&scenario.callers.len()));
    let trace = run(&scenario, Target::Real).unwrap();
    assert!(check(&scenario, &trace).is_empty());
    let mask = plain_features(&scenario, &trace);
    assert!(has(mask, "window_over_65535_permits"));
    assert!(has(mask, "window_filled"));
    // Its id replays it: the same callers, and a kept few of them alone.
    let id = ScenarioId::kept(scenario.id.seed, vec![0, 1, 2]);
    let kept = Scenario::generate(&id);
    assert_eq!(kept.config, scenario.config);
    assert_eq!(kept.callers, scenario.callers[..3]);
}

/// The features `output` says no scenario reached, from its `FAIL coverage` line.
fn named_missing(output: &Output) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|line| line.split("FAIL coverage: no scenario reached ").nth(1))
        .unwrap_or_else(|| panic!("no coverage failure in {stdout}"));
    line.split(", ").map(str::to_owned).collect()
}

#[test]
fn require_coverage_fails_a_sweep_too_small_naming_what_it_missed() {
    let dir = scratch("coverage-small");
    let out = dir.join("plain");
    let sweep = [
        "--seed",
        "3",
        "--scenarios",
        "3",
        "--out-dir",
        out.to_str().unwrap(),
    ];
    assert_eq!(simulator(&sweep).status.code(), Some(0));
    let output = simulator(&[&sweep[..], &["--require-coverage"]].concat());
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let missing = named_missing(&output);
    assert!(
        missing.contains(&"clock_near_max".to_owned()),
        "{missing:?}"
    );
    // The names are the summary's zeros, exactly.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let zeros: Vec<String> = summary["coverage"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, count)| count.as_u64() == Some(0))
        .map(|(name, _)| name.clone())
        .collect();
    assert_eq!(missing, zeros);
    assert_eq!(
        summary["coverage"].as_object().unwrap().len(),
        PLAIN_FEATURES.len()
    );
}

#[test]
fn require_coverage_fails_a_small_shared_sweep_and_a_merge_of_small_shards() {
    let dir = scratch("coverage-shards");
    let shared = dir.join("shared");
    let output = simulator(&[
        "--limiter",
        "shared",
        "--scenarios",
        "3",
        "--require-coverage",
        "--out-dir",
        shared.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(!named_missing(&output).is_empty());
    let mut files = Vec::new();
    for shard in ["0/2", "1/2"] {
        let out = dir.join(shard.replace('/', "-"));
        let output = simulator(&[
            "--scenarios",
            "4",
            "--shard",
            shard,
            "--out-dir",
            out.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        files.push(out.join("summary.json").to_str().unwrap().to_owned());
    }
    let merged = dir.join("merged");
    let mut merge = vec!["merge", "--out-dir", merged.to_str().unwrap()];
    merge.extend(files.iter().map(String::as_str));
    assert_eq!(simulator(&merge).status.code(), Some(0));
    merge.push("--require-coverage");
    let output = simulator(&merge);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(named_missing(&output).contains(&"window_over_65535_permits".to_owned()));
}
