//! The simulator's throughput benchmarks (`sim/benches/throughput.rs`) against its target.

use html_escape::encode_text as esc;

use crate::bench_runs::BenchRuns;
use crate::numbers::{grouped, nanoseconds, si};
use crate::page::table::{Table, TableCell};
use crate::page::{Page, provenance};

/// Simulated calls per second per core the simulator should reach.
pub const SIMULATOR_TARGET: f64 = 5e6;

/// The benchmarks: function, parameter, what one element is, and what the row measures.
const BENCHES: [(&str, &str, &str, &str); 4] = [
    (
        "run",
        "drawn",
        "calls",
        "the scenarios as the sweep draws them",
    ),
    (
        "run",
        "asynchronous",
        "calls",
        "every caller asynchronous, nothing panicking",
    ),
    (
        "run_events",
        "asynchronous",
        "events",
        "the same, in events",
    ),
    (
        "sweep",
        "drawn",
        "calls",
        "draw, run and check: a sweep's whole work",
    ),
];

/// criterion's group of the simulator's benchmarks.
const GROUP: &str = "simulator";

pub fn section(page: &mut Page, runs: Option<&BenchRuns>) {
    page.heading(3, "Throughput");
    let run = runs.and_then(|runs| {
        runs.runs
            .iter()
            .find(|run| run.results.group(GROUP).next().is_some())
            .map(|run| (run, runs))
    });
    if let Some((run, runs)) = run {
        page.provenance(&provenance::run(run, runs));
        page.smoke(run);
    }
    let sample = run
        .and_then(|(run, _)| run.results.get_with(GROUP, "run", "drawn"))
        .and_then(|m| m.elements)
        .map_or_else(String::new, |calls| {
            format!(" ({} simulated calls an iteration)", grouped(calls))
        });
    page.paragraph(&format!(
        "A sample of the default sweep's first scenarios{sample}, each drawn just before its \
         run, in the benchmark thread's CPU time (<code>sim/benches/throughput.rs</code>, run by \
         <code>cargo xtask bench</code>). Target for runs: {} simulated calls per second per \
         core.",
        si(SIMULATOR_TARGET)
    ));
    let quick = run.is_some_and(|(run, _)| run.is_quick());
    let mut table = Table::new(["bench", "what", "median time", "per second, one core"]);
    for (function, parameter, unit, about) in BENCHES {
        let name = TableCell::text(format!("{function}/{parameter}"));
        let Some(m) = run.and_then(|(run, _)| run.results.get_with(GROUP, function, parameter))
        else {
            table.row([
                name,
                TableCell::text(about),
                TableCell::text("not measured").class("missing").span(2),
            ]);
            continue;
        };
        let rate = m.per_second();
        let class = match (function, unit) {
            _ if quick => None,
            ("run", "calls") if rate >= SIMULATOR_TARGET => Some("met"),
            ("run", "calls") => Some("miss"),
            _ => None,
        };
        let mut rate_cell = TableCell::html(format!("{} {}", esc(&si(rate)), esc(unit)));
        if let Some(class) = class {
            rate_cell = rate_cell.class(class);
        }
        table.row([
            name,
            TableCell::text(about),
            TableCell::text(nanoseconds(m.median_ns)),
            rate_cell,
        ]);
    }
    page.table(&table);
}
