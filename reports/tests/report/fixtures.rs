//! Paths to the shipped fixtures, a scratch directory per test, and benchmark runs built in
//! memory.

use std::path::PathBuf;

use fixed_window_reports::{
    BenchResults, BenchRun, BenchRuns, Inputs, Measurement, Mode, Paths, RunManifest, Scope, Source,
};

/// The fixtures directory.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The complete fixture inputs: three recorded runs of `cargo xtask bench` (the first of
/// every benchmark, with the retry counts, the shared limiter's percentiles and the keyed
/// memory; the others of the targets' benchmarks only, with their percentiles) and a small
/// simulator sweep.
pub fn complete() -> Paths {
    Paths {
        bench_runs: dir().join("bench-runs"),
        criterion: dir().join("criterion"),
        cas_retries: dir().join("cas-retries.json"),
        redis_latency: dir().join("redis-latency.json"),
        keyed_memory: dir().join("keyed-memory.json"),
        server_time: dir().join("redis-server-time.json"),
        sim: dir().join("sim"),
        mutants: dir().join("mutants"),
        mutant_notes: dir().join("mutants.md"),
    }
}

/// The fixture inputs without recorded runs: criterion's latest results, of unknown origin.
pub fn unrecorded() -> Paths {
    Paths {
        bench_runs: dir().join("no-such-directory"),
        ..complete()
    }
}

/// An empty scratch directory named for `test`, under the target directory.
pub fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// A measurement of `group/function` (with a thread count as `parameter`, if any).
pub fn measurement(group: &str, function: &str, parameter: Option<&str>, ns: f64) -> Measurement {
    Measurement {
        group: group.into(),
        function: function.into(),
        parameter: parameter.map(Into::into),
        median_ns: ns,
        interval_ns: (ns, ns),
        elements: parameter.and_then(|p| p.parse().ok()),
    }
}

/// Recorded runs of `mode`, one per entry of `each`: the measurements of that run.
pub fn runs(mode: Mode, each: &[Vec<Measurement>]) -> BenchRuns {
    let total = u32::try_from(each.len()).expect("a few runs");
    let runs = (1..=total)
        .zip(each)
        .map(|(run, measurements)| {
            let mut results = BenchResults::default();
            for m in measurements {
                results.insert(m.clone());
            }
            BenchRun {
                manifest: Some(RunManifest {
                    run,
                    runs: total,
                    command: "cargo xtask bench".into(),
                    mode,
                    scope: if run == 1 {
                        Scope::Every
                    } else {
                        Scope::Targets
                    },
                    criterion_args: Vec::new(),
                    started: 1_750_000_000 + u64::from(run) * 100,
                    finished: 1_750_000_090 + u64::from(run) * 100,
                    cores: Some(2),
                }),
                results,
                ..BenchRun::default()
            }
        })
        .collect();
    BenchRuns {
        runs,
        source: Source::Recorded("target/bench-runs".into()),
        skipped: Vec::new(),
    }
}

/// One run of `mode` per pair, in which ours and governor's permit path take the pair's ns.
pub fn permit_runs(mode: Mode, pairs: &[(f64, f64)]) -> BenchRuns {
    let each: Vec<Vec<Measurement>> = pairs
        .iter()
        .map(|&(ours, peer)| {
            vec![
                measurement("permit", "ours-system", None, ours),
                measurement("permit", "governor-default", None, peer),
            ]
        })
        .collect();
    runs(mode, &each)
}

/// The complete fixture runs.
pub fn complete_runs() -> BenchRuns {
    Inputs::gather(&complete()).bench.expect("the fixture runs")
}

/// `runs` without any result whose group starts with `prefix`.
pub fn without_groups(mut runs: BenchRuns, prefix: &str) -> BenchRuns {
    for run in &mut runs.runs {
        let mut kept = BenchResults::default();
        for m in run.results.iter().filter(|m| !m.group.starts_with(prefix)) {
            kept.insert(m.clone());
        }
        run.results = kept;
    }
    runs
}

/// The row of the table cell holding exactly `first` (its HTML), up to the row's end.
pub fn row<'a>(html: &'a str, first: &str) -> &'a str {
    let start = html
        .find(&format!(">{first}</td>"))
        .unwrap_or_else(|| panic!("no row for {first}"));
    let end = start + html[start..].find("</tr>").expect("the row's end");
    &html[start..end]
}

/// A scratch `bench-runs` whose run 1 has only the fixture's manifest, and `files` (name,
/// text) beside it.
pub fn bare_run(test: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = scratch(test);
    let run = dir.join("1");
    std::fs::create_dir_all(&run).expect("a run directory");
    std::fs::copy(
        self::dir().join("bench-runs/1/run.json"),
        run.join("run.json"),
    )
    .expect("the manifest");
    for (name, text) in files {
        std::fs::write(run.join(name), text).expect("a file");
    }
    dir
}
