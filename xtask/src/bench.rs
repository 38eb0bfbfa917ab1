//! `cargo xtask bench`: the criterion benchmarks, ours beside the peers, in several runs, each
//! kept with a manifest in `target/bench-runs/<n>/` for the report.
//!
//! The first run measures every benchmark (`fixed-window-benches`' `limiters`, `keyed`,
//! `redis` and `redis_cluster` binaries, the simulator's `throughput`) and counts what
//! criterion does not time: lost compare-and-set races, the keyed limiters' memory, and the
//! Redis server's own time per decision. The others repeat only the
//! benchmarks the targets compare, so that each target's ratio comes from several runs, ours
//! and the peer's measured minutes apart within each. One run of a contention bench on a shared
//! machine decides nothing. The `redis` bench's percentiles and command counts are kept with
//! every run that ran it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fixed_window_reports::numbers::unix_now;
use fixed_window_reports::targets::{self, RUNS_FOR_VERDICT};
use fixed_window_reports::{
    BenchRun, BenchRuns, CAS_RETRIES, KEYED_MEMORY, Measurement, Mode, REDIS_LATENCY, RunManifest,
    SERVER_TIME, Scope, begin_run, record_run,
};

use crate::cargo::{Failure, cargo, run as run_step};
use crate::report::target_dir;

/// Flags of `cargo xtask bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A smoke run: a fraction of a second per benchmark, no plots. Its figures are noise; the
    /// report marks them as smoke data and gives them no verdict.
    #[arg(long)]
    pub quick: bool,
    /// Runs: the first of every benchmark, the others of the targets' benchmarks only. A
    /// target's verdict needs this many at least.
    #[arg(long, default_value_t = RUNS_FOR_VERDICT, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Only the benchmarks whose id matches this regular expression, e.g. `'^permit/'`.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Other flags for criterion (see `cargo xtask bench -- --help`); filter with `--filter`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

/// criterion's flags for a smoke run: short warm-up and measurement, the fewest samples and
/// resamples it accepts, and no plots.
const QUICK: [&str; 9] = [
    "--warm-up-time",
    "0.05",
    "--measurement-time",
    "0.1",
    "--sample-size",
    "10",
    "--nresamples",
    "1000",
    "--noplot",
];

/// Runs the benchmarks in release mode, `args.runs` times (see the module's documentation),
/// each run recorded in `target/bench-runs/<n>/` (which is emptied first); the first run also
/// measures the simulator's throughput and counts lost compare-and-set races (see
/// [`count_retries`]).
///
/// # Errors
///
/// If a benchmark or the count fails to build or run, or a run cannot be recorded.
pub fn run(args: &Args) -> Result<(), Failure> {
    redis_server_installed()?;
    let mode = if args.quick { Mode::Quick } else { Mode::Full };
    let session = Session::start(command_line(args), mode, args.runs)?;
    let every = criterion_args(args, args.filter.as_deref());
    session.run(1, Scope::Every, &every, |run_dir| {
        for binary in BINARIES {
            bench_binary("bench", binary, &every, run_dir)?;
        }
        // In the profile the simulator's sweeps run in.
        run_step(
            "bench simulator",
            bench("sweep", "fixed-window-sim", "throughput", &every),
        )?;
        run_step(
            "bench shared simulator",
            bench("sweep", "fixed-window-sim", "shared", &every),
        )?;
        count_retries(args.quick, &run_dir.join(CAS_RETRIES))?;
        let keys = if args.quick { "1000000" } else { "10000000" };
        count_keyed_memory("release", keys, run_dir)?;
        let decisions = if args.quick { "20000" } else { "200000" };
        measure_server_time("release", decisions, run_dir)
    })?;
    let first = session.first_run()?;
    if args.filter.is_none() {
        for target in targets::unmeasured(&first) {
            eprintln!(
                "xtask: bench: warning: the first run measured nothing for the target \"{}\"",
                target.what
            );
        }
    }
    if args.runs < 2 {
        return Ok(());
    }
    // The targets' benchmarks that the first run measured, the filter having let them through.
    let measured: Vec<String> = first.results.iter().map(Measurement::id).collect();
    let repeated: Vec<String> = targets::bench_ids()
        .into_iter()
        .filter(|id| measured.contains(id))
        .collect();
    if repeated.is_empty() {
        eprintln!(
            "xtask: bench: the first run measured none of the targets' benchmarks; no more runs"
        );
        return Ok(());
    }
    let filter = targets::filter(repeated.iter().map(String::as_str));
    let targets_only = criterion_args(args, Some(&filter));
    for n in 2..=args.runs {
        session.run(n, Scope::Targets, &targets_only, |run_dir| {
            for binary in BINARIES {
                if repeated.iter().any(|id| binary_of(id) == binary) {
                    bench_binary("bench", binary, &targets_only, run_dir)?;
                }
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// The criterion binaries of `fixed-window-benches`, in the order a run measures them.
const BINARIES: [&str; 4] = ["limiters", "keyed", "redis", "redis_cluster"];

/// The binary that measures benchmark `id`: the keyed and shared limiters' groups are named
/// for their binary (`keyed-…`, `redis-cluster-…`, `redis-…`); every other group is
/// `limiters`'.
fn binary_of(id: &str) -> &'static str {
    if id.starts_with("keyed-") {
        "keyed"
    } else if id.starts_with("redis-cluster-") {
        "redis_cluster"
    } else if id.starts_with("redis-") {
        "redis"
    } else {
        "limiters"
    }
}

/// Runs one binary of `fixed-window-benches` in `profile` with criterion's `args`; the
/// `redis` bench's percentiles and command counts are then moved into `run_dir`, so that
/// each run keeps its own and none is left to pass for a later run's.
fn bench_binary(
    profile: &str,
    binary: &str,
    args: &[String],
    run_dir: &Path,
) -> Result<(), Failure> {
    let written = target_dir().join(REDIS_LATENCY);
    if binary == "redis" {
        remove_stale(&written)?;
    }
    run_step(
        &format!("bench {binary}"),
        bench(profile, "fixed-window-benches", binary, args),
    )?;
    if binary == "redis" {
        keep(&written, &run_dir.join(REDIS_LATENCY))?;
    }
    Ok(())
}

/// Fails early, with the way to install it, if `redis-server` (which the `redis` bench starts)
/// is not on `PATH`.
fn redis_server_installed() -> Result<(), Failure> {
    match Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
    {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("redis-server --version failed ({status})")),
        Err(err) => Err(format!(
            "the redis bench needs redis-server on PATH ({err}): install Debian's package \
             (apt-get install -y redis-server), as .ci/run does"
        )),
    }
}

/// Removes a file a bench writes, left by an earlier command.
fn remove_stale(path: &Path) -> Result<(), Failure> {
    match fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("cannot remove {}: {err}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Moves the file a bench or example just wrote into the run's directory.
fn keep(written: &Path, into: &Path) -> Result<(), Failure> {
    fs::rename(written, into).map_err(|err| {
        format!(
            "cannot move {} into {}: {err}",
            written.display(),
            into.display()
        )
    })
}

/// The runs of one command: where they are kept and what their manifests say.
struct Session {
    /// `target/bench-runs`.
    dir: PathBuf,
    /// The command as typed.
    command: String,
    mode: Mode,
    runs: u32,
}

impl Session {
    /// Empties `target/bench-runs`: the report shows the runs of the latest command only.
    fn start(command: String, mode: Mode, runs: u32) -> Result<Session, Failure> {
        let dir = target_dir().join("bench-runs");
        if dir.exists() {
            fs::remove_dir_all(&dir)
                .map_err(|err| format!("cannot empty {}: {err}", dir.display()))?;
        }
        Ok(Session {
            dir,
            command,
            mode,
            runs,
        })
    }

    /// The first run, read back as the report reads it.
    fn first_run(&self) -> Result<BenchRun, Failure> {
        BenchRuns::load(&self.dir)
            .map_err(|err| format!("cannot read the first run back: {err}"))?
            .runs
            .into_iter()
            .next()
            .ok_or_else(|| format!("no run recorded in {}", self.dir.display()))
    }

    /// Run `n`: marks its start, lets `measure` run the benchmarks (given the run's
    /// directory), then keeps what criterion wrote meanwhile, with the manifest.
    fn run(
        &self,
        n: u32,
        scope: Scope,
        criterion_args: &[String],
        measure: impl FnOnce(&Path) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let run_dir = self.dir.join(n.to_string());
        begin_run(&run_dir).map_err(|err| err.to_string())?;
        eprintln!("xtask: bench: run {n} of {}", self.runs);
        let started = unix_now();
        measure(&run_dir)?;
        let manifest = RunManifest {
            run: n,
            runs: self.runs,
            command: self.command.clone(),
            mode: self.mode,
            scope,
            criterion_args: criterion_args.to_vec(),
            started,
            finished: unix_now(),
            cores: std::thread::available_parallelism()
                .ok()
                .map(std::num::NonZeroUsize::get),
        };
        let kept = record_run(&target_dir().join("criterion"), &run_dir, &manifest)
            .map_err(|err| err.to_string())?;
        eprintln!(
            "xtask: bench: run {n} of {}: {kept} results kept in {}",
            self.runs,
            run_dir.display()
        );
        Ok(())
    }
}

/// `cargo bench` of one bench target with criterion's `args`, in `profile`.
fn bench(profile: &str, package: &str, target: &str, args: &[String]) -> Command {
    let mut command = cargo([
        "bench",
        "--profile",
        profile,
        "-p",
        package,
        "--bench",
        target,
    ]);
    command.arg("--").args(args);
    command
}

/// criterion's flags for a run: the smoke settings if quick, the user's flags, the filter.
fn criterion_args(args: &Args, filter: Option<&str>) -> Vec<String> {
    let quick = QUICK.iter().filter(|_| args.quick).map(|&s| s.to_owned());
    quick
        .chain(args.rest.iter().cloned())
        .chain(filter.map(str::to_owned))
        .collect()
}

/// The command as a person would type it again.
fn command_line(args: &Args) -> String {
    let mut words = vec!["cargo xtask bench".to_owned()];
    if args.quick {
        words.push("--quick".to_owned());
    }
    if args.runs != RUNS_FOR_VERDICT {
        words.push(format!("--runs {}", args.runs));
    }
    if let Some(filter) = &args.filter {
        words.push(format!("--filter {}", quoted(filter)));
    }
    if !args.rest.is_empty() {
        words.push("--".to_owned());
        words.extend(args.rest.iter().map(|word| quoted(word)));
    }
    words.join(" ")
}

/// `word` as a shell reads it back: in single quotes unless it is plain.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Counts the limiter's lost compare-and-set races with its own counter (feature `stats`,
/// built only for this count so the benchmarks above measure the limiter users get): the
/// `cas_retries` example hammers a limiter from 1, 2, 4 and 8 threads and prints
/// `{"backoff_spins":…,"points":[{"threads":…,"attempts":…,"retries":…},…]}`, written to
/// `out`.
///
/// # Errors
///
/// If the example fails to build or run, or its output cannot be written.
fn count_retries(quick: bool, out: &Path) -> Result<(), Failure> {
    let calls = if quick { "100000" } else { "1000000" };
    let mut command = cargo([
        "run",
        "--release",
        "--quiet",
        "-p",
        "fixed-window-benches",
        "--features",
        "stats",
        "--example",
        "cas_retries",
        "--",
        calls,
    ]);
    eprintln!("xtask: bench: count CAS retries: {command:?}");
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .map_err(|err| format!("count CAS retries: could not start: {err}"))?;
    if !output.status.success() {
        return Err(format!("count CAS retries failed ({})", output.status));
    }
    fs::write(out, &output.stdout).map_err(|err| format!("cannot write {}: {err}", out.display()))
}

/// Counts the keyed limiters' memory with the `keyed_memory` example built in `profile`:
/// bytes per live key, and bytes held after `keys` distinct keys, a thousand a window; its
/// `keyed-memory.json` is moved into `run_dir`.
///
/// # Errors
///
/// If the example fails to build or run, or its figures cannot be moved.
fn count_keyed_memory(profile: &str, keys: &str, run_dir: &Path) -> Result<(), Failure> {
    let written = target_dir().join(KEYED_MEMORY);
    remove_stale(&written)?;
    let command = cargo([
        "run",
        "--profile",
        profile,
        "--quiet",
        "-p",
        "fixed-window-benches",
        "--example",
        "keyed_memory",
        "--",
        keys,
        "1000",
    ]);
    run_step("count keyed memory", command)?;
    keep(&written, &run_dir.join(KEYED_MEMORY))
}

/// Measures the Redis server's own time per decision with the `redis_server_time` example
/// built in `profile`: `decisions` of each kind from 16 clients on a fresh `redis-server`; its
/// `redis-server-time.json` is moved into `run_dir`.
///
/// # Errors
///
/// If the example fails to build or run, or its figures cannot be moved.
fn measure_server_time(profile: &str, decisions: &str, run_dir: &Path) -> Result<(), Failure> {
    let written = target_dir().join(SERVER_TIME);
    remove_stale(&written)?;
    let command = cargo([
        "run",
        "--profile",
        profile,
        "--quiet",
        "-p",
        "fixed-window-benches",
        "--example",
        "redis_server_time",
        "--",
        decisions,
        "16",
    ]);
    run_step("measure the server's time per decision", command)?;
    keep(&written, &run_dir.join(SERVER_TIME))
}

/// The keyed benchmarks CI runs: every one on the targets' population of 1,000 keys but the
/// map candidates under contention (1,000,000-key tables take seconds each to fill in the dev
/// profile, and the map candidates only justify the table's crate).
const KEYED_SMOKE: &str = "^keyed-(permit|rejection|map-hit)/[^/]+/1000$\
    |^keyed-contention-(permit|rejection)/[^/]+/1000-keys/[0-9]+$\
    |^keyed-map-churn/";

/// The benchmarks' CI gate: the benchmarks built and run briefly, recorded as one quick run
/// (so the report renders from it, marked as smoke data), which must measure every target.
///
/// Built in the dev profile, whose dependencies the workspace's tests have already compiled,
/// so the gate costs the bench crates' builds instead of a release build of criterion and
/// governor; the figures are meaningless, but the run writes the same files the report reads.
/// `limiters`, `redis` and `redis_cluster` run every benchmark, `keyed` those of
/// [`KEYED_SMOKE`]; the keyed memory is counted over 100,000 keys, the server's time over
/// 2,000 decisions of each kind. The simulator's benches (a thousand scenarios an
/// iteration, slow unoptimised) run once each, in criterion's test mode, which writes no
/// figures.
///
/// # Errors
///
/// If a benchmark fails to build or run, the run cannot be recorded, or a target is left
/// unmeasured (a benchmark it reads renamed or dropped).
pub fn ci() -> Result<(), Failure> {
    redis_server_installed()?;
    let session = Session::start("cargo xtask ci".to_owned(), Mode::Quick, 1)?;
    let quick: Vec<String> = QUICK.iter().map(|&s| s.to_owned()).collect();
    let keyed: Vec<String> = quick
        .iter()
        .cloned()
        .chain([KEYED_SMOKE.to_owned()])
        .collect();
    session.run(1, Scope::Every, &quick, |run_dir| {
        bench_binary("dev", "limiters", &quick, run_dir)?;
        bench_binary("dev", "keyed", &keyed, run_dir)?;
        bench_binary("dev", "redis", &quick, run_dir)?;
        bench_binary("dev", "redis_cluster", &quick, run_dir)?;
        run_step(
            "bench smoke simulator",
            bench(
                "dev",
                "fixed-window-sim",
                "throughput",
                &["--test".to_owned()],
            ),
        )?;
        count_keyed_memory("dev", "100000", run_dir)?;
        measure_server_time("dev", "2000", run_dir)
    })?;
    let unmeasured: Vec<&str> = targets::unmeasured(&session.first_run()?)
        .iter()
        .map(|target| target.what)
        .collect();
    if unmeasured.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the bench smoke run measured nothing for these targets: {}",
            unmeasured.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use fixed_window_reports::targets;

    use super::{Args, BINARIES, binary_of, command_line, criterion_args};
    use crate::cargo::workspace_root;

    /// The sources of one bench binary of `fixed-window-benches`: `keyed` with its `keyed/`
    /// modules, `redis`, `redis_cluster`, and `limiters` with every other file of
    /// `benches/benches` (its modules).
    fn sources_of(binary: &str) -> String {
        let dir = workspace_root().join("benches/benches");
        let mut paths = Vec::new();
        for entry in fs::read_dir(&dir).expect("benches/benches") {
            let path = entry.expect("an entry").path();
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let own = match binary {
                "limiters" => !BINARIES[1..].contains(&stem),
                other => stem == other,
            };
            if path.extension().is_some_and(|e| e == "rs") && own {
                paths.push(path);
            }
        }
        if let Ok(modules) = fs::read_dir(dir.join(binary)) {
            paths.extend(modules.map(|entry| entry.expect("an entry").path()));
        }
        paths
            .iter()
            .map(|path| fs::read_to_string(path).expect("a source file"))
            .collect()
    }

    #[test]
    fn each_targets_benchmark_is_repeated_by_the_binary_that_defines_its_group() {
        for id in targets::bench_ids() {
            let group = id.split('/').next().expect("a group");
            let definition = format!("benchmark_group(\"{group}\")");
            let defining: Vec<&str> = BINARIES
                .into_iter()
                .filter(|binary| sources_of(binary).contains(&definition))
                .collect();
            assert_eq!(defining, [binary_of(&id)], "{id}");
        }
    }

    fn args(quick: bool, runs: u32, filter: Option<&str>, rest: &[&str]) -> Args {
        Args {
            quick,
            runs,
            filter: filter.map(str::to_owned),
            rest: rest.iter().map(|&s| s.to_owned()).collect(),
        }
    }

    #[test]
    fn the_recorded_command_is_the_one_typed() {
        assert_eq!(
            command_line(&args(false, 3, None, &[])),
            "cargo xtask bench"
        );
        assert_eq!(
            command_line(&args(true, 5, Some("^permit/"), &["--sample-size", "20"])),
            "cargo xtask bench --quick --runs 5 --filter '^permit/' -- --sample-size 20"
        );
    }

    #[test]
    fn a_quick_run_passes_the_smoke_settings_and_the_filter_comes_last() {
        let flags = criterion_args(
            &args(true, 3, None, &["--noise-threshold", "0.1"]),
            Some("^x$"),
        );
        assert_eq!(flags.first().map(String::as_str), Some("--warm-up-time"));
        assert_eq!(flags.last().map(String::as_str), Some("^x$"));
        assert!(flags.contains(&"--noise-threshold".to_owned()));
        let full = criterion_args(&args(false, 3, None, &[]), None);
        assert!(full.is_empty());
    }
}
