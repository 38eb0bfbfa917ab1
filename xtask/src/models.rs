//! `cargo xtask models`: the loom and shuttle suites of `fixed-window-models`.
//!
//! Each suite is its own build of the workspace with a cfg that swaps core's concurrency
//! primitives for the checker's (`--cfg fixed_window_loom`, `--cfg fixed_window_shuttle`), in
//! its own target directory (`target/loom`, `target/shuttle`) so the normal build and the two
//! model builds never evict each other's artifacts.

use std::process::Command;

use crate::cargo::{Failure, cargo, run as run_step, workspace_root};

/// Which suites to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Suite {
    /// Both suites.
    All,
    /// Exhaustive exploration of two and three threads within a preemption bound.
    Loom,
    /// Random and PCT schedules of many threads.
    Shuttle,
}

/// Flags of `cargo xtask models`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which suites to run.
    #[arg(long, value_enum, default_value_t = Suite::All)]
    pub suite: Suite,
    /// Shuttle: seed of the random and PCT schedulers (`FIXED_WINDOW_SHUTTLE_SEED`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Shuttle: schedules per scheduler and test (`FIXED_WINDOW_SHUTTLE_ITERATIONS`; default
    /// 10000).
    #[arg(long)]
    pub iterations: Option<u64>,
    /// Shuttle: PCT bug depth (`FIXED_WINDOW_SHUTTLE_PCT_DEPTH`; default 3).
    #[arg(long)]
    pub pct_depth: Option<u64>,
    /// Shuttle: replay this failing schedule string instead of exploring (give `--test` too).
    #[arg(long, requires = "test")]
    pub replay: Option<String>,
    /// Loom: preemption bound (`LOOM_MAX_PREEMPTIONS`; default 3).
    #[arg(long)]
    pub preemptions: Option<u64>,
    /// Run only the tests whose name contains this (as `cargo test <filter>`).
    #[arg(long)]
    pub test: Option<String>,
}

/// Runs the selected suites in release mode.
///
/// # Errors
///
/// If a suite fails to build or a model finds a violation.
pub fn run(args: &Args) -> Result<(), Failure> {
    if matches!(args.suite, Suite::All | Suite::Loom) {
        let mut loom = suite("loom", args.test.as_deref());
        if let Some(bound) = args.preemptions {
            loom.env("LOOM_MAX_PREEMPTIONS", bound.to_string());
        }
        run_step("models: loom", loom)?;
    }
    if matches!(args.suite, Suite::All | Suite::Shuttle) {
        let mut shuttle = suite("shuttle", args.test.as_deref());
        let settings = [
            ("FIXED_WINDOW_SHUTTLE_SEED", args.seed),
            ("FIXED_WINDOW_SHUTTLE_ITERATIONS", args.iterations),
            ("FIXED_WINDOW_SHUTTLE_PCT_DEPTH", args.pct_depth),
        ];
        for (name, value) in settings {
            if let Some(value) = value {
                shuttle.env(name, value.to_string());
            }
        }
        if let Some(schedule) = &args.replay {
            shuttle.env("FIXED_WINDOW_SHUTTLE_SCHEDULE", schedule);
        }
        run_step("models: shuttle", shuttle)?;
    }
    Ok(())
}

/// The models' CI gate: both suites with their default bounds, which take a few seconds each
/// once built.
///
/// # Errors
///
/// If a suite fails to build or a model finds a violation.
pub fn ci() -> Result<(), Failure> {
    run(&Args {
        suite: Suite::All,
        seed: None,
        iterations: None,
        pct_depth: None,
        replay: None,
        preemptions: None,
        test: None,
    })
}

/// `cargo test` of the models' `name` test target under `--cfg fixed_window_<name>`, in release
/// (loom needs it to explore in reasonable time) without debug info (the suites need none, and
/// it halves their link time), in `target/<name>`.
fn suite(name: &str, filter: Option<&str>) -> Command {
    let target_dir = workspace_root().join("target").join(name);
    let mut command = cargo([
        "test",
        "--release",
        "--config",
        "profile.release.debug=0",
        "-p",
        "fixed-window-models",
        "--test",
        name,
    ]);
    command.arg("--target-dir").arg(target_dir);
    if let Some(filter) = filter {
        command.arg(filter);
    }
    let mut rustflags = std::env::var("RUSTFLAGS").unwrap_or_default();
    if !rustflags.is_empty() {
        rustflags.push(' ');
    }
    rustflags.push_str("--cfg fixed_window_");
    rustflags.push_str(name);
    command.env("RUSTFLAGS", rustflags);
    command
}
