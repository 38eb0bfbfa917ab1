//! The project's task runner: `cargo xtask <command>`.
//!
//! Each command is its own module with a `run`; this file only parses flags and dispatches.

mod bench;
mod cargo;
mod ci;
mod lease_binding;
mod models;
mod mutants;
mod report;
mod server_cost;
mod simulate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tasks of the fixed-window workspace.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "Tasks of the fixed-window workspace")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the deterministic simulator: a seeded sweep of scenarios checked by the oracle
    /// (`simulate merge FILES…` merges the summaries of a sweep's shards).
    Simulate(simulate::Args),
    /// Run the loom and shuttle models of the limiter.
    Models(models::Args),
    /// Run the criterion benchmarks.
    Bench(bench::Args),
    /// Render the HTML report from benchmark and simulator results.
    Report(report::Args),
    /// Run cargo-mutants over the core crate, or the redis crate's decision code (slow; not part of CI).
    Mutants(mutants::Args),
    /// Measure what a decision costs the Redis server: envoy's pair, the floor script and the
    /// shared limiter's script, from `INFO commandstats` and the main thread's CPU.
    ServerCost(server_cost::Args),
    /// Measure leased shares where the limit binds: processes leasing on one key, the permits
    /// granted per window against the limit and the bound, and the server's cost per permit.
    LeaseBinding(lease_binding::Args),
    /// One leasing process of `lease-binding` (started by it).
    #[command(hide = true)]
    LeaseBindingWorker(lease_binding::WorkerArgs),
    /// Run everything CI runs.
    Ci(ci::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(&args),
        Command::Models(args) => models::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Mutants(args) => mutants::run(&args),
        Command::ServerCost(args) => server_cost::run(&args),
        Command::LeaseBinding(args) => lease_binding::run(&args),
        Command::LeaseBindingWorker(args) => lease_binding::run_worker(&args),
        Command::Ci(args) => ci::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err}");
            ExitCode::FAILURE
        }
    }
}
