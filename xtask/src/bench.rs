//! `cargo xtask bench`: the criterion benchmarks, ours beside the peers in one run.

use std::fs;
use std::path::Path;
use std::process::Stdio;

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

/// Runs the benchmarks in release mode, the limiters' then the simulator's throughput;
/// results go to `target/criterion`. Then counts lost compare-and-set races (see
/// [`count_retries`]) into `target/cas-retries.json`.
///
/// # Errors
///
/// If a benchmark or the count fails to build or run.
pub fn run(args: &Args) -> Result<(), Failure> {
    for (step, package, bench) in [
        ("bench", "fixed-window-benches", "limiters"),
        ("bench simulator", "fixed-window-sim", "throughput"),
    ] {
        let mut command = cargo(["bench", "-p", package, "--bench", bench, "--"]);
        if args.quick {
            command.args(QUICK);
        }
        command.args(&args.rest);
        run_step(step, command)?;
    }
    count_retries(args.quick, &target_dir().join("cas-retries.json"))
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

/// The benchmarks' CI gate: every benchmark built and run briefly.
///
/// Built in the dev profile, whose dependencies the workspace's tests have already compiled,
/// so the gate costs one crate's build instead of a release build of criterion and governor;
/// the figures are meaningless, but the run writes the same files the report reads. The
/// simulator's benches (a thousand scenarios an iteration, slow unoptimised) run once each,
/// in criterion's test mode, which writes no figures.
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
    run_step("bench smoke", command)?;
    let command = cargo([
        "bench",
        "--profile",
        "dev",
        "-p",
        "fixed-window-sim",
        "--bench",
        "throughput",
        "--",
        "--test",
    ]);
    run_step("bench smoke simulator", command)
}
