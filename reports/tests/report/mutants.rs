//! The mutation score: each crate's run, its survivors split into equivalents and gaps, and a
//! crate not run said as such.

use fixed_window_reports::{Inputs, Paths, render};

use crate::fixtures;

#[test]
fn each_crate_shows_its_score_and_its_gaps_by_name() {
    let html = render(&Inputs::gather(&fixtures::complete())).html;
    assert!(html.contains("<h2>Mutation score</h2>"));
    // core: 52 caught and 2 timed out of 54 viable, no survivor.
    assert!(
        html.contains(
            "<td>core</td><td>60</td><td>52</td><td>2</td><td>6</td><td>0</td><td>0</td>"
        ),
        "{html}"
    );
    assert!(html.contains("100.0 %"));
    // redis: two survivors, one explained as equivalent, one a gap, listed.
    assert!(
        html.contains(
            "<td>redis</td><td>51</td><td>27</td><td>2</td><td>15</td><td>2</td><td>1</td>"
        ),
        "{html}"
    );
    assert!(html.contains("96.6 %"));
    assert!(
        html.contains("<code>redis/src/coalescer.rs:101:9: replace Lead::discard with ()</code>")
    );
    assert!(!html.contains("<code>redis/src/coalescer.rs:45:63: replace * with +</code>"));
}

#[test]
fn a_crate_not_run_is_said_not_missing() {
    let empty = fixtures::scratch("no-mutants");
    let inputs = Inputs::gather(&Paths {
        mutants: empty.join("mutants"),
        ..fixtures::complete()
    });
    assert!(inputs.missing.iter().all(|line| !line.contains("mutation")));
    let html = render(&inputs).html;
    assert!(html.contains("not run here: cargo xtask mutants --crate core"));
    assert!(html.contains("not run here: cargo xtask mutants --crate redis"));
}
