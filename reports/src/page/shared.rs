//! The shared limiter (`fixed-window-redis`) on a local Redis, beside envoy's pattern, the
//! naive one and the in-process limiter: throughput, percentiles, commands per attempt, and
//! rejections decided locally against those that cost a round trip.

use crate::bench_results::BenchResults;
use crate::bench_runs::{BenchRun, BenchRuns};
use crate::charts::{self, REDIS_PERMIT_GROUP};
use crate::numbers::{DIGITS, grouped, nanoseconds, ratio, si, significant};
use crate::page::table::{Table, TableCell};
use crate::page::{Page, provenance};
use crate::redis_latency::RedisLatency;
use crate::sim_summary::SimSummary;
use html_escape::encode_text as esc;

/// The group of rejections of a full window.
const REJECTION_GROUP: &str = "redis-rejection";

/// The benchmarks in the order the table lists them, with what each is.
const ROWS: [(&str, &str); 10] = [
    ("redis-permit/shared/1-task", "shared limiter, 1 task"),
    ("redis-permit/envoy/1-task", "envoy's pattern, 1 task"),
    ("redis-permit/naive/1-task", "naive pattern, 1 task"),
    ("redis-permit/shared/16-tasks", "shared limiter, 16 tasks"),
    ("redis-permit/envoy/16-tasks", "envoy's pattern, 16 tasks"),
    ("redis-permit/naive/16-tasks", "naive pattern, 16 tasks"),
    (
        "redis-permit/shared/4-threads",
        "shared limiter, 4 threads (blocking)",
    ),
    (
        "redis-permit/in-process/1-task",
        "in-process limiter, 1 task",
    ),
    (
        "redis-rejection/local/1-task",
        "rejection of a window known full (local)",
    ),
    (
        "redis-rejection/round-trip/1-task",
        "rejection by the server (round trip)",
    ),
];

pub fn section(page: &mut Page, run: &BenchRun, runs: &BenchRuns) {
    page.heading(2, "Shared limiter (Redis)");
    page.provenance(&provenance::run(run, runs));
    page.smoke(run);
    page.paragraph(
        "<code>SharedRateLimiter</code> against a <code>redis-server</code> the bench starts \
         on loopback (persistence off), beside envoy's pattern (<code>INCRBY</code> and \
         <code>EXPIRE</code> pipelined), the naive one (<code>INCR</code>, then \
         <code>EXPIRE</code> on the first hit) and the in-process limiter \
         (<code>benches/benches/redis.rs</code>). Times are wall time per attempt with every \
         caller together, so their inverse is the callers' throughput; tasks share one \
         connection.",
    );
    if run.results.group(REDIS_PERMIT_GROUP).next().is_some() {
        page.chart(
            "shared-limiter-throughput.svg",
            charts::shared_limiter_throughput(&run.results),
        );
    } else {
        page.missing(&format!("{REDIS_PERMIT_GROUP}: not measured"));
    }
    latency(page, runs);
    rejections(page, &run.results);
}

/// Percentiles and commands per attempt, from the first run that kept them, beside that
/// run's criterion medians.
fn latency(page: &mut Page, runs: &BenchRuns) {
    page.heading(3, "Latency and commands per attempt");
    let Some((run, latency)) = runs.with_redis_latency() else {
        page.missing("the shared limiter's percentiles: none kept (see the missing inputs above)");
        return;
    };
    page.provenance(&format!(
        "{} The bench timed every attempt of that run on its own and wrote the percentiles as \
         it ended; after the timed benchmarks it made {} more attempts of each network \
         benchmark one at a time, counting with <code>MONITOR</code> the commands the clients \
         sent (those a script runs inside the server not counted).",
        provenance::run(run, runs),
        counted_attempts(latency).map_or_else(|| "a few".to_owned(), grouped)
    ));
    page.smoke(run);
    page.paragraph(
        "The median per attempt is criterion's: wall time over every attempt of all callers \
         together. p50 and p99 are of each attempt's own duration: with 16 callers on one \
         connection, an attempt waits behind the others, so its own time exceeds the time per \
         attempt of them all. A pipeline's commands share one round trip (envoy's two).",
    );
    if latency.is_empty() {
        page.missing("the shared limiter's percentiles: the run kept an empty file");
        return;
    }
    let mut table = Table::new([
        "benchmark",
        "median per attempt",
        "attempts per second",
        "p50",
        "p99",
        "p99 / p50",
        "commands per attempt",
        "attempts timed",
    ]);
    let listed = ROWS.iter().map(|&(id, about)| (id.to_owned(), about));
    let others = latency
        .benchmarks
        .keys()
        .filter(|id| ROWS.iter().all(|(listed, _)| listed != id))
        .map(|id| (id.clone(), ""));
    for (id, about) in listed.chain(others) {
        let Some(attempts) = latency.get(&id) else {
            continue;
        };
        let name = TableCell::html(format!("<code>{id}</code>")).title(about);
        let criterion = run.results.iter().find(|m| m.id() == id);
        // Nanoseconds below 2^52: exact in f64.
        #[allow(clippy::cast_precision_loss)]
        let (p50, p99) = (attempts.p50_ns as f64, attempts.p99_ns as f64);
        table.row([
            name,
            TableCell::text(criterion.map_or_else(|| "–".to_owned(), |m| nanoseconds(m.median_ns))),
            TableCell::text(criterion.map_or_else(|| "–".to_owned(), |m| si(m.per_second()))),
            TableCell::text(nanoseconds(p50)),
            TableCell::text(nanoseconds(p99)),
            TableCell::text(if p50 > 0.0 {
                ratio(p99 / p50)
            } else {
                "–".to_owned()
            }),
            TableCell::text(
                attempts
                    .commands_per_attempt()
                    .map_or_else(|| "–".to_owned(), |c| significant(c, DIGITS)),
            ),
            TableCell::text(grouped(attempts.samples)),
        ]);
    }
    page.table(&table);
}

/// The attempts each count watched, if every count says the same.
fn counted_attempts(latency: &RedisLatency) -> Option<u64> {
    let mut counts = latency
        .benchmarks
        .values()
        .filter_map(|a| a.counted_attempts);
    let first = counts.next()?;
    counts.all(|n| n == first).then_some(first)
}

/// A local rejection against one by round trip, and against a permitted round trip.
fn rejections(page: &mut Page, results: &BenchResults) {
    page.heading(3, "Rejections without a round trip");
    let local = results.get_with(REJECTION_GROUP, "local", "1-task");
    let remote = results.get_with(REJECTION_GROUP, "round-trip", "1-task");
    let (Some(local), Some(remote)) = (local, remote) else {
        page.missing(&format!(
            "{REJECTION_GROUP}: local and round-trip rejections not both measured"
        ));
        return;
    };
    let permitted = results
        .get_with(REDIS_PERMIT_GROUP, "shared", "1-task")
        .map_or_else(String::new, |permit| {
            format!(
                " A permitted attempt, one round trip, took {} ({} the local rejection's time).",
                nanoseconds(permit.median_ns),
                ratio(permit.median_ns / local.median_ns)
            )
        });
    page.paragraph(&format!(
        "A process that has seen a key's window full rejects it itself until the window can \
         have ended. Such a local rejection took {}; the same rejection decided by the server \
         (local memory off) took {}: the local one is {} faster (target: at least 100×, in the \
         targets table).{permitted}",
        nanoseconds(local.median_ns),
        nanoseconds(remote.median_ns),
        ratio(remote.median_ns / local.median_ns)
    ));
}

/// The shared limiter's simulated sweep: what it injected and what it found, with the command
/// that ran it.
pub fn simulated(page: &mut Page, summary: Option<&SimSummary>) {
    page.heading(3, "Shared limiter under simulated faults");
    let Some(summary) = summary else {
        // Named among the missing inputs already.
        page.html(
            "<p class=\"missing\">No shared-limiter sweep: run <code>cargo xtask simulate --limiter shared</code>.</p>",
        );
        return;
    };
    let field = |name: &str| {
        summary
            .fields
            .iter()
            .find(|(key, _)| key == name)
            .and_then(|(_, value)| value.as_u64())
    };
    let command = summary
        .sweep
        .as_ref()
        .and_then(|sweep| sweep.command.clone())
        .unwrap_or_else(|| "cargo xtask simulate --limiter shared".to_owned());
    let planted = summary
        .fields
        .iter()
        .find(|(key, _)| key == "planted")
        .and_then(|(_, value)| value.as_str().map(str::to_owned));
    page.provenance(&format!(
        "From <code>{}</code>{}: {} scenarios ({} healthy), {} simulated calls, {} scripts run \
         by the simulated Redis; the summary is <code>target/sim-shared/summary.json</code>.",
        esc(&command),
        planted.map_or_else(String::new, |p| format!(
            " with the planted bug <code>{}</code>",
            esc(&p)
        )),
        grouped(field("scenarios").unwrap_or(0)),
        grouped(field("healthy").unwrap_or(0)),
        grouped(field("calls").unwrap_or(0)),
        grouped(field("scripts").unwrap_or(0)),
    ));
    page.chart("shared-sweep.svg", charts::shared_sweep(summary));
}
