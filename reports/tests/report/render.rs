//! The complete fixtures render every section and chart.

use fixed_window_reports::{Inputs, render};

use crate::fixtures;

#[test]
fn the_fixtures_render_every_chart_with_nothing_missing() {
    let inputs = Inputs::gather(&fixtures::complete());
    assert_eq!(inputs.missing, Vec::<String>::new());
    let report = render(&inputs);
    assert_eq!(report.missing, Vec::<String>::new());
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
            "permits-per-window.svg",
            "permits-near-boundaries.svg",
            "wait-times.svg",
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
            .contains("2 threads hammering, vs the mutex window")
    );
    assert!(!report.html.contains("not measured"));
    assert!(report.html.contains("Best <code>Backoff::new("));
    assert!(report.html.contains("The data says:"));
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
    assert!(row("run/drawn").contains("class=\"met\">5.70 M calls"));
    assert!(row("run/asynchronous").contains("class=\"met\">6.58 M calls"));
    assert!(row("run_events/asynchronous").contains("M events"));
    assert!(row("sweep/drawn").contains("M calls"));

    // Twice as slow, the drawn run misses the target of 5 M calls per second.
    let mut results = Inputs::gather(&fixtures::complete()).bench.unwrap();
    let mut slow = results
        .get_with("simulator", "run", "drawn")
        .unwrap()
        .clone();
    slow.median_ns *= 2.0;
    results.insert(slow);
    let report = render(&Inputs {
        bench: Some(results),
        ..Inputs::default()
    });
    assert!(report.html.contains("class=\"miss\">2.85 M calls"));
}
