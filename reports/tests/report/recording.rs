//! Recording a run of `cargo xtask bench` and reading the runs back.

use std::fs;
use std::time::{Duration, SystemTime};

use fixed_window_reports::{BenchRuns, Mode, RunManifest, Scope, begin_run, record_run};

use crate::fixtures;

fn manifest(run: u32) -> RunManifest {
    RunManifest {
        run,
        runs: 3,
        command: "cargo xtask bench --quick".into(),
        mode: Mode::Quick,
        scope: Scope::Targets,
        criterion_args: vec!["--noplot".into()],
        started: 1,
        finished: 2,
        cores: Some(8),
    }
}

/// Writes a criterion result of `id` (`group/function`) with median `ns`.
fn result(criterion: &std::path::Path, id: &str, ns: f64) -> std::path::PathBuf {
    let (group, function) = id.split_once('/').expect("group/function");
    let new = criterion.join(id).join("new");
    fs::create_dir_all(&new).expect("a directory");
    fs::write(
        new.join("benchmark.json"),
        format!(r#"{{"group_id":"{group}","function_id":"{function}"}}"#),
    )
    .expect("a file");
    fs::write(
        new.join("estimates.json"),
        format!(r#"{{"median":{{"point_estimate":{ns}}}}}"#),
    )
    .expect("a file");
    new.join("estimates.json")
}

#[test]
fn a_run_keeps_only_what_criterion_wrote_since_it_started_and_its_manifest() {
    let dir = fixtures::scratch("record-run");
    let criterion = dir.join("criterion");
    let stale = result(&criterion, "permit/governor-default", 11.0);
    // A result left by an earlier run: older than this run's start.
    fs::File::options()
        .write(true)
        .open(&stale)
        .expect("the file")
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .expect("an older time");
    begin_run(&dir.join("runs/2")).expect("begun");
    result(&criterion, "permit/ours-system", 9.0);

    let copied = record_run(&criterion, &dir.join("runs/2"), &manifest(2)).expect("recorded");
    assert_eq!(copied, 1);
    let runs = BenchRuns::load(&dir.join("runs")).expect("loaded");
    assert_eq!(runs.runs.len(), 1);
    let run = &runs.runs[0];
    assert_eq!(run.manifest, Some(manifest(2)));
    assert!(run.is_quick());
    assert_eq!(run.results.len(), 1);
    let ours = run.results.get("permit", "ours-system").expect("ours");
    assert!((ours.median_ns - 9.0).abs() < 1e-9, "{ours:?}");
}

#[test]
fn runs_are_read_in_order_and_an_unfinished_one_is_named() {
    let dir = fixtures::scratch("runs-in-order");
    let criterion = dir.join("criterion");
    let runs_dir = dir.join("runs");
    for run in [10, 2] {
        let this_run = runs_dir.join(run.to_string());
        begin_run(&this_run).expect("begun");
        result(&criterion, "permit/ours-system", f64::from(run));
        record_run(&criterion, &this_run, &manifest(run)).expect("recorded");
    }
    fs::create_dir_all(runs_dir.join("11/criterion")).expect("an unfinished run");
    fs::create_dir_all(runs_dir.join("notes")).expect("a stray directory");
    let runs = BenchRuns::load(&runs_dir).expect("loaded");
    let numbers: Vec<u32> = runs
        .runs
        .iter()
        .filter_map(|r| Some(r.manifest.as_ref()?.run))
        .collect();
    assert_eq!(numbers, [2, 10]);
    assert_eq!(runs.skipped.len(), 1, "{:?}", runs.skipped);
    assert!(runs.skipped[0].contains("run 11"), "{:?}", runs.skipped);
}

#[test]
fn a_run_that_was_not_begun_is_not_recorded() {
    let dir = fixtures::scratch("not-begun");
    let err =
        record_run(&dir.join("criterion"), &dir.join("runs/1"), &manifest(1)).expect_err("no mark");
    assert!(err.to_string().contains(".started"), "{err}");
}

#[test]
fn the_manifest_is_the_json_the_report_reads() {
    let text = serde_json::to_string(&manifest(1)).expect("json");
    assert_eq!(
        text,
        r#"{"run":1,"runs":3,"command":"cargo xtask bench --quick","mode":"quick","scope":"targets","criterion_args":["--noplot"],"started":1,"finished":2,"cores":8}"#
    );
}
