//! The complete fixtures render every section and chart, each saying where its figures came
//! from.

use fixed_window_reports::{Inputs, render};

use crate::fixtures;

#[test]
fn the_fixtures_render_every_chart_with_nothing_missing() {
    let inputs = Inputs::gather(&fixtures::complete());
    assert_eq!(inputs.missing, Vec::<String>::new());
    let report = render(&inputs);
    assert_eq!(report.missing, Vec::<String>::new());
    assert_eq!(report.warnings, Vec::<String>::new());
    let names: Vec<&str> = report
        .charts
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "contention-permit-ns.svg",
            "contention-permit-throughput.svg",
            "contention-rejection-ns.svg",
            "contention-rejection-throughput.svg",
            "cas-retries.svg",
            "backoff-sweep.svg",
            "keyed-contention-permit-throughput.svg",
            "keyed-contention-rejection-throughput.svg",
            "shared-limiter-throughput.svg",
            "permits-per-window.svg",
            "permits-near-boundaries.svg",
            "wait-times.svg",
            "shared-sweep.svg",
        ]
    );
    for (name, svg) in &report.charts {
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{name}"
        );
        assert!(report.html.contains(svg.as_str()), "{name} is inline");
    }
}

#[test]
fn the_page_states_the_targets_and_the_recommended_backoff() {
    let report = render(&Inputs::gather(&fixtures::complete()));
    assert!(
        report
            .html
            .contains("permit path, default clock, vs governor check()")
    );
    assert!(
        report
            .html
            .contains("2 threads taking permits, vs the mutex window")
    );
    assert!(!report.html.contains("not measured"));
    assert!(report.html.contains("Best <code>Backoff::new("));
    assert!(report.html.contains("The data says:"));
}

#[test]
fn every_section_says_when_and_by_which_command_its_figures_were_produced() {
    let report = render(&Inputs::gather(&fixtures::complete()));
    let html = &report.html;
    // The runs, each with its command, mode and times.
    assert!(html.contains("<td>1 of 3</td><td><code>cargo xtask bench</code></td><td class=\"met\">full</td><td>every benchmark</td><td>2025-06-15 15:06:40 UTC</td>"), "{html}");
    assert!(html.contains("<td>3 of 3</td>"));
    // The targets name the runs their ratios come from.
    assert!(html.contains(
        "<h2>Targets</h2><p class=\"provenance\">Runs 1–3 of 3 of <code>cargo xtask bench</code>, \
         2025-06-15 15:06:40 UTC to 2025-06-15 15:15:45 UTC.</p>"
    ));
    // Each other benchmark section names the run it was drawn from.
    let run_one = "Run 1 of 3 of <code>cargo xtask bench</code> (full, every benchmark), \
                   2025-06-15 15:06:40 UTC to 2025-06-15 15:13:30 UTC, on a machine with 2 cores.";
    for section in [
        "Single-threaded operations",
        "Contention",
        "Backoff sweep",
        "Keyed limiter",
        "Memory",
        "Shared limiter (Redis)",
        "Latency and commands per attempt",
        "Throughput",
    ] {
        let start = html.find(&format!(">{section}</h")).expect(section);
        let end = start + 600.min(html.len() - start);
        assert!(
            html[start..end].contains(run_one),
            "{section}: {}",
            &html[start..end]
        );
    }
    // The machine's cores come from the run's manifest, not from the page's text.
    assert!(
        html.contains("The machine measured had 2 cores, so 4 and 8 threads oversubscribe it.")
    );
    // The simulator's summary and trace name their sweep, and it is the same.
    assert!(html.contains(
        "The summary of the sweep <code>cargo xtask simulate --seed 42 --scenarios 3</code> \
         (seed 42, 3 scenarios, shard 0/1, limiter: real), started 2025-06-15 15:15:00 UTC."
    ));
    assert!(html.contains("come from the same sweep"));
}

#[test]
fn the_targets_show_the_median_ratio_and_its_spread_over_the_runs() {
    let html = render(&Inputs::gather(&fixtures::complete())).html;
    let start = html
        .find("<td>permit path, default clock, vs governor check()</td>")
        .expect("the permit row");
    let row = &html[start..start + html[start..].find("</tr>").unwrap()];
    // Run 1: 32.06 / 31.98 ns; run 2: ours ×1.04, governor ×0.98; run 3: ours ×0.97,
    // governor ×1.03. Ratios 1.002, 1.064, 0.944: the median misses ≤ 1.0× by 0.22 %.
    assert!(
        row.contains("<td>1.00×</td><td>0.944×–1.06×</td><td>3</td><td>≤ 1.0×</td>"),
        "{row}"
    );
    assert!(row.contains("missed by 0.22 %"), "{row}");
}

#[test]
fn the_page_and_charts_are_written_to_the_output_directory() {
    let out = fixtures::scratch("written");
    let report = render(&Inputs::gather(&fixtures::complete()));
    report.write(&out).expect("the report is written");
    let page = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    assert_eq!(page, report.html);
    for (name, svg) in &report.charts {
        assert_eq!(
            &std::fs::read_to_string(out.join(name)).expect("a chart file"),
            svg
        );
    }
}

#[test]
fn the_page_shows_the_simulators_throughput_against_its_target() {
    let report = render(&Inputs::gather(&fixtures::complete()));
    let row = |bench: &str| {
        let start = report
            .html
            .find(&format!("<td>{bench}</td>"))
            .unwrap_or_else(|| panic!("no row for {bench}"));
        let end = start + report.html[start..].find("</tr>").unwrap();
        report.html[start..end].to_owned()
    };
    // The fixtures: 247,948 calls in 43.5 ms, and in 37.7 ms with every caller asynchronous.
    assert!(row("simulator/run/drawn").contains("<td>43.5 ms</td><td class=\"met\">5.70 M calls"));
    assert!(row("simulator/run/asynchronous").contains("class=\"met\">6.58 M calls"));
    assert!(row("simulator/run_events/asynchronous").contains("M events"));
    assert!(row("simulator/sweep/drawn").contains("M calls"));
    // The shared limiter's simulation: 38,672 calls in 109 ms (the median), against its floor of 250 k.
    let shared = row("shared/sweep/drawn");
    assert!(shared.contains("class=\"met\">356 k calls"), "{shared}");
    assert!(
        report
            .html
            .contains("(247,948 simulated calls an iteration)")
    );
    assert!(
        report
            .html
            .contains("Targets: 5.00 M simulated calls per second per core, and 250 k")
    );

    // Twice as slow, the drawn run misses the target of 5 M calls per second.
    let mut runs = Inputs::gather(&fixtures::complete()).bench.unwrap();
    let results = &mut runs.runs[0].results;
    let mut slow = results
        .get_with("simulator", "run", "drawn")
        .unwrap()
        .clone();
    slow.median_ns *= 2.0;
    results.insert(slow);
    let report = render(&Inputs {
        bench: Some(runs),
        ..Inputs::default()
    });
    assert!(report.html.contains("class=\"miss\">2.85 M calls"));
}
