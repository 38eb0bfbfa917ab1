//! `cargo xtask report`: the HTML report, from whatever benchmark and simulator results exist.

use std::path::PathBuf;

use fixed_window_reports::{CAS_RETRIES, KEYED_MEMORY, REDIS_LATENCY, SERVER_TIME};

use crate::cargo::{Failure, cargo, run as run_step, workspace_root};

/// Flags of `cargo xtask report`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Where cargo puts build output, and so where criterion writes its results: the
/// `CARGO_TARGET_DIR` this command runs with, or the workspace's `target/`.
pub fn target_dir() -> PathBuf {
    let root = workspace_root();
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir))
}

/// Renders `target/report/index.html` and its charts from the runs `cargo xtask bench`
/// recorded in `<target>/bench-runs` (or, if there are none, criterion's latest results in
/// `<target>/criterion` and the figures counted beside them in `<target>`, shown as of unknown
/// origin) and the simulator's `target/sim` (the shared limiter's sweep from `target/sim-shared`
/// beside it); inputs that are missing are named on the page.
///
/// # Errors
///
/// If the report cannot be built or written.
pub fn run(_args: &Args) -> Result<(), Failure> {
    let root = workspace_root();
    let mut command = cargo([
        "run",
        "--quiet",
        "-p",
        "fixed-window-reports",
        "--bin",
        "fixed-window-report",
        "--",
    ]);
    command
        .arg("--bench-runs")
        .arg(target_dir().join("bench-runs"))
        .arg("--criterion")
        .arg(target_dir().join("criterion"))
        .arg("--cas-retries")
        .arg(target_dir().join(CAS_RETRIES))
        .arg("--redis-latency")
        .arg(target_dir().join(REDIS_LATENCY))
        .arg("--keyed-memory")
        .arg(target_dir().join(KEYED_MEMORY))
        .arg("--server-time")
        .arg(target_dir().join(SERVER_TIME))
        .arg("--sim")
        .arg(root.join("target/sim"))
        .arg("--mutants")
        .arg(root.join("target/mutants"))
        .arg("--mutant-notes")
        .arg(root.join("docs/mutants.md"))
        .arg("--out")
        .arg(root.join("target/report"));
    run_step("report", command)
}

/// The report's CI gate: renders from whatever the earlier gates left (the benchmarks' smoke
/// run, the simulator's sweep). The report's own tests render it from shipped fixtures.
///
/// # Errors
///
/// If the report cannot be built or written.
pub fn ci() -> Result<(), Failure> {
    run(&Args {})
}
