//! `cargo xtask simulate`: the simulator's seeded sweep, built in the `sweep` profile (release
//! with whole-program optimisation; see the workspace's `Cargo.toml`).

use crate::cargo::{Failure, cargo, run as run_step};

/// Flags of `cargo xtask simulate`, passed on to the simulator.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Flags for the simulator (see `cargo xtask simulate -- --help`), or `merge` and the
    /// summaries of a sweep's shards (see `cargo xtask simulate merge --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

/// Runs the simulator binary, built in the `sweep` profile, with the given flags.
///
/// # Errors
///
/// If the simulator fails or finds a violation.
pub fn run(args: &Args) -> Result<(), Failure> {
    let mut command = cargo([
        "run",
        "--profile",
        "sweep",
        "--quiet",
        "-p",
        "fixed-window-sim",
        "--",
    ]);
    command.args(&args.rest);
    run_step("simulate", command)
}

/// Scenarios in CI's smoke sweep: the default sweep's 10,000 and 190,000 more, each scenario
/// run twice to check that its trace is reproducible (about twenty seconds on two cores, after
/// the build; some fifty million simulated calls).
const CI_SCENARIOS: &str = "200000";

/// Scenarios in CI's sweep of the shared limiter, each run twice: client processes, a
/// network, the simulated Redis running the limiter's Lua script, and faults (about ten
/// seconds on two cores; some eight hundred thousand simulated calls).
const CI_SHARED_SCENARIOS: &str = "4000";

/// Scenarios in CI's sweep of the keyed limiter (`--limiter keyed`), each run twice: hot, few
/// and many keys, one of them a run of 1.4 million keys over hundreds of windows (some seven
/// million simulated calls; the keyed limiter's table and the oracle's model of its memory cost
/// several times a plain call).
const CI_KEYED_SCENARIOS: &str = "5000";

/// The simulator's CI gate: a smoke sweep of each limiter (plain, keyed and shared) with
/// determinism checking, each required to reach every feature its summary's `coverage`
/// counts. (The oracle's planted-bug tests are ordinary tests
/// of `fixed-window-sim`, run with the workspace's.)
///
/// # Errors
///
/// If a smoke sweep fails.
pub fn ci() -> Result<(), Failure> {
    run(&Args {
        rest: vec![
            "--scenarios".to_owned(),
            CI_SCENARIOS.to_owned(),
            "--check-determinism".to_owned(),
            "--require-coverage".to_owned(),
        ],
    })?;
    run(&Args {
        rest: vec![
            "--limiter".to_owned(),
            "shared".to_owned(),
            "--scenarios".to_owned(),
            CI_SHARED_SCENARIOS.to_owned(),
            "--check-determinism".to_owned(),
            "--require-coverage".to_owned(),
        ],
    })?;
    run(&Args {
        rest: vec![
            "--limiter".to_owned(),
            "keyed".to_owned(),
            "--scenarios".to_owned(),
            CI_KEYED_SCENARIOS.to_owned(),
            "--check-determinism".to_owned(),
            "--require-coverage".to_owned(),
        ],
    })
}
