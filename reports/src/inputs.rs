//! Gathering the report's inputs from disk, noting what is missing instead of failing.

use std::fs;
use std::path::{Path, PathBuf};

use crate::bench_results::BenchResults;
use crate::cas_retries::CasRetries;
use crate::sim_summary::SimSummary;
use crate::sim_trace::Trace;

/// Where the inputs are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// criterion's output directory (`target/criterion`).
    pub criterion: PathBuf,
    /// The retry counts of `cargo xtask bench` (`target/cas-retries.json`).
    pub cas_retries: PathBuf,
    /// The simulator's output directory (`target/sim`), holding `summary.json` and
    /// `trace.jsonl`.
    pub sim: PathBuf,
}

/// The inputs that could be read, and a line for each that could not.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// criterion's results, if any were found.
    pub bench: Option<BenchResults>,
    /// The retry counts.
    pub cas_retries: Option<CasRetries>,
    /// The simulator's summary.
    pub summary: Option<SimSummary>,
    /// The simulator's trace.
    pub trace: Option<Trace>,
    /// What is missing or unreadable, one sentence each.
    pub missing: Vec<String>,
}

impl Inputs {
    /// Reads every input under `paths`; a missing or unreadable one becomes a line in
    /// [`missing`](Inputs::missing), never an error.
    pub fn gather(paths: &Paths) -> Inputs {
        let mut inputs = Inputs::default();
        if paths.criterion.is_dir() {
            match BenchResults::load(&paths.criterion) {
                Ok(results) if results.is_empty() => inputs.missing.push(format!(
                    "no benchmark results under {} (run `cargo xtask bench`)",
                    paths.criterion.display()
                )),
                Ok(results) => inputs.bench = Some(results),
                Err(err) => inputs
                    .missing
                    .push(format!("benchmark results unreadable: {err}")),
            }
        } else {
            inputs.missing.push(format!(
                "no benchmark results: {} does not exist (run `cargo xtask bench`)",
                paths.criterion.display()
            ));
        }
        match fs::read_to_string(&paths.cas_retries) {
            Ok(text) => match CasRetries::parse(&text) {
                Ok(counts) => inputs.cas_retries = Some(counts),
                Err(err) => inputs.missing.push(format!(
                    "CAS retry counts {} unreadable: {err}",
                    paths.cas_retries.display()
                )),
            },
            Err(err) => inputs.missing.push(format!(
                "CAS retry counts {}: {err} (`cargo xtask bench` writes them)",
                paths.cas_retries.display()
            )),
        }
        let summary_path = paths.sim.join("summary.json");
        match read(&summary_path) {
            Ok(text) => match SimSummary::parse(&text) {
                Ok(summary) => inputs.summary = Some(summary),
                Err(err) => inputs.missing.push(format!(
                    "simulator summary {} unreadable: {err}",
                    summary_path.display()
                )),
            },
            Err(line) => inputs.missing.push(format!("simulator summary {line}")),
        }
        let trace_path = paths.sim.join("trace.jsonl");
        match read(&trace_path) {
            Ok(text) => {
                let trace = Trace::parse(&text);
                if trace.scenarios.is_empty() {
                    inputs.missing.push(format!(
                        "simulator trace {} holds no scenario",
                        trace_path.display()
                    ));
                }
                inputs.trace = Some(trace);
            }
            Err(line) => inputs.missing.push(format!("simulator trace {line}")),
        }
        inputs
    }
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            format!("{}: not found (run `cargo xtask simulate`)", path.display())
        } else {
            format!("{}: {err}", path.display())
        }
    })
}
