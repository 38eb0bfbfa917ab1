//! The shared limiter's section and targets: throughput, percentiles and commands per attempt,
//! local rejections against round trips, and what the page says when they are missing.

use fixed_window_reports::targets::{self, Measure, Verdict};
use fixed_window_reports::{Inputs, Paths, render};

use crate::fixtures;

const SIXTEEN_TASKS: &str =
    "shared: 16 tasks taking permits, vs envoy's pattern (throughput ≥ 0.8×)";
const TAIL: &str = "shared: p99 over p50 of a permitted attempt, 1 task";
const COMMANDS: &str = "shared: commands sent per permitted attempt, 1 task (one round trip each)";
const LOCAL: &str = "shared: a local rejection vs a rejection by round trip (≥ 100× faster)";

#[test]
fn the_shared_targets_are_computed_within_each_run_from_the_fixtures() {
    let html = render(&Inputs::gather(&fixtures::complete())).html;
    // 16 tasks: 37.2 / 21.2 µs in run 1; ours ×1.02 and envoy's ×0.97 in run 2; ×0.95 and
    // ×1.04 in run 3. Ratios 1.75, 1.85, 1.60: time ≤ 1/0.8 of envoy's is missed by 40 %.
    let row = fixtures::row(&html, SIXTEEN_TASKS);
    assert!(
        row.contains("<td>37.2 µs</td><td>21.2 µs</td><td>1.75×</td><td>1.60×–1.85×</td><td>3</td><td>≤ 1.25×</td><td class=\"miss\">missed by 40 %</td>"),
        "{row}"
    );
    // p99 / p50 at one task: 181/41, 170/40, 190/42 µs.
    let row = fixtures::row(&html, TAIL);
    assert!(
        row.contains("<td>p99 181 µs</td><td>p50 41.0 µs</td><td>4.41×</td><td>4.25×–4.52×</td><td>3</td><td>≤ 3.0×</td><td class=\"miss\">missed by 47 %</td>"),
        "{row}"
    );
    let row = fixtures::row(&html, COMMANDS);
    assert!(
        row.contains("<td>100 commands</td><td>100 attempts</td><td>1.00×</td>"),
        "{row}"
    );
    assert!(row.contains("class=\"met\">met"), "{row}");
    let row = fixtures::row(&html, LOCAL);
    assert!(
        row.contains("<td>172 ns</td><td>131 µs</td><td>0.00131×</td>"),
        "{row}"
    );
    assert!(
        row.contains("<td>≤ 0.01×</td><td class=\"met\">met"),
        "{row}"
    );
}

#[test]
fn a_limiter_that_sends_two_commands_per_attempt_misses_the_round_trip_target() {
    let mut runs = fixtures::complete_runs();
    let shared = runs
        .runs
        .iter_mut()
        .filter_map(|run| run.redis_latency.as_mut())
        .filter_map(|latency| latency.benchmarks.get_mut("redis-permit/shared/1-task"));
    for attempts in shared {
        attempts.commands = Some(200);
    }
    let checked = targets::check(&runs);
    let commands = checked
        .iter()
        .find(|c| matches!(c.target.measure, Measure::Commands(_)))
        .expect("the commands target");
    assert_eq!(commands.per_run, vec![(200.0, 100.0); 3]);
    assert!(matches!(commands.verdict, Verdict::Missed { by } if (by - 1.0).abs() < 1e-9));
}

#[test]
fn the_section_shows_the_chart_percentiles_commands_and_local_rejections() {
    let report = render(&Inputs::gather(&fixtures::complete()));
    assert!(
        report
            .charts
            .iter()
            .any(|(name, svg)| name == "shared-limiter-throughput.svg" && svg.contains("envoy"))
    );
    let html = &report.html;
    let row = fixtures::row(html, "<code>redis-permit/shared/1-task</code>");
    assert!(
        row.contains("<td>55.7 µs</td><td>18.0 k</td><td>41.0 µs</td><td>181 µs</td><td>4.41×</td><td>1.00</td><td>1,500</td>"),
        "{row}"
    );
    let envoy = fixtures::row(html, "<code>redis-permit/envoy/1-task</code>");
    assert!(envoy.contains("<td>2.00</td>"), "{envoy}");
    let local = fixtures::row(html, "<code>redis-rejection/local/1-task</code>");
    assert!(local.contains("<td>0</td>"), "{local}");
    assert!(html.contains("made 100 more attempts of each network benchmark"));
    assert!(html.contains(
        "Such a local rejection took 172 ns; the same rejection decided by the server (local \
         memory off) took 131 µs: the local one is 762× faster"
    ));
}

#[test]
fn without_shared_results_or_percentiles_the_page_names_what_is_missing() {
    let mut runs = fixtures::without_groups(fixtures::complete_runs(), "redis-");
    for run in &mut runs.runs {
        run.redis_latency = None;
    }
    let report = render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    });
    for line in [
        "redis-permit: not measured",
        "the shared limiter's percentiles: none kept (see the missing inputs above)",
        "redis-rejection: local and round-trip rejections not both measured",
    ] {
        assert!(
            report.missing.contains(&line.to_owned()),
            "{line}: {:?}",
            report.missing
        );
        assert!(report.html.contains(&format!("Missing: {line}")));
    }
    assert!(
        !report
            .charts
            .iter()
            .any(|(name, _)| name == "shared-limiter-throughput.svg")
    );
    for what in [SIXTEEN_TASKS, TAIL, COMMANDS, LOCAL] {
        assert!(
            fixtures::row(&report.html, what).contains("not measured"),
            "{what}"
        );
    }
}

#[test]
fn a_run_that_kept_no_percentiles_is_named_among_the_missing_inputs() {
    let dir = fixtures::bare_run("no-redis-latency", &[]);
    let inputs = Inputs::gather(&Paths {
        bench_runs: dir.clone(),
        ..fixtures::complete()
    });
    let line = format!(
        "the shared limiter's percentiles: no redis-latency.json in {} (`cargo xtask bench` keeps it with each run of the redis bench)",
        dir.display()
    );
    assert!(inputs.missing.contains(&line), "{:?}", inputs.missing);
}

#[test]
fn an_unreadable_percentiles_file_is_named_by_path() {
    let dir = fixtures::bare_run("bad-redis-latency", &[("redis-latency.json", "[1, 2]")]);
    let inputs = Inputs::gather(&Paths {
        bench_runs: dir.clone(),
        ..fixtures::complete()
    });
    assert!(
        inputs.missing.iter().any(|m| m.starts_with(&format!(
            "the shared limiter's latencies {} unreadable: not the redis bench's latency JSON",
            dir.join("1/redis-latency.json").display()
        ))),
        "{:?}",
        inputs.missing
    );
}

#[test]
fn without_recorded_runs_the_percentiles_of_unknown_origin_are_read() {
    let inputs = Inputs::gather(&fixtures::unrecorded());
    let run = &inputs.bench.as_ref().expect("criterion's results").runs[0];
    assert!(run.manifest.is_none());
    let latency = run
        .redis_latency
        .as_ref()
        .expect("target/redis-latency.json");
    assert_eq!(
        latency.get("redis-permit/shared/1-task").map(|a| a.p99_ns),
        Some(181_000)
    );
    assert!(run.keyed_memory.is_some());
    let missing = Inputs::gather(&Paths {
        redis_latency: fixtures::dir().join("no-such-file.json"),
        ..fixtures::unrecorded()
    })
    .missing;
    assert!(
        missing
            .iter()
            .any(|m| m.starts_with("the shared limiter's percentiles ")
                && m.ends_with("(the redis bench writes them)")),
        "{missing:?}"
    );
}

#[test]
fn the_shared_sweep_chart_shows_faults_per_kind_and_rules_broken_with_its_command() {
    let inputs = Inputs::gather(&fixtures::complete());
    let report = render(&inputs);
    let (_, svg) = report
        .charts
        .iter()
        .find(|(name, _)| name == "shared-sweep.svg")
        .expect("the shared sweep's chart");
    assert!(svg.contains("reply_lost") && svg.contains("configuration_refused"));
    assert!(svg.contains("window_limit (0)"));
    assert!(report.html.contains(
        "cargo xtask simulate --limiter shared --seed 7 --scenarios 300 --check-determinism"
    ));
    // A planted bug's sweep: its broken rule counted on the chart.
    let planted = fixed_window_reports::SimSummary::parse(
        r#"{"limiter": "shared", "planted": "retry-lost-reply", "faults": {"reply_lost": 40}, "violations": {"double_count": 12, "window_limit": 0}}"#,
    )
    .expect("a summary");
    let svg = fixed_window_reports::charts::shared_sweep(&planted).expect("drawn");
    assert!(svg.contains("double_count (12)"), "{svg}");
}
