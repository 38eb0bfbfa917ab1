//! The `Backoff` sweep: ns per attempt for each spin setting and thread count, and what the
//! data says of the default.

use html_escape::encode_text as esc;

use crate::bench_runs::{BenchRun, BenchRuns};
use crate::charts;
use crate::numbers::{DIGITS, significant};
use crate::page::table::{Table, TableCell};
use crate::page::{Page, provenance};
use crate::sweep::{NOISE, Recommendation, Sweep, label};

pub fn section(page: &mut Page, run: &BenchRun, runs: &BenchRuns) {
    page.heading(2, "Backoff sweep");
    let sweep = Sweep::from_results(&run.results);
    let Some(recommendation) = sweep.recommend() else {
        page.missing("backoff-sweep: not measured");
        return;
    };
    page.provenance(&provenance::run(run, runs));
    page.smoke(run);
    page.chart("backoff-sweep.svg", charts::sweep_heatmap(&sweep));
    page.table(&grid(&sweep, &recommendation));
    let default = fixed_window::Backoff::SPIN_LIMIT;
    let verdict = if run.is_quick() {
        "Smoke data: no recommendation.".to_owned()
    } else if recommendation.best == Some(default) {
        format!("The data says: keep the default ({default} spins); it scores best.")
    } else if recommendation.change_default() {
        format!(
            "The data says: change the default from {default} to {} spins.",
            label(recommendation.best)
        )
    } else {
        format!(
            "The data says: keep the default ({default} spins); the best setting does not beat \
             it clearly enough (by more than {} % in score, with confidence intervals apart at \
             half the thread counts or more and behind at none).",
            significant((NOISE - 1.0) * 100.0, 2)
        )
    };
    page.paragraph(&format!(
        "Score: the geometric mean over thread counts of each setting's time relative to the \
         fastest at that count (1 = fastest everywhere). Best <code>Backoff::new({})</code> \
         (score {}); the default <code>Backoff::SPIN_LIMIT</code> = {default} scores {}. The \
         best is faster than the default, with 95 % confidence intervals apart, at {} threads, \
         and slower at {}. <strong>{}</strong>",
        recommendation
            .best
            .map_or_else(|| "u32::MAX".to_owned(), |n| n.to_string()),
        significant(recommendation.best_score(), DIGITS),
        recommendation
            .default_score
            .map_or_else(|| "(not measured)".to_owned(), |v| significant(v, DIGITS)),
        threads_list(&recommendation.faster_at),
        threads_list(&recommendation.slower_at),
        esc(&verdict)
    ));
}

/// ns per attempt by thread count (rows) and spin setting (columns), the fastest of each row
/// marked, and each setting's score below.
fn grid(sweep: &Sweep, recommendation: &Recommendation) -> Table {
    let mut table = Table::new(
        std::iter::once("threads \\ spins".to_owned()).chain(sweep.spins.iter().map(|&s| label(s))),
    );
    for &threads in &sweep.threads {
        let best = sweep.best_at(threads);
        let cells = sweep
            .spins
            .iter()
            .map(|&spins| match sweep.get(spins, threads) {
                Some(v) if Some(v) == best => TableCell::text(significant(v, DIGITS)).class("best"),
                Some(v) => TableCell::text(significant(v, DIGITS)),
                None => TableCell::text("–"),
            });
        table.row(std::iter::once(TableCell::text(threads.to_string())).chain(cells));
    }
    let scores = sweep.spins.iter().map(|&spins| {
        recommendation
            .scores
            .iter()
            .find(|(s, _)| *s == spins)
            .map_or_else(|| "–".to_owned(), |(_, score)| significant(*score, DIGITS))
    });
    table.row(std::iter::once("score".to_owned()).chain(scores));
    table
}

fn threads_list(list: &[u32]) -> String {
    if list.is_empty() {
        "none".to_owned()
    } else {
        list.iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}
