//! The simulator's throughput benchmarks (`sim/benches/throughput.rs`) against its target.

use html_escape::encode_text as esc;

use crate::bench_runs::BenchRuns;
use crate::numbers::{grouped, nanoseconds, si};
use crate::page::table::{Table, TableCell};
use crate::page::{Page, provenance};

/// Simulated calls per second per core the simulator should reach, drawing, running and
/// checking the in-process limiter's scenarios.
pub const SIMULATOR_TARGET: f64 = 5e6;

/// Simulated calls per second per core the shared limiter's simulation should keep: its
/// processes, network and Redis (running the limiter's script) cost far more per call.
pub const SHARED_SIMULATOR_TARGET: f64 = 2.5e5;

/// A row of the table: the benchmark, what one element is, what the row measures, and the
/// rate it should reach, if it has a target.
struct Bench {
    group: &'static str,
    function: &'static str,
    parameter: &'static str,
    unit: &'static str,
    about: &'static str,
    target: Option<f64>,
}

/// The benchmarks, `sim/benches/throughput.rs` (group `simulator`) then `sim/benches/shared.rs`
/// (group `shared`).
const BENCHES: [Bench; 6] = [
    Bench {
        group: GROUP,
        function: "run",
        parameter: "drawn",
        unit: "calls",
        about: "the scenarios as the sweep draws them",
        target: Some(SIMULATOR_TARGET),
    },
    Bench {
        group: GROUP,
        function: "run",
        parameter: "asynchronous",
        unit: "calls",
        about: "every caller asynchronous, nothing panicking",
        target: Some(SIMULATOR_TARGET),
    },
    Bench {
        group: GROUP,
        function: "run_events",
        parameter: "asynchronous",
        unit: "events",
        about: "the same, in events",
        target: None,
    },
    Bench {
        group: GROUP,
        function: "sweep",
        parameter: "drawn",
        unit: "calls",
        about: "draw, run and check: a sweep's whole work",
        target: Some(SIMULATOR_TARGET),
    },
    Bench {
        group: SHARED_GROUP,
        function: "run",
        parameter: "drawn",
        unit: "calls",
        about: "the shared limiter: processes, network, Redis and faults as drawn",
        target: Some(SHARED_SIMULATOR_TARGET),
    },
    Bench {
        group: SHARED_GROUP,
        function: "sweep",
        parameter: "drawn",
        unit: "calls",
        about: "the shared limiter: draw, run and check",
        target: Some(SHARED_SIMULATOR_TARGET),
    },
];

/// criterion's group of the simulator's benchmarks.
const GROUP: &str = "simulator";

/// criterion's group of the shared limiter's simulation benchmarks.
const SHARED_GROUP: &str = "shared";

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
         <code>cargo xtask bench</code>); the shared limiter's, the default shared sweep's \
         first scenarios (<code>sim/benches/shared.rs</code>). Targets: {} simulated calls \
         per second per core, and {} for the shared limiter.",
        si(SIMULATOR_TARGET),
        si(SHARED_SIMULATOR_TARGET)
    ));
    let quick = run.is_some_and(|(run, _)| run.is_quick());
    let mut table = Table::new(["bench", "what", "median time", "per second, one core"]);
    for bench in &BENCHES {
        let name = TableCell::text(format!(
            "{}/{}/{}",
            bench.group, bench.function, bench.parameter
        ));
        let Some(m) = run.and_then(|(run, _)| {
            run.results
                .get_with(bench.group, bench.function, bench.parameter)
        }) else {
            table.row([
                name,
                TableCell::text(bench.about),
                TableCell::text("not measured").class("missing").span(2),
            ]);
            continue;
        };
        let rate = m.per_second();
        let class = match bench.target {
            _ if quick => None,
            Some(target) if rate >= target => Some("met"),
            Some(_) => Some("miss"),
            None => None,
        };
        let mut rate_cell = TableCell::html(format!("{} {}", esc(&si(rate)), esc(bench.unit)));
        if let Some(class) = class {
            rate_cell = rate_cell.class(class);
        }
        table.row([
            name,
            TableCell::text(bench.about),
            TableCell::text(nanoseconds(m.median_ns)),
            rate_cell,
        ]);
    }
    page.table(&table);
}
