//! Figures of a quick run are smoke data: marked so on every section, and given no verdict.
//! Nor do results nobody recorded, or too few runs.

use fixed_window_reports::targets::{self, Verdict};
use fixed_window_reports::{BenchRuns, Inputs, Mode, render};

use crate::fixtures;

fn quick(runs: &mut BenchRuns) {
    for run in &mut runs.runs {
        if let Some(manifest) = &mut run.manifest {
            manifest.mode = Mode::Quick;
            manifest.command = "cargo xtask bench --quick".into();
        }
    }
}

#[test]
fn a_quick_run_gets_no_verdict_however_its_ratio_looks() {
    let runs = fixtures::permit_runs(Mode::Quick, &[(1.0, 10.0), (1.0, 10.0), (1.0, 10.0)]);
    let permit = &targets::check(&runs)[0];
    assert_eq!(permit.verdict, Verdict::Smoke);
    assert_eq!(permit.met(), None);
    let html = render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    })
    .html;
    assert!(
        html.contains("<td class=\"missing\">smoke data: no verdict</td>"),
        "{html}"
    );
    assert!(!html.contains("class=\"met\">met"), "{html}");
}

#[test]
fn every_benchmark_section_of_a_quick_run_is_marked_as_smoke_data() {
    let mut runs = Inputs::gather(&fixtures::complete())
        .bench
        .expect("the fixture runs");
    quick(&mut runs);
    let html = render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    })
    .html;
    let smoke = "<p class=\"smoke\">Quick mode";
    // The runs, single-threaded, contention, retries, backoff, the keyed limiter and its
    // memory, the shared limiter, its percentiles, on a cluster and the server's time per
    // decision, and the simulator's throughput.
    assert_eq!(html.matches(smoke).count(), 12, "{html}");
    assert!(html.contains("<td class=\"miss\">quick: smoke data</td>"));
    assert!(html.contains("Smoke data: no recommendation."));
    assert!(!html.contains("The data says:"));
    // The simulator's throughput is shown without met or missed.
    assert!(html.contains("<td>5.70 M calls</td>"), "{html}");
    assert!(!html.contains("missed by"));
}

#[test]
fn a_full_run_is_not_marked_as_smoke_data() {
    let html = render(&Inputs::gather(&fixtures::complete())).html;
    assert!(!html.contains("<p class=\"smoke\">"));
    assert!(!html.contains("smoke data: no verdict"));
}

#[test]
fn results_nobody_recorded_are_flagged_and_get_no_verdict() {
    let report = render(&Inputs::gather(&fixtures::unrecorded()));
    assert!(
        report
            .html
            .contains("recorded by no <code>cargo xtask bench</code>")
    );
    assert!(report.html.contains("Their files were written from"));
    assert!(report.html.contains("no verdict: runs not recorded"));
    assert!(!report.html.contains("class=\"met\">met<"));
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(report.warnings[0].contains("may pair figures from different runs"));
}

#[test]
fn fewer_runs_than_a_verdict_needs_get_none() {
    let runs = fixtures::permit_runs(Mode::Full, &[(9.0, 10.0), (9.0, 10.0)]);
    assert_eq!(
        targets::check(&runs)[0].verdict,
        Verdict::TooFewRuns { runs: 2 }
    );
    let html = render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    })
    .html;
    assert!(
        html.contains(&format!(
            "no verdict: 2 runs, {} needed",
            targets::RUNS_FOR_VERDICT
        )),
        "{html}"
    );
}
