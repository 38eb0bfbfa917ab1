//! `cargo xtask report`: the HTML report.

use crate::cargo::Failure;

/// Flags of `cargo xtask report`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Renders the report.
///
/// # Errors
///
/// If the report cannot be rendered.
pub fn run(_args: &Args) -> Result<(), Failure> {
    Err("the report is not built yet".to_owned())
}

/// The report's CI gate.
///
/// # Errors
///
/// If the report cannot be rendered.
#[allow(clippy::unnecessary_wraps)] // replaced when this area is built
pub fn ci() -> Result<(), Failure> {
    eprintln!("xtask: report: not built yet, nothing to run");
    Ok(())
}
