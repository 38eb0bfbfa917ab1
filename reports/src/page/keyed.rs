//! The keyed limiter beside governor's keyed limiter and a `Mutex<HashMap>` window: one thread
//! on keys already held over populations of keys, threads contending on them, and memory.

use crate::bench_results::{BenchResults, Measurement};
use crate::bench_runs::{BenchRun, BenchRuns};
use crate::charts::{self, Series};
use crate::keyed_memory::{KeyedMemory, LIVE_WINDOW};
use crate::numbers::{DIGITS, grouped, nanoseconds, ratio, si, significant};
use crate::page::table::{Table, TableCell};
use crate::page::{Page, provenance};

/// The single-threaded groups, with what each measures.
const PATHS: [(&str, &str); 2] = [
    ("keyed-permit", "a try_acquire that succeeds"),
    ("keyed-rejection", "a try_acquire on a used-up key"),
];

/// The contention groups, with what each measures.
const CONTENTION: [(&str, &str); 2] = [
    (
        "keyed-contention-permit",
        "threads taking permits over the keys",
    ),
    ("keyed-contention-rejection", "threads hitting used-up keys"),
];

/// The peer every single-threaded figure is compared with.
const PEER: &str = "governor-default";

/// The population the contention charts show: the targets'.
const CHARTED_KEYS: u64 = 1_000;

pub fn section(page: &mut Page, run: &BenchRun, runs: &BenchRuns) {
    page.heading(2, "Keyed limiter");
    page.provenance(&provenance::run(run, runs));
    page.smoke(run);
    page.paragraph(
        "<code>KeyedRateLimiter</code> (<code>ours-system</code>: its default <code>KeyHasher</code>, \
         foldhash seeded per limiter; <code>ours-siphash</code>: std's SipHash, for keys an \
         attacker may time; <code>ours-ahash</code>: ahash) \
         beside governor's keyed limiter (<code>DefaultKeyedRateLimiter</code>, a dashmap) and a \
         <code>Mutex&lt;HashMap&gt;</code> window (<code>mutex-system</code>), every call on a \
         key the limiter already holds (<code>benches/benches/keyed.rs</code>).",
    );
    paths(page, &run.results);
    contention(page, &run.results);
    memory(page, runs);
}

/// One thread: ns per call for each limiter and population, and its ratio to governor's.
fn paths(page: &mut Page, results: &BenchResults) {
    page.heading(3, "One thread, keys already held");
    page.paragraph(
        "Median ns per call in the benchmark thread's CPU time, and in brackets the ratio to \
         governor's keyed limiter on the same population.",
    );
    for (group, about) in PATHS {
        let rows: Vec<&Measurement> = results.group(group).collect();
        if rows.is_empty() {
            page.missing(&format!("{group}: not measured"));
            continue;
        }
        let populations = parameters(&rows);
        let mut table = Table::new(
            [format!("{group}: {about}")]
                .into_iter()
                .chain(populations.iter().map(|keys| keys_label(keys))),
        );
        for function in functions(&rows) {
            let cells = populations.iter().map(|keys| {
                let Some(m) = results.get_with(group, &function, keys) else {
                    return TableCell::text("–");
                };
                let against = results
                    .get_with(group, PEER, keys)
                    .filter(|_| function != PEER)
                    .map_or_else(String::new, |peer| {
                        format!(" ({})", ratio(m.median_ns / peer.median_ns))
                    });
                TableCell::text(format!("{}{against}", nanoseconds(m.median_ns)))
            });
            table.row(std::iter::once(TableCell::text(&function)).chain(cells));
        }
        page.table(&table);
    }
}

/// Threads contending: throughput charts on the targets' population, and a table of every
/// population.
fn contention(page: &mut Page, results: &BenchResults) {
    page.heading(3, "Contention");
    page.paragraph(
        "Each thread makes one call per round on its own sequence of keys; throughput counts \
         every thread's calls (wall time).",
    );
    for (group, about) in CONTENTION {
        let rows: Vec<&Measurement> = results.group(group).collect();
        if rows.is_empty() {
            page.missing(&format!("{group}: not measured"));
            continue;
        }
        let series = thread_series(&rows, CHARTED_KEYS);
        if series.is_empty() {
            page.missing(&format!(
                "{group}: not measured on {} keys",
                grouped(CHARTED_KEYS)
            ));
        } else {
            page.chart(
                &format!("{group}-throughput.svg"),
                charts::lines(
                    &format!("keyed, {} keys: {about}", grouped(CHARTED_KEYS)),
                    "threads",
                    "calls per second",
                    &series,
                ),
            );
        }
        page.table(&contention_table(group, &rows));
    }
}

/// Calls per second by limiter and population (rows) and threads (columns).
fn contention_table(group: &str, rows: &[&Measurement]) -> Table {
    let mut threads: Vec<u32> = rows
        .iter()
        .filter_map(|m| m.parameter.as_deref()?.parse().ok())
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let mut table = Table::new(
        [format!("{group}: calls per second"), "keys".to_owned()]
            .into_iter()
            .chain(
                threads
                    .iter()
                    .map(|t| format!("{t} thread{}", if *t == 1 { "" } else { "s" })),
            ),
    );
    for function in functions(rows) {
        let Some((limiter, keys)) = split_population(&function) else {
            continue;
        };
        let cells = threads.iter().map(|t| {
            rows.iter()
                .find(|m| m.function == function && m.parameter.as_deref() == Some(&t.to_string()))
                .map_or_else(|| "–".to_owned(), |m| si(m.per_second()))
        });
        table.row([limiter.to_owned(), grouped(keys)].into_iter().chain(cells));
    }
    table
}

/// Memory: bytes per live key, and bytes held after the churn, from the first run that
/// counted them.
fn memory(page: &mut Page, runs: &BenchRuns) {
    page.heading(3, "Memory");
    let Some((run, memory)) = runs.with_keyed_memory() else {
        page.missing("keyed memory: not counted (see the missing inputs above)");
        return;
    };
    page.provenance(&format!(
        "{} The memory was counted at the end of that run by the <code>keyed_memory</code> \
         example (<code>benches/examples/keyed_memory.rs</code>), with a counting allocator: \
         net bytes still allocated, the limiter alive, {} permits per key per window.",
        provenance::run(run, runs),
        memory.limit
    ));
    page.smoke(run);
    let mut table = Table::new([
        "limiter",
        "keys called",
        "bytes held",
        "keys held",
        "bytes per key",
    ]);
    for live in &memory.per_live_key {
        table.row([
            live.limiter.clone(),
            grouped(live.keys),
            grouped_signed(live.bytes),
            grouped(live.held),
            significant(per(live.bytes, live.keys), DIGITS),
        ]);
    }
    page.table(&table);
    churn(page, memory);
}

/// Bytes held after the churn, each beside ours holding one window's keys only.
fn churn(page: &mut Page, memory: &KeyedMemory) {
    let churn = &memory.churn;
    page.paragraph(&format!(
        "After {} distinct keys, {} fresh keys a window, each called in one window only ({} \
         windows): what each limiter holds at the end, against ours holding the last window's \
         keys alone.",
        grouped(churn.keys),
        grouped(churn.per_window),
        grouped(churn.windows)
    ));
    let live = memory.after_churn(LIVE_WINDOW).map(|h| h.bytes);
    let mut table = Table::new([
        "limiter",
        "bytes held",
        "keys held",
        "bytes per live key",
        "× one window's keys",
    ]);
    for held in &churn.results {
        let times = live.filter(|&bytes| bytes > 0).map_or_else(
            || "–".to_owned(),
            |live| ratio(per(held.bytes, live.unsigned_abs())),
        );
        table.row([
            TableCell::text(churned_name(&held.limiter)),
            TableCell::text(grouped_signed(held.bytes)),
            TableCell::text(grouped(held.held)),
            TableCell::text(significant(per(held.bytes, churn.per_window), DIGITS)),
            TableCell::text(times),
        ]);
    }
    page.table(&table);
}

/// How each row of the churn was run, in words.
fn churned_name(limiter: &str) -> String {
    match limiter {
        LIVE_WINDOW => "ours, one window's keys only (the bound)".to_owned(),
        "ours" => "ours, reclaiming ended keys as it is used".to_owned(),
        "governor" => "governor, retain_recent() never called".to_owned(),
        "governor-retain-recent" => "governor, retain_recent() at every window".to_owned(),
        "mutex" => "mutex map, cleared at every window".to_owned(),
        other => other.to_owned(),
    }
}

/// `bytes / count`; bytes and counts far below 2^52, exact in f64.
#[allow(clippy::cast_precision_loss)]
fn per(bytes: i64, count: u64) -> f64 {
    bytes as f64 / count.max(1) as f64
}

/// A byte count that may be negative (frees outnumbering allocations), grouped.
fn grouped_signed(bytes: i64) -> String {
    let sign = if bytes < 0 { "-" } else { "" };
    format!("{sign}{}", grouped(bytes.unsigned_abs()))
}

/// The functions of `rows`, each once: ours on std's hasher first, then ours on the others,
/// governor's, the mutex map's, anything else; by name within each.
fn functions(rows: &[&Measurement]) -> Vec<String> {
    let mut functions: Vec<String> = Vec::new();
    for m in rows {
        if !functions.contains(&m.function) {
            functions.push(m.function.clone());
        }
    }
    let rank = |function: &str| {
        ["ours-system", "ours", "governor", "mutex"]
            .iter()
            .position(|prefix| function.starts_with(prefix))
            .unwrap_or(4)
    };
    functions.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    functions
}

/// The parameters of `rows`, each once, in numeric order.
fn parameters(rows: &[&Measurement]) -> Vec<String> {
    let mut parameters: Vec<String> = Vec::new();
    for p in rows.iter().filter_map(|m| m.parameter.as_ref()) {
        if !parameters.contains(p) {
            parameters.push(p.clone());
        }
    }
    parameters.sort_by_key(|p| p.parse::<u64>().unwrap_or(u64::MAX));
    parameters
}

/// `1 key`, `1,000 keys`.
fn keys_label(keys: &str) -> String {
    match keys.parse::<u64>() {
        Ok(1) => "1 key".to_owned(),
        Ok(n) => format!("{} keys", grouped(n)),
        Err(_) => keys.to_owned(),
    }
}

/// `ours-system/1000-keys` as (`ours-system`, 1000).
fn split_population(function: &str) -> Option<(&str, u64)> {
    let (limiter, keys) = function.rsplit_once('/')?;
    Some((limiter, keys.strip_suffix("-keys")?.parse().ok()?))
}

/// One series per limiter measured on `keys` keys: (threads, calls per second).
fn thread_series(rows: &[&Measurement], keys: u64) -> Vec<Series> {
    let suffix = format!("/{keys}-keys");
    let mut series: Vec<Series> = Vec::new();
    for m in rows {
        let Some(limiter) = m.function.strip_suffix(&suffix) else {
            continue;
        };
        let Some(threads) = m.parameter.as_deref().and_then(|p| p.parse::<f64>().ok()) else {
            continue;
        };
        let point = (threads, m.per_second());
        match series.iter_mut().find(|s| s.name == limiter) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name: limiter.to_owned(),
                points: vec![point],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}
