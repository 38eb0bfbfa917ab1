//! `cargo xtask mutants`: cargo-mutants over the core crate, judged by the whole test suite:
//! core's own tests (doctests included), the simulator's and the models' normal-build tests;
//! or (`--crate redis`) over the shared limiter's decision code (its protocol, its memory of
//! full windows, its coalescing), judged by its own tests, its tests on real servers
//! (`fixed-window-redis-tests`), the fault tests and the simulator's.
//!
//! Slow (every mutant is a rebuild and a test run), so it is not part of CI. cargo-mutants
//! copies the workspace to a scratch directory and builds there, so it never touches the
//! workspace's own `target`.

use std::process::Command;

use crate::cargo::{Failure, cargo, run as run_step};

/// Flags of `cargo xtask mutants`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Parallel build-and-test jobs (each is a full build of core and the test packages).
    #[arg(long, default_value_t = 1)]
    pub jobs: u32,
    /// The crate to mutate.
    #[arg(long = "crate", value_enum, default_value_t = Mutated::Core)]
    pub krate: Mutated,
    /// Where cargo-mutants writes `<crate>/mutants.out` (the score and the surviving mutants),
    /// which `cargo xtask report` reads.
    #[arg(long, default_value = "target/mutants")]
    pub output: String,
    /// Seconds a mutant's test run may take before it is reported as timed out (cargo-mutants
    /// lists those apart from caught and missed). Explicit because cargo-mutants' baseline runs
    /// only core's tests, and some mutants (a window that never advances) make a waiting call
    /// on the system clock spin forever.
    #[arg(long, default_value_t = 60)]
    pub timeout: u32,
    /// Only mutants in files matching this glob (e.g. `core/src/budget.rs`); for the redis
    /// crate, its decision code by default.
    #[arg(long)]
    pub file: Option<String>,
    /// Install cargo-mutants (`cargo install cargo-mutants --locked`) if it is missing.
    #[arg(long)]
    pub install: bool,
}

/// A crate `cargo xtask mutants` runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mutated {
    /// `fixed-window`, all of it.
    Core,
    /// `fixed-window-redis`, its decision code.
    Redis,
}

impl Mutated {
    /// Its directory under the output, as the report reads it.
    fn dir(self) -> &'static str {
        match self {
            Mutated::Core => "core",
            Mutated::Redis => "redis",
        }
    }

    fn package(self) -> &'static str {
        match self {
            Mutated::Core => "fixed-window",
            Mutated::Redis => "fixed-window-redis",
        }
    }

    /// The packages whose tests judge each mutant.
    fn test_packages(self) -> &'static [&'static str] {
        match self {
            Mutated::Core => &["fixed-window", "fixed-window-sim", "fixed-window-models"],
            Mutated::Redis => &[
                "fixed-window-redis",
                "fixed-window-redis-tests",
                "fixed-window-faults",
                "fixed-window-sim",
            ],
        }
    }

    /// The files mutated unless `--file` says otherwise: everything, or the decisions.
    fn files(self) -> &'static [&'static str] {
        match self {
            Mutated::Core => &[],
            Mutated::Redis => &[
                "redis/src/protocol.rs",
                "redis/src/memory.rs",
                "redis/src/coalescer.rs",
            ],
        }
    }
}

/// Runs cargo-mutants over `fixed-window`.
///
/// # Errors
///
/// If cargo-mutants is missing (and `--install` was not given) or cannot be installed, or if
/// any mutant survives or the baseline fails (cargo-mutants' own exit status).
pub fn run(args: &Args) -> Result<(), Failure> {
    if !installed() {
        if !args.install {
            return Err(
                "cargo-mutants is not installed: run `cargo install cargo-mutants \
                        --locked`, or pass --install"
                    .to_owned(),
            );
        }
        run_step(
            "mutants: install",
            cargo(["install", "cargo-mutants", "--locked"]),
        )?;
    }
    // All features, or the mutants in feature-gated code (the tower layer, the tokio clock)
    // would survive untested.
    let mutated = args.krate;
    let mut command = cargo([
        "mutants",
        "--package",
        mutated.package(),
        "--all-features",
        "--gitignore",
        "true",
    ]);
    for package in mutated.test_packages() {
        command.args(["--test-package", package]);
    }
    let output = std::path::Path::new(&args.output).join(mutated.dir());
    command
        .args(["--jobs", &args.jobs.to_string()])
        .args(["--timeout", &args.timeout.to_string()])
        .arg("--output")
        .arg(output);
    match &args.file {
        Some(file) => {
            command.args(["--file", file]);
        }
        None => {
            for file in mutated.files() {
                command.args(["--file", file]);
            }
        }
    }
    // The scratch copy must build in its own target directory, not a shared one.
    command.env_remove("CARGO_TARGET_DIR");
    run_step("mutants", command)
}

fn installed() -> bool {
    let mut probe: Command = cargo(["mutants", "--version"]);
    probe
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    probe.status().is_ok_and(|status| status.success())
}
