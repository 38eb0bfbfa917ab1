//! The shared limiter on a Redis Cluster beside one node, and the server's own time per
//! decision, each with its ratio to envoy's pattern and, on a begun window, its target.

use fixed_window_reports::targets::{self, Verdict};
use fixed_window_reports::{Inputs, render};

use crate::fixtures;

#[test]
fn the_cluster_rows_give_ours_over_envoy_within_the_run_on_each_server() {
    let html = render(&Inputs::gather(&fixtures::complete())).html;
    let cluster = fixtures::row(&html, "Redis Cluster (3 primaries, 3 replicas)");
    // The fixture's medians: 40,045 ns ours and 18,222 ns envoy's on the cluster.
    assert!(
        cluster.contains("<td>40.0 µs</td><td>18.2 µs</td>"),
        "{cluster}"
    );
    assert!(cluster.contains("<td>2.20×</td>"), "{cluster}");
    let node = fixtures::row(&html, "one redis-server");
    assert!(node.contains("<td>1.11×</td>"), "{node}");
}

#[test]
fn the_server_time_on_a_begun_window_is_held_to_three_times_envoys() {
    let runs = Inputs::gather(&fixtures::complete())
        .bench
        .expect("the fixture runs");
    let checked = targets::check(&runs);
    let begun = checked
        .iter()
        .find(|c| {
            c.target
                .what
                .starts_with("shared: the server's time per decision on a begun")
        })
        .expect("the server-time target");
    // 9.74 µs of the script over 0.712 µs of INCRBY + EXPIRE in the fixture: missed.
    assert!(
        matches!(begun.verdict, Verdict::Missed { .. }),
        "{:?}",
        begun.verdict
    );
    let html = render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    })
    .html;
    let row = fixtures::row(&html, "a window that has begun");
    assert!(
        row.contains("<td>9.74 µs</td><td>0.712 µs</td><td>13.7×</td>"),
        "{row}"
    );
    assert!(
        row.contains("<td>≤ 3.0×</td><td class=\"miss\">missed by"),
        "{row}"
    );
    let fresh = fixtures::row(&html, "a fresh key (each decision begins a window)");
    assert!(fresh.contains("<td>reference</td>"), "{fresh}");
}

#[test]
fn without_the_server_time_the_section_says_so() {
    let dir = fixtures::bare_run("no-server-time", &[]);
    let inputs = Inputs::gather(&fixed_window_reports::Paths {
        bench_runs: dir,
        ..fixtures::complete()
    });
    assert!(
        inputs
            .missing
            .iter()
            .any(|line| line
                .starts_with("the server's time per decision: no redis-server-time.json")),
        "{:?}",
        inputs.missing
    );
    let report = render(&inputs);
    assert!(
        report
            .missing
            .iter()
            .any(|line| line.starts_with("the server's time per decision: not measured")),
        "{:?}",
        report.missing
    );
}
