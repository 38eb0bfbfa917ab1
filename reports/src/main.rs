//! `fixed-window-report`: renders the HTML report from criterion's and the simulator's output.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use fixed_window_reports::{Inputs, Paths, render};

/// Renders the benchmark and simulation report into one HTML page with its charts.
#[derive(Debug, Parser)]
#[command(name = "fixed-window-report")]
struct Cli {
    /// criterion's output directory.
    #[arg(long, default_value = "target/criterion")]
    criterion: PathBuf,
    /// The retry counts written by `cargo xtask bench`.
    #[arg(long, default_value = "target/cas-retries.json")]
    cas_retries: PathBuf,
    /// The simulator's output directory (summary.json, trace.jsonl).
    #[arg(long, default_value = "target/sim")]
    sim: PathBuf,
    /// Where to write index.html and the charts.
    #[arg(long, default_value = "target/report")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let inputs = Inputs::gather(&Paths {
        criterion: cli.criterion,
        cas_retries: cli.cas_retries,
        sim: cli.sim,
    });
    let report = render(&inputs);
    for line in &report.missing {
        eprintln!("report: missing: {line}");
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
