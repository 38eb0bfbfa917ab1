//! Where a section's figures came from, in words: when, by which command, in which mode.

use html_escape::encode_text as esc;

use crate::bench_runs::{BenchRun, BenchRuns, Mode, Scope, Source};
use crate::numbers::{counted, grouped, utc};
use crate::page::table::{Table, TableCell};
use crate::sweep_provenance::SweepProvenance;

/// What quick runs are, said once above the benchmark sections.
pub const SMOKE: &str = "Quick mode (<code>cargo xtask bench --quick</code> or CI's smoke run): \
    smoke data. A fraction of a second per benchmark shows that the benchmarks run; the figures \
    are noise, not measurements to judge by, and get no verdict.";

/// The reminder every section drawn from a quick run carries.
pub const SMOKE_SECTION: &str =
    "Quick mode: smoke data, not figures to judge by (see the benchmark runs above).";

/// One run's origin: `run 2 of 3 of <command>, full, started … ended …`.
pub fn run(run: &BenchRun, runs: &BenchRuns) -> String {
    let Some(m) = &run.manifest else {
        return unrecorded(runs);
    };
    format!(
        "Run {} of {} of <code>{}</code> ({}, {}), {} to {}{}.",
        m.run,
        m.runs,
        esc(&m.command),
        mode(m.mode),
        scope(m.scope),
        utc(m.started),
        utc(m.finished),
        m.cores.map_or_else(String::new, |cores| format!(
            ", on a machine with {cores} cores"
        )),
    )
}

/// The origin of all the runs: `runs 1–3 of <command>, from … to …`.
pub fn runs(runs: &BenchRuns) -> String {
    let manifests: Vec<_> = runs
        .runs
        .iter()
        .filter_map(|r| r.manifest.as_ref())
        .collect();
    let (Some(first), Some(last)) = (manifests.first(), manifests.last()) else {
        return unrecorded(runs);
    };
    let which = if first.run == last.run {
        format!("Run {}", first.run)
    } else {
        format!("Runs {}–{}", first.run, last.run)
    };
    format!(
        "{which} of {} of <code>{}</code>, {} to {}.",
        first.runs,
        esc(&first.command),
        utc(first.started),
        utc(last.finished)
    )
}

/// The origin of results nobody recorded.
pub fn unrecorded(runs: &BenchRuns) -> String {
    let written = match runs.source {
        Source::Unrecorded {
            written: Some((first, last)),
        } => format!(
            " Their files were written from {} to {}.",
            utc(first),
            utc(last)
        ),
        _ => String::new(),
    };
    format!(
        "criterion's latest result of each benchmark, recorded by no <code>cargo xtask bench</code>: \
         the command and run of each figure are unknown, and two figures may come from different \
         runs, even a quick one.{written} Run <code>cargo xtask bench</code> for figures that say \
         where they come from."
    )
}

/// Every run in a table: number, command, mode, benchmarks, start, end, cores, results.
pub fn runs_table(runs: &BenchRuns) -> Table {
    let mut table = Table::new([
        "run",
        "command",
        "mode",
        "benchmarks",
        "started",
        "ended",
        "cores",
        "results",
    ]);
    for run in &runs.runs {
        let Some(m) = &run.manifest else { continue };
        table.row([
            TableCell::text(format!("{} of {}", m.run, m.runs)),
            TableCell::html(format!("<code>{}</code>", esc(&m.command))),
            TableCell::text(mode(m.mode)).class(if m.mode == Mode::Quick { "miss" } else { "met" }),
            TableCell::text(scope(m.scope)),
            TableCell::text(utc(m.started)),
            TableCell::text(utc(m.finished)),
            TableCell::text(m.cores.map_or_else(|| "–".to_owned(), |c| c.to_string())),
            TableCell::text(grouped(run.results.len() as u64)),
        ]);
    }
    table
}

fn mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Full => "full",
        Mode::Quick => "quick: smoke data",
    }
}

fn scope(scope: Scope) -> &'static str {
    match scope {
        Scope::Every => "every benchmark",
        Scope::Targets => "the targets' benchmarks",
    }
}

/// A sweep's origin: its command, seed, scenarios, shard, limiter and start, as far as known.
pub fn sweep(what: &str, provenance: Option<&SweepProvenance>) -> String {
    let Some(p) = provenance else {
        return format!(
            "The {what} does not say which sweep wrote it (a replay's, or an older simulator's)."
        );
    };
    let mut facts = Vec::new();
    if let Some(seed) = p.seed {
        facts.push(format!("seed {seed}"));
    }
    if let Some(scenarios) = p.scenarios {
        facts.push(counted(scenarios, "scenario"));
    }
    if let Some(shard) = &p.shard {
        facts.push(format!("shard {}", esc(shard)));
    }
    if let Some(limiter) = &p.limiter {
        facts.push(format!("limiter: {}", esc(limiter)));
    }
    let command = p.command.as_ref().map_or_else(
        || "an unrecorded command".to_owned(),
        |c| format!("<code>{}</code>", esc(c)),
    );
    let started = p
        .started
        .map_or_else(String::new, |t| format!(", started {}", utc(t)));
    format!(
        "The {what} of the sweep {command} ({}){started}.",
        facts.join(", ")
    )
}
