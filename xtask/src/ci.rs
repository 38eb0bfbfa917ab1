//! `cargo xtask ci`: everything CI runs, in order, stopping at the first failure.

use crate::cargo::{Failure, cargo, run as run_step};

/// Flags of `cargo xtask ci`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs formatting, lints, tests, docs, then each area's CI gate.
///
/// # Errors
///
/// The first step that fails.
pub fn run(_args: &Args) -> Result<(), Failure> {
    run_step("format", cargo(["fmt", "--all", "--", "--check"]))?;
    run_step(
        "clippy",
        cargo([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    run_step(
        "clippy (core integrations)",
        cargo([
            "clippy",
            "-p",
            "fixed-window",
            "--all-features",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    run_step(
        "clippy (redis integrations)",
        cargo([
            "clippy",
            "-p",
            "fixed-window-redis",
            "--all-features",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    run_step("tests", cargo(["test", "--workspace"]))?;
    run_step(
        "tests (core integrations)",
        cargo(["test", "-p", "fixed-window", "--all-features"]),
    )?;
    let mut doc = cargo(["doc", "--workspace", "--no-deps", "--all-features"]);
    doc.env("RUSTDOCFLAGS", "-D warnings");
    run_step("docs", doc)?;
    crate::simulate::ci()?;
    crate::models::ci()?;
    crate::bench::ci()?;
    crate::report::ci()?;
    eprintln!("xtask: ci passed");
    Ok(())
}
