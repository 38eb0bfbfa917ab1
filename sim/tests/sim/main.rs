//! Tests of the simulator: determinism, coverage of the scenario space, the oracle catching
//! planted limiters, replay and shrinking, the command line, and sweeps split into shards.

mod cli;
mod coverage;
mod coverage_gate;
mod determinism;
mod keyed;
mod oracle;
mod planted;
mod replay;
mod shards;
mod shared;
mod trace;

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
