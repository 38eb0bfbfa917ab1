//! The shared limiter on a Redis Cluster against envoy's pattern on the same cluster, with
//! both on one node beside them: 16 tasks over 1,000 keys, each ratio within the run.

use crate::bench_results::BenchResults;
use crate::bench_runs::{BenchRun, BenchRuns};
use crate::numbers::{nanoseconds, ratio, si};
use crate::page::table::{Table, TableCell};
use crate::page::{Page, provenance};
use crate::targets::CLUSTER_CALLERS;

/// The group of the `redis_cluster` bench.
const GROUP: &str = "redis-cluster-permit";

/// The servers, as the benchmark ids name them, with what each is.
const SERVERS: [(&str, &str); 2] = [
    ("cluster", "Redis Cluster (3 primaries, 3 replicas)"),
    ("node", "one redis-server"),
];

pub fn section(page: &mut Page, run: &BenchRun, runs: &BenchRuns) {
    page.heading(3, "On a Redis Cluster");
    page.provenance(&provenance::run(run, runs));
    page.smoke(run);
    page.paragraph(
        "The shared limiter on a local Redis Cluster the bench starts (three primaries, each \
         with a replica), against envoy's pattern (<code>INCRBY</code> and <code>EXPIRE</code> \
         pipelined on <code>envoy:{&lt;key&gt;}:&lt;window&gt;</code>, one slot per key) over \
         redis-rs's async cluster connection, and both on one <code>redis-server</code> \
         beside them (<code>benches/benches/redis_cluster.rs</code>). 16 tasks attempt \
         together, each cycling through its share of 1,000 keys, every window begun and far \
         from full. Times are wall time per attempt with every task together; each ratio is \
         ours over envoy's within this run.",
    );
    let mut table = Table::new([
        "server",
        "shared limiter",
        "envoy's pattern",
        "shared, attempts per second",
        "envoy, attempts per second",
        "shared / envoy (time)",
    ]);
    for (server, about) in SERVERS {
        let (Some(shared), Some(envoy)) = (
            median(&run.results, "shared", server),
            median(&run.results, "envoy", server),
        ) else {
            table.row([
                TableCell::text(about),
                TableCell::text("not measured").class("missing").span(5),
            ]);
            continue;
        };
        table.row([
            TableCell::text(about),
            TableCell::text(nanoseconds(shared)),
            TableCell::text(nanoseconds(envoy)),
            TableCell::text(si(1e9 / shared)),
            TableCell::text(si(1e9 / envoy)),
            TableCell::text(ratio(shared / envoy)),
        ]);
    }
    page.table(&table);
}

/// criterion's median time per attempt of `pattern` on `server`, in nanoseconds.
fn median(results: &BenchResults, pattern: &str, server: &str) -> Option<f64> {
    results
        .get_with(GROUP, &format!("{pattern}/{server}"), CLUSTER_CALLERS)
        .map(|m| m.median_ns)
}
