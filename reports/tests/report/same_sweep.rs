//! The simulator's summary and trace: the page says whether they come from the same sweep.

use fixed_window_reports::{Inputs, Paths, SameSweep, SweepProvenance, render, same_sweep};

use crate::fixtures;

const TRACE_BODY: &str = concat!(
    r#"{"type":"scenario","id":"s","limit":2,"period_ns":100,"origin_ns":0,"max_wait_ns":50}"#,
    "\n",
    r#"{"type":"permitted","at":1,"caller":1,"remaining":1}"#,
    "\n",
);

/// Renders a summary of `summary_sweep` beside a trace headed by `trace_header`.
fn render_sim(test: &str, summary_sweep: &str, trace_header: &str) -> fixed_window_reports::Report {
    let dir = fixtures::scratch(test);
    std::fs::write(
        dir.join("summary.json"),
        format!(r#"{{"seed":7,"scenarios":1,"violations":{{}},"sweep":{summary_sweep}}}"#),
    )
    .expect("a summary");
    std::fs::write(
        dir.join("trace.jsonl"),
        format!("{trace_header}{TRACE_BODY}"),
    )
    .expect("a trace");
    render(&Inputs::gather(&Paths {
        sim: dir,
        ..fixtures::complete()
    }))
}

const ONE_SCENARIO: &str = r#"{"seed":7,"scenarios":1,"shard":"0/1","limiter":"real","command":"cargo xtask simulate --seed 7 --scenarios 1","started":1750000000}"#;

#[test]
fn a_summary_and_a_trace_of_different_sweeps_draw_a_warning() {
    let header = r#"{"type":"sweep","seed":24301,"scenarios":10000,"shard":"0/1","limiter":"real","command":"cargo xtask simulate","started":1750000900}"#;
    let report = render_sim("different-sweeps", ONE_SCENARIO, &format!("{header}\n"));
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    let warning = &report.warnings[0];
    assert!(warning.contains("come from different sweeps"), "{warning}");
    assert!(
        warning.contains("seed 7 in the summary, 24301 in the trace"),
        "{warning}"
    );
    assert!(
        warning.contains("scenarios 1 in the summary, 10000 in the trace"),
        "{warning}"
    );
    assert!(report.html.contains(
        "<p class=\"warning\">Warning: the summary and the trace come from different sweeps"
    ));
    assert!(!report.html.contains("come from the same sweep"));
}

#[test]
fn a_summary_and_a_trace_of_the_same_sweep_draw_none() {
    let report = render_sim(
        "same-sweep",
        ONE_SCENARIO,
        &format!("{{\"type\":\"sweep\",{}\n", &ONE_SCENARIO[1..]),
    );
    assert_eq!(report.warnings, Vec::<String>::new());
    assert!(report.html.contains("come from the same sweep"));
}

#[test]
fn a_trace_that_does_not_say_its_sweep_draws_a_warning() {
    let report = render_sim("unknown-sweep", ONE_SCENARIO, "");
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(report.warnings[0].contains("unknown: the trace does not say which sweep wrote it"));
}

#[test]
fn a_different_limiter_or_shard_is_a_different_sweep() {
    let sweep = |shard: &str, limiter: &str| SweepProvenance {
        seed: Some(1),
        scenarios: Some(10),
        shard: Some(shard.into()),
        limiter: Some(limiter.into()),
        ..SweepProvenance::default()
    };
    assert_eq!(
        same_sweep(Some(&sweep("0/2", "real")), Some(&sweep("0/2", "real"))),
        SameSweep::Same
    );
    assert_eq!(
        same_sweep(
            Some(&sweep("0/2", "real")),
            Some(&sweep("1/2", "carry-over"))
        ),
        SameSweep::Different(vec![
            "shard 0/2 in the summary, 1/2 in the trace".to_owned(),
            "limiter real in the summary, carry-over in the trace".to_owned(),
        ])
    );
}

#[test]
fn an_older_summary_still_says_its_seed_and_scenarios() {
    let summary =
        fixed_window_reports::SimSummary::parse(r#"{"seed":3,"scenarios":9}"#).expect("a summary");
    let trace = SweepProvenance {
        seed: Some(3),
        scenarios: Some(9),
        ..SweepProvenance::default()
    };
    assert_eq!(
        same_sweep(summary.sweep.as_ref(), Some(&trace)),
        SameSweep::Same
    );
}
