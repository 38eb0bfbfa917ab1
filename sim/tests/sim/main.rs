//! Tests of the simulator: determinism, coverage of the scenario space, the oracle catching
//! planted limiters, the shared limiter's lease decisions against the spec's rules, replay and
//! shrinking, the command line, and sweeps split into shards.

mod cli;
mod cluster;
mod coverage;
mod coverage_gate;
mod determinism;
mod keyed;
mod lease_rules;
mod oracle;
mod planted;
mod replay;
mod shards;
mod shared;
mod shared_key_live;
mod shared_peeks;
mod shared_planted;
mod trace;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fixed_window_sim::{Invariant, Scenario, ScenarioId, Target, Violation, check, run};

/// Runs the scenario of `seed` against `target` and checks it.
fn violations(id: &ScenarioId, target: Target) -> (Scenario, Vec<Violation>) {
    let scenario = Scenario::generate(id);
    let trace = run(&scenario, target).expect("generated configurations are valid");
    let violations = check(&scenario, &trace);
    (scenario, violations)
}

/// The invariants broken in `violations`, without repeats.
fn rules_broken(violations: &[Violation]) -> Vec<Invariant> {
    let mut invariants: Vec<Invariant> = violations.iter().map(|v| v.invariant).collect();
    invariants.sort_unstable();
    invariants.dedup();
    invariants
}

/// Runs the simulator's binary with `args`, whatever seed the environment names.
fn simulator(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fixed-window-sim"))
        .args(args)
        .env_remove("FIXED_WINDOW_SEED")
        .output()
        .expect("the simulator binary runs")
}

/// A directory of its own under the target directory, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
