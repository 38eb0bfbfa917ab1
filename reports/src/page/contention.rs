//! Contention: ns per attempt and throughput against threads, and lost compare-and-set races.

use crate::bench_results::{BenchResults, Measurement};
use crate::bench_runs::{BenchRun, BenchRuns};
use crate::cas_retries::CasRetries;
use crate::charts::{self, Series};
use crate::numbers::{DIGITS, grouped, significant};
use crate::page::table::Table;
use crate::page::{Page, provenance};

/// The groups charted, with what each measures.
const GROUPS: [(&str, &str); 2] = [
    (
        "contention-permit",
        "threads taking permits from one limiter",
    ),
    (
        "contention-rejection",
        "threads hitting one used-up limiter",
    ),
];

pub fn section(page: &mut Page, run: &BenchRun, runs: &BenchRuns) {
    page.heading(2, "Contention");
    page.provenance(&provenance::run(run, runs));
    page.smoke(run);
    page.paragraph(&format!(
        "Each thread makes one attempt per round; ns per attempt is the time of one round, \
         throughput counts every thread's attempts. {}",
        cores_sentence(run)
    ));
    for (group, about) in GROUPS {
        let series = thread_series(&run.results, group, |m| m.median_ns);
        if series.is_empty() {
            page.missing(&format!("{group}: not measured"));
            continue;
        }
        page.chart(
            &format!("{group}-ns.svg"),
            charts::lines(
                &format!("ns per attempt: {about}"),
                "threads",
                "ns per attempt",
                &series,
            ),
        );
        let throughput = thread_series(&run.results, group, Measurement::per_second);
        page.chart(
            &format!("{group}-throughput.svg"),
            charts::lines(
                &format!("throughput: {about}"),
                "threads",
                "attempts per second",
                &throughput,
            ),
        );
    }
    retries(page, runs);
}

/// How the thread counts measured compare with the machine's cores, as its manifest says.
fn cores_sentence(run: &BenchRun) -> String {
    let Some(cores) = run.manifest.as_ref().and_then(|m| m.cores) else {
        return "How many cores the machine measured had was not recorded.".to_owned();
    };
    let mut threads: Vec<usize> = GROUPS
        .iter()
        .flat_map(|(group, _)| run.results.group(group))
        .filter_map(|m| m.parameter.as_deref()?.parse().ok())
        .filter(|&threads| threads > cores)
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let over: Vec<String> = threads.iter().map(usize::to_string).collect();
    match over.as_slice() {
        [] => format!("The machine measured had {cores} cores; no thread count exceeds them."),
        [one] => {
            format!("The machine measured had {cores} cores, so {one} threads oversubscribe it.")
        }
        [first @ .., last] => format!(
            "The machine measured had {cores} cores, so {} and {last} threads oversubscribe it.",
            first.join(", ")
        ),
    }
}

fn retries(page: &mut Page, runs: &BenchRuns) {
    page.heading(3, "CAS retries per attempt");
    let Some((run, counts)) = runs.with_cas_retries() else {
        page.missing("CAS retries per attempt: no counts (see the missing inputs above)");
        return;
    };
    page.provenance(&format!(
        "{} The count was made at the end of that run.",
        provenance::run(run, runs)
    ));
    page.smoke(run);
    page.paragraph(&format!(
        "Ours only, with <code>Backoff::new({})</code>, counted by the limiter itself (feature \
         <code>stats</code>): every compare-and-set lost to another caller and retried. Neither \
         peer keeps such a count (the mutex has no compare-and-set to lose).",
        counts.backoff_spins
    ));
    page.table(&retries_table(counts));
    let series = [Series {
        name: format!("ours (Backoff::new({}))", counts.backoff_spins),
        points: counts
            .per_attempt()
            .into_iter()
            .map(|(threads, ratio)| (f64::from(threads), ratio))
            .collect(),
    }];
    page.chart(
        "cas-retries.svg",
        charts::lines(
            "CAS retries per attempt",
            "threads",
            "retries per attempt",
            &series,
        ),
    );
}

fn retries_table(counts: &CasRetries) -> Table {
    let mut table = Table::new(["threads", "attempts", "retries", "retries per attempt"]);
    let per_attempt = counts.per_attempt();
    for p in &counts.points {
        let ratio = per_attempt
            .iter()
            .find(|(threads, _)| *threads == p.threads)
            .map_or_else(|| "–".to_owned(), |(_, r)| significant(*r, DIGITS));
        table.row([
            p.threads.to_string(),
            grouped(p.attempts),
            grouped(p.retries),
            ratio,
        ]);
    }
    table
}

/// One series per function of `group`: (threads, `y`) for each thread count measured.
fn thread_series(
    results: &BenchResults,
    group: &str,
    y: impl Fn(&Measurement) -> f64,
) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for m in results.group(group) {
        let Some(threads) = m.parameter.as_deref().and_then(|p| p.parse::<f64>().ok()) else {
            continue;
        };
        let point = (threads, y(m));
        match series.iter_mut().find(|s| s.name == m.function) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name: m.function.clone(),
                points: vec![point],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}
