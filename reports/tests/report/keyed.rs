//! The keyed limiter's section and targets: each population beside governor's keyed limiter,
//! contention, memory, and what the page says when they are missing.

use fixed_window_reports::targets::{self, Verdict};
use fixed_window_reports::{Inputs, Paths, render};

use crate::fixtures;

fn page(runs: fixed_window_reports::BenchRuns) -> String {
    render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    })
    .html
}

#[test]
fn the_contention_target_is_the_median_of_ratios_within_each_run() {
    let html = render(&Inputs::gather(&fixtures::complete())).html;
    // 1,000 keys, 2 threads: 60 / 110 ns in run 1; ours ×1.03 and governor ×0.99 in run 2;
    // ×0.98 and ×1.02 in run 3. Ratios 0.545, 0.568, 0.524, shown for reference (the 1.5×
    // target is retired).
    let row = fixtures::row(
        &html,
        "keyed: 2 threads taking permits on 1,000 keys, vs governor's keyed limiter (reference; the 1.5× target is retired)",
    );
    assert!(
        row.contains("<td>60.0 ns</td><td>110 ns</td><td>0.545×</td><td>0.524×–0.567×</td><td>3</td><td>–</td><td>reference</td>"),
        "{row}"
    );
    let permit = fixtures::row(
        &html,
        "keyed: permit on an existing key of 1,000, vs governor's keyed limiter",
    );
    assert!(permit.contains("<td>0.944×</td>"), "{permit}");
}

#[test]
fn the_memory_target_is_a_count_and_one_full_run_decides_it() {
    let runs = fixtures::complete_runs();
    let checked = targets::check(&runs);
    let memory = checked
        .iter()
        .find(|c| c.target.measure == targets::Measure::MemoryAfterChurn)
        .expect("the memory target");
    // 105,760 bytes after ten million keys against 88,464 for one window's keys.
    assert_eq!(memory.per_run, vec![(105_760.0, 88_464.0)]);
    assert_eq!(memory.verdict, Verdict::Met { runs_over: 0 });
    let html = page(runs);
    let row = fixtures::row(
        &html,
        "keyed: bytes held after the churn of distinct keys (10 M in a full run), over the bytes of one window's keys alone",
    );
    assert!(
        row.contains("<td>105,760 bytes</td><td>88,464 bytes</td><td>1.20×</td><td>one run</td><td>1</td><td>≤ 2.0×</td><td class=\"met\">met</td>"),
        "{row}"
    );
}

#[test]
fn memory_that_grows_with_every_key_misses_the_target() {
    let mut runs = fixtures::complete_runs();
    let memory = runs.runs[0]
        .keyed_memory
        .as_mut()
        .expect("the fixture's memory");
    // A limiter that never reclaims: governor's figure without retain_recent.
    let ours = memory
        .churn
        .results
        .iter_mut()
        .find(|h| h.limiter == "ours")
        .expect("ours");
    ours.bytes = 285_213_824;
    let html = page(runs);
    let row = fixtures::row(
        &html,
        "keyed: bytes held after the churn of distinct keys (10 M in a full run), over the bytes of one window's keys alone",
    );
    assert!(row.contains("<td>3,224×</td>"), "{row}");
    assert!(row.contains("class=\"miss\">missed by"), "{row}");
}

#[test]
fn the_section_shows_each_population_beside_governor_and_the_memory() {
    let html = render(&Inputs::gather(&fixtures::complete())).html;
    let start = html
        .find("<h2>Keyed limiter</h2>")
        .expect("the keyed section");
    let section = &html[start
        ..html[start..]
            .find("<h2>Shared")
            .map_or(html.len(), |e| start + e)];
    assert!(section.contains("<th>1 key</th><th>1,000 keys</th><th>1,000,000 keys</th>"));
    // Ours first, each figure with its ratio to governor's on the same population.
    assert!(
        section.contains("<tr><td>ours-system</td><td>28.0 ns (0.933×)</td><td>34.0 ns (0.944×)</td><td>95.0 ns (0.864×)</td></tr>"),
        "{section}"
    );
    assert!(section.contains("<td>governor-default</td><td>30.0 ns</td>"));
    // Contention: calls per second at 2 threads over 1,000 keys (2 calls in 60 ns).
    assert!(section.contains("<td>ours-system</td><td>1,000</td><td>25.0 M</td><td>33.3 M</td>"));
    // Memory: what each limiter holds after the churn, beside ours holding one window.
    assert!(section.contains("After 10,000,000 distinct keys, 1,000 fresh keys a window"));
    assert!(section.contains(
        "<td>governor, retain_recent() never called</td><td>285,213,824</td><td>10,000,000</td>"
    ));
}

#[test]
fn without_keyed_results_or_memory_the_page_names_what_is_missing() {
    let mut runs = fixtures::without_groups(fixtures::complete_runs(), "keyed-");
    for run in &mut runs.runs {
        run.keyed_memory = None;
    }
    let report = render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    });
    for line in [
        "keyed-permit: not measured",
        "keyed-rejection: not measured",
        "keyed-contention-permit: not measured",
        "keyed-contention-rejection: not measured",
        "keyed memory: not counted (see the missing inputs above)",
    ] {
        assert!(
            report.missing.contains(&line.to_owned()),
            "{line}: {:?}",
            report.missing
        );
        assert!(report.html.contains(&format!("Missing: {line}")));
    }
    assert!(
        fixtures::row(
            &report.html,
            "keyed: permit on an existing key of 1,000, vs governor's keyed limiter"
        )
        .contains("not measured")
    );
}

#[test]
fn a_run_that_kept_no_memory_file_is_named_among_the_missing_inputs() {
    let dir = fixtures::bare_run("no-keyed-memory", &[]);
    let inputs = Inputs::gather(&Paths {
        bench_runs: dir.clone(),
        ..fixtures::complete()
    });
    let line = format!(
        "keyed memory: no keyed-memory.json in {} (`cargo xtask bench` counts it after its first run)",
        dir.display()
    );
    assert!(inputs.missing.contains(&line), "{:?}", inputs.missing);
}

#[test]
fn an_unreadable_memory_file_is_named_by_path() {
    let dir = fixtures::bare_run(
        "bad-keyed-memory",
        &[("keyed-memory.json", "{\"limit\": 10}")],
    );
    let inputs = Inputs::gather(&Paths {
        bench_runs: dir.clone(),
        ..fixtures::complete()
    });
    assert!(
        inputs.missing.iter().any(|m| m.starts_with(&format!(
            "keyed memory {} unreadable: not the keyed_memory example's JSON: missing field",
            dir.join("1/keyed-memory.json").display()
        ))),
        "{:?}",
        inputs.missing
    );
}
