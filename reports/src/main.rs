//! `fixed-window-report`: renders the HTML report from criterion's and the simulator's output.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use fixed_window_reports::{Inputs, Paths, render};

/// Renders the benchmark and simulation report into one HTML page with its charts.
#[derive(Debug, Parser)]
#[command(name = "fixed-window-report")]
struct Cli {
    /// The runs `cargo xtask bench` recorded, each with its manifest.
    #[arg(long, default_value = "target/bench-runs")]
    bench_runs: PathBuf,
    /// criterion's output directory, read only if no run was recorded.
    #[arg(long, default_value = "target/criterion")]
    criterion: PathBuf,
    /// Retry counts read with `--criterion`.
    #[arg(long, default_value = "target/cas-retries.json")]
    cas_retries: PathBuf,
    /// The shared limiter's percentiles read with `--criterion`.
    #[arg(long, default_value = "target/redis-latency.json")]
    redis_latency: PathBuf,
    /// The keyed limiters' memory read with `--criterion`.
    #[arg(long, default_value = "target/keyed-memory.json")]
    keyed_memory: PathBuf,
    /// The server's time per decision read with `--criterion`.
    #[arg(long, default_value = "target/redis-server-time.json")]
    server_time: PathBuf,
    /// The simulator's output directory (summary.json, trace.jsonl).
    #[arg(long, default_value = "target/sim")]
    sim: PathBuf,
    /// Each crate's cargo-mutants run, in `<crate>/mutants.out`.
    #[arg(long, default_value = "target/mutants")]
    mutants: PathBuf,
    /// The survivors explained as equivalent.
    #[arg(long, default_value = "docs/mutants.md")]
    mutant_notes: PathBuf,
    /// Where to write index.html and the charts.
    #[arg(long, default_value = "target/report")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let inputs = Inputs::gather(&Paths {
        bench_runs: cli.bench_runs,
        criterion: cli.criterion,
        cas_retries: cli.cas_retries,
        redis_latency: cli.redis_latency,
        keyed_memory: cli.keyed_memory,
        server_time: cli.server_time,
        sim: cli.sim,
        mutants: cli.mutants,
        mutant_notes: cli.mutant_notes,
    });
    let report = render(&inputs);
    for line in &report.missing {
        eprintln!("report: missing: {line}");
    }
    for line in &report.warnings {
        eprintln!("report: warning: {line}");
    }
    match report.write(&cli.out) {
        Ok(()) => {
            eprintln!(
                "report: wrote {} with {} charts",
                cli.out.join("index.html").display(),
                report.charts.len()
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("report: cannot write {}: {err}", cli.out.display());
            ExitCode::FAILURE
        }
    }
}
