//! Missing and unreadable inputs are named on the page, never fatal.

use fixed_window_reports::{Inputs, Paths, render};

use crate::fixtures;

#[test]
fn with_no_inputs_the_page_names_each_missing_one() {
    let empty = fixtures::scratch("no-inputs");
    let inputs = Inputs::gather(&Paths {
        bench_runs: empty.join("bench-runs"),
        criterion: empty.join("criterion"),
        cas_retries: empty.join("cas-retries.json"),
        redis_latency: empty.join("redis-latency.json"),
        keyed_memory: empty.join("keyed-memory.json"),
        server_time: empty.join("redis-server-time.json"),
        sim: empty.join("sim"),
        mutants: empty.join("mutants"),
        mutant_notes: empty.join("mutants.md"),
    });
    assert_eq!(inputs.missing.len(), 4, "{:?}", inputs.missing);
    let report = render(&inputs);
    assert!(report.charts.is_empty());
    assert!(report.html.contains("run <code>cargo xtask bench</code>"));
    assert!(report.html.contains("neither"));
    assert!(report.html.contains("summary.json: not found"));
    assert!(report.html.contains("trace.jsonl: not found"));
    assert!(
        report
            .html
            .contains("cargo xtask simulate --limiter shared")
    );
}

#[test]
fn an_unreadable_benchmark_file_is_reported_by_path() {
    let dir = fixtures::scratch("bad-criterion");
    let new = dir.join("criterion/permit/ours-system/new");
    std::fs::create_dir_all(&new).expect("a directory");
    std::fs::write(new.join("benchmark.json"), "{not json").expect("a file");
    let inputs = Inputs::gather(&Paths {
        criterion: dir.join("criterion"),
        ..fixtures::unrecorded()
    });
    assert!(inputs.bench.is_none());
    assert_eq!(inputs.missing.len(), 1);
    assert!(
        inputs.missing[0].contains("benchmark.json is not criterion's JSON"),
        "{}",
        inputs.missing[0]
    );
}

#[test]
fn an_unreadable_run_manifest_is_reported_by_path() {
    let dir = fixtures::scratch("bad-manifest");
    std::fs::create_dir_all(dir.join("1")).expect("a directory");
    std::fs::write(dir.join("1/run.json"), "{\"run\": 1}").expect("a file");
    let inputs = Inputs::gather(&Paths {
        bench_runs: dir.clone(),
        ..fixtures::complete()
    });
    assert!(
        inputs
            .missing
            .iter()
            .any(|m| m.contains("run.json is not a run's manifest: missing field")),
        "{:?}",
        inputs.missing
    );
}

#[test]
fn without_recorded_runs_the_retry_counts_of_unknown_origin_are_read() {
    let dir = fixtures::scratch("no-retries");
    let inputs = Inputs::gather(&Paths {
        cas_retries: dir.join("cas-retries.json"),
        ..fixtures::unrecorded()
    });
    assert_eq!(inputs.missing.len(), 1, "{:?}", inputs.missing);
    assert!(
        render(&inputs)
            .html
            .contains("cas-retries.json: No such file")
    );
}

#[test]
fn an_unreadable_summary_and_trace_lines_are_reported_not_fatal() {
    let dir = fixtures::scratch("bad-sim");
    std::fs::write(dir.join("summary.json"), "[1, 2]").expect("a file");
    std::fs::write(
        dir.join("trace.jsonl"),
        "garbage\n{\"type\":\"permitted\",\"at\":1,\"caller\":0,\"remaining\":0}\n",
    )
    .expect("a file");
    let inputs = Inputs::gather(&Paths {
        sim: dir,
        ..fixtures::complete()
    });
    let report = render(&inputs);
    assert!(report.html.contains("not a JSON object"));
    assert!(
        report
            .html
            .contains("1 lines of other types skipped; 1 lines unreadable")
    );
    assert!(
        report
            .missing
            .iter()
            .any(|m| m.contains("holds no scenario"))
    );
}
