//! Single-threaded operations: the median ns of each limiter and clock, one row per benchmark.

use crate::bench_results::Measurement;
use crate::bench_runs::{BenchRun, BenchRuns};
use crate::numbers::{DIGITS, significant};
use crate::page::table::{Table, TableCell};
use crate::page::{Page, provenance};

/// The groups shown, with what each measures.
const GROUPS: [(&str, &str); 4] = [
    ("permit", "a try_acquire that succeeds"),
    ("rejection", "a try_acquire on a used-up window"),
    (
        "advance",
        "a call that opens the next window (manual clock moved each call)",
    ),
    ("call", "call(op) against the bare operation"),
];

pub fn section(page: &mut Page, run: &BenchRun, runs: &BenchRuns) {
    page.heading(2, "Single-threaded operations");
    page.provenance(&provenance::run(run, runs));
    page.smoke(run);
    page.paragraph(
        "Median ns per operation, in the benchmark thread's CPU time (on a shared machine, wall \
         time would mostly measure the other load). <code>system</code>: our \
         <code>SystemClock</code> (the TSC through quanta); <code>std</code>: ours on std's \
         <code>Instant</code>; <code>default</code>: governor's quanta clock; \
         <code>manual</code>/<code>fake</code>: clocks that only move when told.",
    );
    let mut table = Table::new(["group", "limiter-clock", "median ns", "95 % interval"]);
    for (group, about) in GROUPS {
        let rows: Vec<&Measurement> = run.results.group(group).collect();
        if rows.is_empty() {
            table.row([
                TableCell::text(group),
                TableCell::text("not measured").class("missing").span(3),
            ]);
        }
        for m in rows {
            table.row([
                TableCell::text(group).title(about),
                TableCell::text(&m.function),
                TableCell::text(significant(m.median_ns, DIGITS)),
                TableCell::text(format!(
                    "{}–{}",
                    significant(m.interval_ns.0, DIGITS),
                    significant(m.interval_ns.1, DIGITS)
                )),
            ]);
        }
    }
    page.table(&table);
}
