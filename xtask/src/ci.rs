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
    // The workspace as the tests build it, then each published crate with all its features
    // (integrations the workspace build leaves out).
    let clippy_scopes: [(&str, &[&str]); 3] = [
        ("clippy", &["--workspace"]),
        (
            "clippy (core integrations)",
            &["-p", "fixed-window", "--all-features"],
        ),
        (
            "clippy (redis integrations)",
            &["-p", "fixed-window-redis", "--all-features"],
        ),
    ];
    for (step, scope) in clippy_scopes {
        let mut clippy = cargo(["clippy"]);
        clippy
            .args(scope)
            .args(["--all-targets", "--", "-D", "warnings"]);
        run_step(step, clippy)?;
    }
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
