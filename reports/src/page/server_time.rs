//! The Redis server's own time per decision: the shared limiter's script against envoy's
//! `INCRBY` + `EXPIRE`, on a window that has begun and on a fresh key, with the target on the
//! former.

use crate::bench_runs::BenchRuns;
use crate::numbers::{DIGITS, grouped, ratio, significant};
use crate::page::table::{Table, TableCell};
use crate::page::targets as page_targets;
use crate::page::{Page, provenance};
use crate::server_time::ServerTime;
use crate::targets::{self, Measure};
use html_escape::encode_text as esc;

/// The windows measured, as the example names them, with what each is.
const WINDOWS: [(&str, &str); 2] = [
    ("begun", "a window that has begun"),
    ("fresh", "a fresh key (each decision begins a window)"),
];

pub fn section(page: &mut Page, runs: &BenchRuns) {
    page.heading(3, "Server time per decision");
    let Some((run, time)) = runs.with_server_time() else {
        page.missing("the server's time per decision: not measured (see the missing inputs above)");
        return;
    };
    page.provenance(&format!(
        "{} After it, the <code>redis_server_time</code> example made {} decisions of each \
         kind from {} clients at once on a fresh <code>redis-server</code> {}, clearing the \
         command statistics (<code>CONFIG RESETSTAT</code>) before each kind and reading \
         <code>INFO commandstats</code> and <code>INFO cpu</code> after it.",
        provenance::run(run, runs),
        grouped(time.decisions),
        time.clients,
        esc(&time.redis_version),
    ));
    page.smoke(run);
    page.paragraph(
        "What one decision costs the server itself, whatever the network: the microseconds \
         the server counts running the decision's commands (<code>EVALSHA</code> of the \
         script; <code>INCRBY</code> and <code>EXPIRE</code> for envoy's pattern), over the \
         decisions, and the server's CPU time (user and system) per million decisions, which \
         adds reading the requests and writing the replies. The script's extra time is the \
         price of deciding on the server (the window's start, the limit, the remaining \
         permits and the time to wait) where envoy's pattern only counts.",
    );
    let mut table = Table::new([
        "window",
        "shared, µs per decision",
        "envoy, µs per decision",
        "shared / envoy",
        "shared, CPU s per million",
        "envoy, CPU s per million",
        "target",
        "verdict",
    ]);
    for (window, about) in WINDOWS {
        let shared = time.kinds.get(&format!("shared/{window}"));
        let envoy = time.kinds.get(&format!("envoy/{window}"));
        let (Some(shared), Some(envoy)) = (shared, envoy) else {
            table.row([
                TableCell::text(about),
                TableCell::text("not measured").class("missing").span(7),
            ]);
            continue;
        };
        let over = shared.server_us_per_decision / envoy.server_us_per_decision;
        let (bound, verdict) = verdict(runs, window);
        table.row([
            TableCell::text(about),
            TableCell::text(microseconds(shared.server_us_per_decision)),
            TableCell::text(microseconds(envoy.server_us_per_decision)),
            TableCell::text(ratio(over)),
            TableCell::text(significant(shared.cpu_s_per_million_decisions, DIGITS)),
            TableCell::text(significant(envoy.cpu_s_per_million_decisions, DIGITS)),
            TableCell::text(bound),
            verdict,
        ]);
    }
    page.table(&table);
    commands(page, time);
}

/// The target on `window` and the verdict on it, as the targets table gives them (none from
/// a quick or unrecorded run); a reference without a target.
fn verdict(runs: &BenchRuns, window: &'static str) -> (String, TableCell) {
    let checked = targets::check(runs)
        .into_iter()
        .find(|c| c.target.is_target && c.target.measure == Measure::ServerTime(window));
    match checked {
        Some(checked) => (
            checked.target.bound(),
            page_targets::verdict(checked.verdict, checked.per_run.len()),
        ),
        None => ("–".to_owned(), TableCell::text("reference")),
    }
}

/// Each command's line of `INFO commandstats`, per kind.
fn commands(page: &mut Page, time: &ServerTime) {
    let mut table = Table::new(["kind", "command", "calls", "µs", "µs per call"]);
    for (kind, decisions) in &time.kinds {
        for (command, stats) in &decisions.commands {
            table.row([
                TableCell::html(format!("<code>{}</code>", esc(kind))),
                TableCell::html(format!("<code>{}</code>", esc(command))),
                TableCell::text(significant(stats.calls, DIGITS)),
                TableCell::text(significant(stats.usec, DIGITS)),
                TableCell::text(significant(stats.usec_per_call, DIGITS)),
            ]);
        }
    }
    page.table(&table);
}

fn microseconds(us: f64) -> String {
    format!("{} µs", significant(us, DIGITS))
}
