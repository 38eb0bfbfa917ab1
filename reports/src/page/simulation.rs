//! The simulator's sweep: its summary, its trace's charts, and whether the two come from the
//! same sweep.

use html_escape::encode_text as esc;
use serde_json::Value;

use crate::charts;
use crate::inputs::Inputs;
use crate::numbers::{DIGITS, counted, grouped, nanoseconds, si, significant};
use crate::page::table::{Table, TableCell};
use crate::page::{Page, provenance};
use crate::sim_summary::SimSummary;
use crate::sim_trace::Trace;
use crate::sweep_provenance::{SameSweep, same_sweep};

/// How a summary field's value reads.
#[derive(Clone, Copy)]
enum Reads {
    /// As written (an identifier, such as the seed).
    AsWritten,
    /// A count, thousands separated.
    Count,
    /// Nanoseconds, in the unit that reads best.
    Nanoseconds,
    /// Seconds, in the unit that reads best.
    Seconds,
    /// A rate of these things per second.
    PerSecond(&'static str),
}

/// The summary's fields the page knows, in the order shown: name, label, how it reads.
const FIELDS: [(&str, &str, Reads); 11] = [
    ("seed", "seed", Reads::AsWritten),
    ("scenarios", "scenarios", Reads::Count),
    ("calls", "simulated calls", Reads::Count),
    ("permits", "permits", Reads::Count),
    ("rejections", "rejections", Reads::Count),
    ("waits", "sleeps begun", Reads::Count),
    ("interrupts", "calls interrupted", Reads::Count),
    ("events", "events", Reads::Count),
    ("simulated_ns", "virtual time simulated", Reads::Nanoseconds),
    ("wall_seconds", "wall time", Reads::Seconds),
    (
        "calls_per_second",
        "simulated calls per second (wall time, every thread)",
        Reads::PerSecond("calls"),
    ),
];

pub fn section(page: &mut Page, inputs: &Inputs) {
    page.heading(3, "Sweep summary");
    match &inputs.summary {
        Some(summary) => {
            page.provenance(&provenance::sweep("summary", summary.sweep.as_ref()));
            page.table(&summary_table(summary));
        }
        None => page.html(
            "<p class=\"missing\">No simulator summary: run <code>cargo xtask simulate</code>.</p>",
        ),
    }
    page.heading(3, "Trace");
    let Some(trace) = &inputs.trace else {
        page.html(
            "<p class=\"missing\">No simulator trace: run <code>cargo xtask simulate</code>.</p>",
        );
        return;
    };
    page.provenance(&provenance::sweep("trace", inputs.trace_sweep.as_ref()));
    if let Some(summary) = &inputs.summary {
        match same_sweep(summary.sweep.as_ref(), inputs.trace_sweep.as_ref()) {
            SameSweep::Same => page.paragraph(
                "The summary above and this trace come from the same sweep: the trace is one of \
                 the sweep's own scenarios.",
            ),
            SameSweep::Different(differences) => page.warning(&format!(
                "the summary and the trace come from different sweeps ({}): the charts below are \
                 not of the sweep summed up above. Run `cargo xtask simulate` to write both from \
                 one sweep.",
                differences.join("; ")
            )),
            SameSweep::Unknown(why) => page.warning(&format!(
                "whether the summary and the trace come from the same sweep is unknown: {why}."
            )),
        }
    }
    trace_charts(page, trace);
}

fn summary_table(summary: &SimSummary) -> Table {
    let mut table = Table::new(["summary", "value"]);
    for (name, label, reads) in FIELDS {
        if let Some((_, value)) = summary.fields.iter().find(|(key, _)| key == name) {
            table.row([TableCell::text(label), TableCell::text(show(value, reads))]);
        }
    }
    for (key, value) in &summary.fields {
        if !FIELDS.iter().any(|(name, _, _)| name == key) {
            table.row([TableCell::text(key), TableCell::text(show_unknown(value))]);
        }
    }
    for (invariant, count) in &summary.violations {
        table.row([
            TableCell::text(format!("violations: {invariant}")),
            TableCell::text(grouped(*count)).class(if *count == 0 { "met" } else { "miss" }),
        ]);
    }
    table
}

/// A number written as a JSON number or as a string (a `u128` is written as a string).
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn show(value: &Value, reads: Reads) -> String {
    let Some(n) = number(value) else {
        return show_unknown(value);
    };
    match reads {
        Reads::AsWritten => match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        Reads::Count => show_unknown(value),
        Reads::Nanoseconds => nanoseconds(n),
        Reads::Seconds => nanoseconds(n * 1e9),
        Reads::PerSecond(unit) => format!("{} {unit}/s", si(n)),
    }
}

/// A field the page does not know: whole numbers thousands separated, others to a few
/// significant digits, text as written.
fn show_unknown(value: &Value) -> String {
    let whole = match value {
        Value::Number(n) => n.as_u64().map(u128::from),
        Value::String(s) => s.parse::<u128>().ok(),
        _ => None,
    };
    match (whole, value) {
        (Some(n), _) => grouped(n),
        (None, Value::Number(n)) => n
            .as_f64()
            .map_or_else(|| n.to_string(), |f| significant(f, DIGITS)),
        (None, Value::String(s)) => s.clone(),
        (None, other) => other.to_string(),
    }
}

fn trace_charts(page: &mut Page, trace: &Trace) {
    page.paragraph(&format!(
        "{}; {} lines of other types skipped; {} lines unreadable.",
        counted(trace.scenarios.len() as u64, "scenario"),
        grouped(trace.skipped_lines as u64),
        grouped(trace.malformed_lines as u64)
    ));
    match trace.busiest() {
        Some(scenario) => {
            let windows = scenario.permits_per_window();
            let over: Vec<u64> = windows
                .iter()
                .filter(|&&(_, count)| count > scenario.limit)
                .map(|&(index, _)| index)
                .collect();
            page.paragraph(&format!(
                "Scenario {} (the one with the most permits): {} permits in {} windows; {} windows over the limit of {}{}.",
                esc(&scenario.id),
                grouped(scenario.permits.len() as u64),
                grouped(windows.len() as u64),
                grouped(over.len() as u64),
                grouped(scenario.limit),
                over.first()
                    .map_or_else(String::new, |first| format!(" (first: window {first})"))
            ));
            page.chart(
                "permits-per-window.svg",
                charts::permits_per_window(scenario),
            );
            page.chart(
                "permits-near-boundaries.svg",
                charts::permits_near_boundaries(scenario),
            );
        }
        None => page.missing("permits per window: the trace has no scenario with permits"),
    }
    let waiting: Vec<_> = trace.waiting_calls().collect();
    if waiting.is_empty() {
        page.missing("wait times: the trace has no call with a non-zero max_wait");
        return;
    }
    let over = waiting
        .iter()
        .filter(|c| c.waited_ns() > c.max_wait_ns)
        .count();
    page.paragraph(&format!(
        "{} calls could wait; {} took longer than their max_wait.",
        grouped(waiting.len() as u64),
        grouped(over as u64)
    ));
    page.chart(
        "wait-times.svg",
        charts::wait_histogram(waiting.iter().copied()),
    );
}
