//! Traces and results of broken limiters: the page must flag each breach.

use fixed_window_reports::{Inputs, Mode, Trace, render};

use crate::fixtures;

fn with_trace(text: &str) -> String {
    render(&Inputs {
        trace: Some(Trace::parse(text)),
        ..Inputs::default()
    })
    .html
}

#[test]
fn a_limiter_that_grants_past_the_limit_is_flagged_on_the_window_chart() {
    let html = with_trace(concat!(
        r#"{"type":"scenario","id":"over","limit":2,"period_ns":100,"origin_ns":0,"max_wait_ns":0,"clock":"ordinary","callers":5}"#,
        "\n",
        r#"{"type":"permitted","at":1,"caller":1,"remaining":1}"#,
        "\n",
        r#"{"type":"permitted","at":2,"caller":2,"remaining":0}"#,
        "\n",
        r#"{"type":"permitted","at":3,"caller":3,"remaining":0}"#,
        "\n",
        r#"{"type":"permitted","at":150,"caller":4,"remaining":1}"#,
        "\n",
    ));
    assert!(
        html.contains("4 permits in 2 windows; 1 windows over the limit of 2 (first: window 0)"),
        "{html}"
    );
}

#[test]
fn a_limiter_that_keeps_callers_past_max_wait_is_flagged_on_the_wait_chart() {
    let html = with_trace(concat!(
        r#"{"type":"scenario","id":"late","limit":1,"period_ns":100,"origin_ns":0,"max_wait_ns":50,"clock":"ordinary","callers":3}"#,
        "\n",
        r#"{"type":"call","caller":1,"start":0,"end":10,"outcome":"permitted","max_wait_ns":50,"kind":"call_async","op_panicked":false}"#,
        "\n",
        r#"{"type":"call","caller":2,"start":10,"end":100,"outcome":"permitted","max_wait_ns":50,"kind":"call_async","op_panicked":false}"#,
        "\n",
    ));
    assert!(
        html.contains("2 calls could wait; 1 took longer than their max_wait."),
        "{html}"
    );
}

#[test]
fn a_slower_limiter_misses_its_target_and_says_by_how_much() {
    let runs = fixtures::permit_runs(Mode::Full, &[(30.0, 20.0), (31.0, 20.0), (29.0, 20.0)]);
    let html = render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    })
    .html;
    // 1.5× at the median against a 1.0× target: missed by 50 %.
    assert!(
        html.contains(
            "<td>1.50×</td><td>1.45×–1.55×</td><td>3</td><td>≤ 1.0×</td><td class=\"miss\">missed by 50 %</td>"
        ),
        "{html}"
    );
}
