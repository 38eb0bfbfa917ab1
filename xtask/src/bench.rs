//! `cargo xtask bench`: the criterion benchmarks.

use crate::cargo::Failure;

/// Flags of `cargo xtask bench`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the benchmarks.
///
/// # Errors
///
/// If a benchmark fails to build or run.
pub fn run(_args: &Args) -> Result<(), Failure> {
    Err("the benchmarks are not built yet".to_owned())
}

/// The benchmarks' CI gate.
///
/// # Errors
///
/// If a benchmark fails to build or run.
#[allow(clippy::unnecessary_wraps)] // replaced when this area is built
pub fn ci() -> Result<(), Failure> {
    eprintln!("xtask: bench: not built yet, nothing to run");
    Ok(())
}
