//! The runs of `cargo xtask bench`: each run's criterion results, copied out of
//! `target/criterion` as the run ends, beside a manifest saying when it ran, by which command,
//! and whether it was a quick smoke run.
//!
//! criterion keeps only the latest result of each benchmark, so two figures read from
//! `target/criterion` may come from different runs, minutes or days apart, one of them perhaps
//! from a smoke run; nothing there says which. The runs kept here let every ratio be computed
//! within one run and every figure say where it came from.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::bench_results::{BenchResults, LoadError};
use crate::cas_retries::CasRetries;
use crate::keyed_memory::KeyedMemory;
use crate::redis_latency::RedisLatency;
use crate::server_time::ServerTime;

/// Each run's manifest, in its directory.
pub const MANIFEST: &str = "run.json";

/// The retry counts, in the directory of the run that counted them.
pub const CAS_RETRIES: &str = "cas-retries.json";

/// The `redis` bench's percentiles and command counts, where the bench writes them in the
/// target directory and in the directory of the run that kept them.
pub const REDIS_LATENCY: &str = "redis-latency.json";

/// The keyed limiters' memory, where the `keyed_memory` example writes it in the target
/// directory and in the directory of the run that kept it.
pub const KEYED_MEMORY: &str = "keyed-memory.json";

/// The server's time per decision, where the `redis_server_time` example writes it in the
/// target directory and in the directory of the run that kept it.
pub const SERVER_TIME: &str = "redis-server-time.json";

/// The run's criterion results, in its directory, laid out as criterion lays them out.
const RESULTS: &str = "criterion";

/// The mark [`begin_run`] leaves in a run's directory.
const STARTED: &str = ".started";

/// How long a run measured each benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// criterion's full measurement: figures to judge by.
    Full,
    /// A fraction of a second per benchmark (`cargo xtask bench --quick`, CI's smoke run):
    /// it shows the benchmarks run, and its figures are noise.
    Quick,
}

/// Which benchmarks a run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Every benchmark the command selects.
    Every,
    /// Only those the targets compare, repeated so that each ratio has several runs.
    Targets,
}

/// When, how and by which command one run was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunManifest {
    /// The run's number, from 1.
    pub run: u32,
    /// How many runs the command planned.
    pub runs: u32,
    /// The command a person typed, e.g. `cargo xtask bench --quick`.
    pub command: String,
    /// Full or quick.
    pub mode: Mode,
    /// Every benchmark, or the targets' only.
    pub scope: Scope,
    /// The flags passed to criterion for this run.
    pub criterion_args: Vec<String>,
    /// When the run started, in seconds since the Unix epoch.
    pub started: u64,
    /// When it ended, in seconds since the Unix epoch.
    pub finished: u64,
    /// The cores the machine offered, if known.
    pub cores: Option<usize>,
}

/// One run: its manifest (none for results of unknown origin), its results, and the figures
/// counted beside criterion's: retries, the shared limiter's percentiles, keyed memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchRun {
    /// When and how the run was made; `None` if nobody recorded it.
    pub manifest: Option<RunManifest>,
    /// The results it measured.
    pub results: BenchResults,
    /// The lost compare-and-set races counted after it, if it counted them.
    pub cas_retries: Option<CasRetries>,
    /// The shared limiter's percentiles and commands per attempt, if it ran the `redis` bench.
    pub redis_latency: Option<RedisLatency>,
    /// The keyed limiters' memory, if it was counted after this run.
    pub keyed_memory: Option<KeyedMemory>,
    /// The server's time per decision, if it was measured after this run.
    pub server_time: Option<ServerTime>,
}

impl BenchRun {
    /// Whether the run was a quick smoke run.
    pub fn is_quick(&self) -> bool {
        self.manifest
            .as_ref()
            .is_some_and(|m| m.mode == Mode::Quick)
    }
}

/// Where the runs came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The runs `cargo xtask bench` recorded in this directory, each with its manifest.
    Recorded(PathBuf),
    /// criterion's latest result of each benchmark, recorded by nobody: when and how each was
    /// produced is unknown, and two of them may come from different runs. `written` is the
    /// span of their files' modification times (seconds since the Unix epoch), if known.
    Unrecorded {
        /// The oldest and newest result file's modification time.
        written: Option<(u64, u64)>,
    },
}

/// The benchmark runs the report is drawn from.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRuns {
    /// The runs, in the order they ran.
    pub runs: Vec<BenchRun>,
    /// Where they came from.
    pub source: Source,
    /// Run directories or files that could not be used, one sentence each.
    pub skipped: Vec<String>,
}

impl BenchRuns {
    /// Results of unknown origin as one unrecorded run, e.g. criterion's latest results.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::{BenchResults, BenchRuns};
    ///
    /// let runs = BenchRuns::unrecorded(BenchResults::default(), None);
    /// assert!(runs.runs[0].manifest.is_none());
    /// assert!(!runs.is_recorded());
    /// ```
    pub fn unrecorded(results: BenchResults, cas_retries: Option<CasRetries>) -> BenchRuns {
        BenchRuns {
            runs: vec![BenchRun {
                manifest: None,
                results,
                cas_retries,
                ..BenchRun::default()
            }],
            source: Source::Unrecorded { written: None },
            skipped: Vec::new(),
        }
    }

    /// criterion's latest results under `criterion` (`target/criterion`), as one unrecorded
    /// run, with the span of their files' modification times.
    ///
    /// # Errors
    ///
    /// If the directory or a result file cannot be read.
    pub fn latest(
        criterion: &Path,
        cas_retries: Option<CasRetries>,
    ) -> Result<BenchRuns, LoadError> {
        let mut runs = BenchRuns::unrecorded(BenchResults::load(criterion)?, cas_retries);
        runs.source = Source::Unrecorded {
            written: written_span(criterion),
        };
        Ok(runs)
    }

    /// The runs recorded under `dir` (`target/bench-runs`): one numbered directory per run,
    /// holding its manifest and results. A directory without a manifest (a run cut short) is
    /// skipped and named in [`skipped`](BenchRuns::skipped).
    ///
    /// # Errors
    ///
    /// If `dir`, a manifest or a result file cannot be read, or is not the JSON expected.
    pub fn load(dir: &Path) -> Result<BenchRuns, LoadError> {
        let mut numbered = Vec::new();
        for entry in fs::read_dir(dir).map_err(io(dir))? {
            let entry = entry.map_err(io(dir))?;
            let number = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok());
            if let Some(number) = number.filter(|_| entry.path().is_dir()) {
                numbered.push((number, entry.path()));
            }
        }
        numbered.sort();
        let mut runs = BenchRuns {
            runs: Vec::new(),
            source: Source::Recorded(dir.to_owned()),
            skipped: Vec::new(),
        };
        for (number, path) in numbered {
            let manifest_path = path.join(MANIFEST);
            if !manifest_path.is_file() {
                runs.skipped.push(format!(
                    "run {number} in {} has no {MANIFEST}: it did not finish",
                    path.display()
                ));
                continue;
            }
            let text = fs::read_to_string(&manifest_path).map_err(io(&manifest_path))?;
            let manifest: RunManifest =
                serde_json::from_str(&text).map_err(|source| LoadError::Manifest {
                    path: manifest_path.clone(),
                    source,
                })?;
            let results_dir = path.join(RESULTS);
            let results = if results_dir.is_dir() {
                BenchResults::load(&results_dir)?
            } else {
                BenchResults::default()
            };
            let skipped = &mut runs.skipped;
            let cas_retries = read_beside(
                &path.join(CAS_RETRIES),
                "CAS retry counts",
                skipped,
                CasRetries::parse,
            );
            let redis_latency = read_beside(
                &path.join(REDIS_LATENCY),
                "the shared limiter's latencies",
                skipped,
                RedisLatency::parse,
            );
            let keyed_memory = read_beside(
                &path.join(KEYED_MEMORY),
                "keyed memory",
                skipped,
                KeyedMemory::parse,
            );
            let server_time = read_beside(
                &path.join(SERVER_TIME),
                "the server's time per decision",
                skipped,
                ServerTime::parse,
            );
            runs.runs.push(BenchRun {
                manifest: Some(manifest),
                results,
                cas_retries,
                redis_latency,
                keyed_memory,
                server_time,
            });
        }
        Ok(runs)
    }

    /// Whether the runs were recorded with their manifests.
    pub fn is_recorded(&self) -> bool {
        matches!(self.source, Source::Recorded(_))
    }

    /// The run that measured every benchmark (the first such), else the first run: the one
    /// the sections other than the targets are drawn from.
    pub fn primary(&self) -> Option<&BenchRun> {
        self.runs
            .iter()
            .find(|run| {
                run.manifest
                    .as_ref()
                    .is_none_or(|m| m.scope == Scope::Every)
            })
            .or_else(|| self.runs.first())
    }

    /// The first run that counted lost compare-and-set races.
    pub fn with_cas_retries(&self) -> Option<(&BenchRun, &CasRetries)> {
        self.runs
            .iter()
            .find_map(|run| Some((run, run.cas_retries.as_ref()?)))
    }

    /// The first run that kept the shared limiter's percentiles.
    pub fn with_redis_latency(&self) -> Option<(&BenchRun, &RedisLatency)> {
        self.runs
            .iter()
            .find_map(|run| Some((run, run.redis_latency.as_ref()?)))
    }

    /// The first run that counted the keyed limiters' memory.
    pub fn with_keyed_memory(&self) -> Option<(&BenchRun, &KeyedMemory)> {
        self.runs
            .iter()
            .find_map(|run| Some((run, run.keyed_memory.as_ref()?)))
    }

    /// The first run that measured the server's time per decision.
    pub fn with_server_time(&self) -> Option<(&BenchRun, &ServerTime)> {
        self.runs
            .iter()
            .find_map(|run| Some((run, run.server_time.as_ref()?)))
    }
}

/// A file kept beside a run's results, parsed: `None` if it is absent (the run did not make
/// it), and `None` with a line in `skipped` naming `what` and the path if it cannot be read or
/// parsed.
fn read_beside<T>(
    path: &Path,
    what: &str,
    skipped: &mut Vec<String>,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Option<T> {
    match fs::read_to_string(path) {
        Ok(text) => match parse(&text) {
            Ok(parsed) => Some(parsed),
            Err(err) => {
                skipped.push(format!("{what} {} unreadable: {err}", path.display()));
                None
            }
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            skipped.push(format!("{what} {}: {err}", path.display()));
            None
        }
    }
}

/// Marks the start of a run in `run_dir` (creating it), before criterion runs: the results
/// [`record_run`] keeps are those written after this mark.
///
/// The mark is a file, so that its time and the results' come from the same clock: a file's
/// time is the kernel's coarse clock, which may lag the time a program reads by milliseconds.
///
/// # Errors
///
/// If the directory or the mark cannot be written.
pub fn begin_run(run_dir: &Path) -> Result<(), LoadError> {
    fs::create_dir_all(run_dir).map_err(io(run_dir))?;
    let mark = run_dir.join(STARTED);
    fs::write(&mark, "").map_err(io(&mark))
}

/// Copies the results criterion wrote into `criterion` (its output directory) since
/// [`begin_run`] marked `run_dir`, then writes `manifest` there; returns how many results
/// were copied. A run's results are exactly those: criterion rewrites a benchmark's files each
/// time it measures it, and leaves those of benchmarks it did not run alone.
///
/// # Errors
///
/// If the run was not begun, or a file cannot be read or written.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::{BenchRuns, Mode, RunManifest, Scope, begin_run, record_run};
///
/// let scratch = std::env::temp_dir().join(format!("record-run-doc-{}", std::process::id()));
/// let (criterion, run) = (scratch.join("criterion"), scratch.join("runs/1"));
/// begin_run(&run)?;
/// let new = criterion.join("permit/ours-system/new");
/// std::fs::create_dir_all(&new)?;
/// std::fs::write(new.join("benchmark.json"), r#"{"group_id":"permit","function_id":"ours-system"}"#)?;
/// std::fs::write(new.join("estimates.json"), r#"{"median":{"point_estimate":12.5}}"#)?;
/// let manifest = RunManifest {
///     run: 1, runs: 1, command: "cargo xtask bench".into(), mode: Mode::Full,
///     scope: Scope::Every, criterion_args: vec![], started: 0, finished: 0, cores: Some(2),
/// };
/// assert_eq!(record_run(&criterion, &run, &manifest)?, 1);
/// let runs = BenchRuns::load(&scratch.join("runs"))?;
/// assert_eq!(runs.runs[0].results.get("permit", "ours-system").unwrap().median_ns, 12.5);
/// std::fs::remove_dir_all(&scratch)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn record_run(
    criterion: &Path,
    run_dir: &Path,
    manifest: &RunManifest,
) -> Result<usize, LoadError> {
    let mark = run_dir.join(STARTED);
    let since = fs::metadata(&mark)
        .and_then(|m| m.modified())
        .map_err(io(&mark))?;
    let mut copied = 0;
    for new in result_dirs(criterion) {
        let estimates = new.join("estimates.json");
        let fresh = fs::metadata(&estimates)
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified >= since);
        if !fresh {
            continue;
        }
        let relative = new.strip_prefix(criterion).unwrap_or(&new);
        let into = run_dir.join(RESULTS).join(relative);
        fs::create_dir_all(&into).map_err(io(&into))?;
        for file in ["benchmark.json", "estimates.json"] {
            fs::copy(new.join(file), into.join(file)).map_err(io(&new.join(file)))?;
        }
        copied += 1;
    }
    let path = run_dir.join(MANIFEST);
    let text = serde_json::to_string_pretty(manifest).map_err(|source| LoadError::Manifest {
        path: path.clone(),
        source,
    })?;
    fs::write(&path, text + "\n").map_err(io(&path))?;
    Ok(copied)
}

/// An I/O error's mapping to a [`LoadError`] naming `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LoadError {
    let path = path.to_owned();
    move |source| LoadError::Io { path, source }
}

/// Every `new` directory holding a result under criterion's output directory.
fn result_dirs(criterion: &Path) -> impl Iterator<Item = PathBuf> {
    walkdir::WalkDir::new(criterion)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| {
            entry.file_name() == "benchmark.json"
                && entry.path().parent().and_then(Path::file_name) == Some("new".as_ref())
        })
        .filter_map(|entry| entry.path().parent().map(Path::to_owned))
}

/// The oldest and newest modification time of the results under `criterion`.
fn written_span(criterion: &Path) -> Option<(u64, u64)> {
    let times = result_dirs(criterion).filter_map(|new| {
        let modified = fs::metadata(new.join("estimates.json"))
            .and_then(|m| m.modified())
            .ok()?;
        Some(
            modified
                .duration_since(SystemTime::UNIX_EPOCH)
                .ok()?
                .as_secs(),
        )
    });
    times.fold(None, |span, t| match span {
        None => Some((t, t)),
        Some((low, high)) => Some((low.min(t), high.max(t))),
    })
}
