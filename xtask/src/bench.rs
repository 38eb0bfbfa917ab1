//! `cargo xtask bench`: the criterion benchmarks, ours beside the peers in one run.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::cargo::{Failure, cargo, run as run_step};
use crate::report::target_dir;

/// Flags of `cargo xtask bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A smoke run: a fraction of a second per benchmark, no plots. Figures from it are noise.
    #[arg(long)]
    pub quick: bool,
    /// Flags for criterion, e.g. a filter such as `'^permit/'` (see `cargo xtask bench -- --help`).
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

/// Runs the benchmarks in release mode; results go to `target/criterion`. Then counts lost
/// compare-and-set races (see [`count_retries`]) into `target/cas-retries.json`, if `perf` can.
///
/// # Errors
///
/// If a benchmark fails to build or run.
pub fn run(args: &Args) -> Result<(), Failure> {
    let mut command = cargo([
        "bench",
        "-p",
        "fixed-window-benches",
        "--bench",
        "limiters",
        "--",
    ]);
    if args.quick {
        command.args(QUICK);
    }
    command.args(&args.rest);
    run_step("bench", command)?;
    let out = target_dir().join("cas-retries.json");
    // A stale count would be reported as this run's: remove it first.
    let _ = fs::remove_file(&out);
    if let Err(reason) = count_retries(args.quick, &out) {
        eprintln!("xtask: bench: CAS retries not counted: {reason}");
    }
    Ok(())
}

/// Thread counts at which lost races are counted.
const RETRY_THREADS: [u64; 4] = [1, 2, 4, 8];

/// The tracepoint counted: one `sched_yield` per retry under `Backoff::new(0)`.
const YIELD_EVENT: &str = "syscalls:sys_enter_sched_yield";

/// Counts the limiter's lost compare-and-set races from outside: the `yield_count` example
/// hammers a limiter whose every retry yields, under `perf stat` counting `sched_yield` calls,
/// at each of [`RETRY_THREADS`]. Writes `{"backoff_spins":0,"points":[{"threads":…,
/// "attempts":…,"retries":…},…]}` to `out`.
///
/// # Errors
///
/// If the example does not build, `perf` is missing or cannot count the tracepoint, or its
/// output cannot be read.
fn count_retries(quick: bool, out: &Path) -> Result<(), Failure> {
    run_step(
        "bench: build yield_count",
        cargo([
            "build",
            "--release",
            "--quiet",
            "-p",
            "fixed-window-benches",
            "--example",
            "yield_count",
        ]),
    )?;
    let example = target_dir().join("release/examples/yield_count");
    let stat = target_dir().join("cas-retries.perf");
    let calls: u64 = if quick { 100_000 } else { 1_000_000 };
    let mut points = Vec::new();
    for threads in RETRY_THREADS {
        let status = Command::new("perf")
            .args(["stat", "-x,", "-e", YIELD_EVENT, "-o"])
            .arg(&stat)
            .arg(&example)
            .arg(threads.to_string())
            .arg(calls.to_string())
            .stdout(Stdio::null())
            .status()
            .map_err(|err| format!("cannot run perf: {err}"))?;
        if !status.success() {
            return Err(format!("perf stat failed ({status})"));
        }
        let text = fs::read_to_string(&stat)
            .map_err(|err| format!("cannot read {}: {err}", stat.display()))?;
        // perf's CSV: "count,unit,event,…", with "<not supported>" in the count's place when
        // the kernel lacks the tracepoint.
        let retries = text
            .lines()
            .find(|line| line.contains(YIELD_EVENT))
            .and_then(|line| line.split(',').next())
            .and_then(|count| count.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("perf could not count {YIELD_EVENT}: {}", text.trim()))?;
        let attempts = threads * calls;
        eprintln!("xtask: bench: {threads} threads: {retries} retries in {attempts} attempts");
        points.push(format!(
            "{{\"threads\":{threads},\"attempts\":{attempts},\"retries\":{retries}}}"
        ));
    }
    let _ = fs::remove_file(&stat);
    let json = format!(
        "{{\"backoff_spins\":0,\"points\":[{}]}}\n",
        points.join(",")
    );
    fs::write(out, json).map_err(|err| format!("cannot write {}: {err}", out.display()))
}

/// The benchmarks' CI gate: every benchmark built and run briefly.
///
/// Built in the dev profile, whose dependencies the workspace's tests have already compiled,
/// so the gate costs one crate's build instead of a release build of criterion and governor;
/// the figures are meaningless, but the run writes the same files the report reads.
///
/// # Errors
///
/// If a benchmark fails to build or run.
pub fn ci() -> Result<(), Failure> {
    let mut command = cargo([
        "bench",
        "--profile",
        "dev",
        "-p",
        "fixed-window-benches",
        "--bench",
        "limiters",
        "--",
    ]);
    command.args(QUICK);
    run_step("bench smoke", command)
}
