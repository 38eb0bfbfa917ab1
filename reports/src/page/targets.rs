//! The benchmark runs and the targets: each ratio within one run, the median over the runs
//! with its spread, and a verdict only where the runs bear one.

use crate::bench_runs::{BenchRun, BenchRuns};
use crate::numbers::{DIGITS, nanoseconds, ratio, significant};
use crate::page::Page;
use crate::page::provenance;
use crate::page::table::{Table, TableCell};
use crate::targets::{self, Measure, RUNS_FOR_VERDICT, Verdict};

pub fn section(page: &mut Page, runs: &BenchRuns) {
    page.heading(2, "Benchmark runs");
    if runs.is_recorded() {
        page.provenance(&format!(
            "Every figure below comes from these runs. The first measures every benchmark; the \
             others repeat the targets' benchmarks only, so that each target has a ratio from \
             several runs, interleaved with its peer's in each. A verdict needs {RUNS_FOR_VERDICT} \
             full runs."
        ));
        page.table(&provenance::runs_table(runs));
    } else {
        page.provenance(&provenance::unrecorded(runs));
        page.warning(
            "the benchmark results were not recorded by `cargo xtask bench`: ratios may pair \
             figures from different runs, and none gets a verdict",
        );
    }
    if runs.runs.iter().any(BenchRun::is_quick) {
        page.html(&format!("<p class=\"smoke\">{}</p>", provenance::SMOKE));
    }

    page.heading(2, "Targets");
    if runs.is_recorded() {
        page.provenance(&provenance::runs(runs));
    }
    page.paragraph(
        "Each ratio is ours over the peer within one run (both measured by the same command \
         minutes apart); the table gives the median of those ratios over the runs and their \
         spread, the smallest and largest. The two figures are the medians of each side over \
         the same runs: criterion's median times (single-threaded figures in CPU time, \
         contention and the shared limiter in wall time), the shared limiter's p99 over its p50, \
         the commands its clients sent per attempt (counted with <code>MONITOR</code>), or the \
         keyed limiter's bytes (counted by an allocator). A throughput target \
         (≥ 1.5× the peer's) is held as time per attempt (≤ 1/1.5 = 0.667× the peer's). A timed \
         ratio needs several runs for a verdict; a ratio of counts, the same in every run, one.",
    );
    let mut table = Table::new([
        "comparison",
        "ours",
        "against",
        "ratio (median)",
        "spread (min–max)",
        "runs",
        "target",
        "verdict",
    ]);
    for checked in targets::check(runs) {
        let target = checked.target;
        let limit = if target.is_target {
            target.bound()
        } else {
            "–".to_owned()
        };
        let (Some(spread), Some(ours), Some(peer)) =
            (checked.ratio(), checked.measured(), checked.against())
        else {
            table.row([
                TableCell::text(target.what),
                TableCell::text("not measured").class("missing").span(5),
                TableCell::text(limit),
                TableCell::text("not measured").class("missing"),
            ]);
            continue;
        };
        table.row([
            TableCell::text(target.what),
            TableCell::text(figure(target.measure, ours.median, Side::Measured)),
            TableCell::text(figure(target.measure, peer.median, Side::Against)),
            TableCell::text(ratio(spread.median)),
            TableCell::text(if spread.runs > 1 {
                format!("{}–{}", ratio(spread.min), ratio(spread.max))
            } else {
                "one run".to_owned()
            }),
            TableCell::text(spread.runs.to_string()),
            TableCell::text(limit),
            verdict(checked.verdict, spread.runs),
        ]);
    }
    page.table(&table);
}

/// Which of a target's two figures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Measured,
    Against,
}

/// A target's figure with its unit: `32.1 ns`, `p99 236 µs`, `100 commands`, `88,464 bytes`.
fn figure(measure: Measure, value: f64, side: Side) -> String {
    let counted = significant(value, DIGITS);
    match (measure, side) {
        (Measure::Medians { .. }, _) => nanoseconds(value),
        (Measure::Tail(_), Side::Measured) => format!("p99 {}", nanoseconds(value)),
        (Measure::Tail(_), Side::Against) => format!("p50 {}", nanoseconds(value)),
        (Measure::Commands(_), Side::Measured) => format!("{counted} commands"),
        (Measure::Commands(_), Side::Against) => format!("{counted} attempts"),
        (Measure::MemoryAfterChurn, _) => format!("{counted} bytes"),
        (Measure::ServerTime(_), _) => format!("{counted} µs"),
    }
}

/// A verdict's cell, as the targets table shows it.
pub(super) fn verdict(verdict: Verdict, runs: usize) -> TableCell {
    match verdict {
        Verdict::Met { runs_over: 0 } => TableCell::text("met").class("met"),
        Verdict::Met { runs_over } => TableCell::text(format!(
            "met at the median; {runs_over} of {runs} runs above"
        ))
        .class("met"),
        Verdict::Missed { by } => {
            TableCell::text(format!("missed by {} %", significant(by * 100.0, 2))).class("miss")
        }
        Verdict::Reference => TableCell::text("reference"),
        Verdict::NotMeasured => TableCell::text("not measured").class("missing"),
        Verdict::Smoke => TableCell::text("smoke data: no verdict").class("missing"),
        Verdict::Unrecorded => TableCell::text("no verdict: runs not recorded").class("missing"),
        Verdict::TooFewRuns { runs } => TableCell::text(format!(
            "no verdict: {runs} run{}, {RUNS_FOR_VERDICT} needed",
            if runs == 1 { "" } else { "s" }
        ))
        .class("missing"),
    }
}
