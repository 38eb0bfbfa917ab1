//! Missing and unreadable inputs are named on the page, never fatal.

use fixed_window_reports::{Inputs, Paths, render};

use crate::fixtures;

#[test]
fn with_no_inputs_the_page_names_each_missing_one() {
    let empty = fixtures::scratch("no-inputs");
    let inputs = Inputs::gather(&Paths {
        criterion: empty.join("criterion"),
        cas_retries: empty.join("cas-retries.json"),
        sim: empty.join("sim"),
    });
    assert_eq!(inputs.missing.len(), 4, "{:?}", inputs.missing);
    let report = render(&inputs);
    assert!(report.charts.is_empty());
    assert!(report.html.contains("run <code>cargo xtask bench</code>"));
    assert!(report.html.contains("summary.json: not found"));
    assert!(report.html.contains("cas-retries.json: No such file"));
    assert!(report.html.contains("trace.jsonl: not found"));
}

#[test]
fn an_unreadable_benchmark_file_is_reported_by_path() {
    let dir = fixtures::scratch("bad-criterion");
    let new = dir.join("criterion/permit/ours-system/new");
    std::fs::create_dir_all(&new).expect("a directory");
    std::fs::write(new.join("benchmark.json"), "{not json").expect("a file");
    let inputs = Inputs::gather(&Paths {
        criterion: dir.join("criterion"),
        cas_retries: fixtures::dir().join("cas-retries.json"),
        sim: fixtures::dir().join("sim"),
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
fn an_unreadable_summary_and_trace_lines_are_reported_not_fatal() {
    let dir = fixtures::scratch("bad-sim");
    std::fs::write(dir.join("summary.json"), "[1, 2]").expect("a file");
    std::fs::write(
        dir.join("trace.jsonl"),
        "garbage\n{\"type\":\"permitted\",\"at\":1,\"caller\":0,\"remaining\":0}\n",
    )
    .expect("a file");
    let inputs = Inputs::gather(&Paths {
        criterion: fixtures::dir().join("criterion"),
        cas_retries: fixtures::dir().join("cas-retries.json"),
        sim: dir,
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
