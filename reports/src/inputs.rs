//! Gathering the report's inputs from disk, noting what is missing instead of failing.

use std::fs;
use std::path::{Path, PathBuf};

use crate::bench_runs::{BenchRuns, KEYED_MEMORY, REDIS_LATENCY, SERVER_TIME};
use crate::cas_retries::CasRetries;
use crate::keyed_memory::KeyedMemory;
use crate::mutants::{Equivalents, MutationRun};
use crate::redis_latency::RedisLatency;
use crate::server_time::ServerTime;
use crate::sim_summary::SimSummary;
use crate::sim_trace::Trace;
use crate::sweep_provenance::SweepProvenance;

/// Where the inputs are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The runs `cargo xtask bench` recorded (`target/bench-runs`): read first.
    pub bench_runs: PathBuf,
    /// criterion's output directory (`target/criterion`): read only when no run was recorded,
    /// and then shown as of unknown origin.
    pub criterion: PathBuf,
    /// Retry counts of unknown origin, read with `criterion` (`target/cas-retries.json`).
    pub cas_retries: PathBuf,
    /// The shared limiter's percentiles of unknown origin, read with `criterion`
    /// (`target/redis-latency.json`, where the `redis` bench writes them).
    pub redis_latency: PathBuf,
    /// The keyed limiters' memory of unknown origin, read with `criterion`
    /// (`target/keyed-memory.json`, where the `keyed_memory` example writes it).
    pub keyed_memory: PathBuf,
    /// The server's time per decision of unknown origin, read with `criterion`
    /// (`target/redis-server-time.json`, where the `redis_server_time` example writes it).
    pub server_time: PathBuf,
    /// The simulator's output directory (`target/sim`), holding `summary.json` and
    /// `trace.jsonl`. The shared limiter's sweep writes its own beside it, in `sim-shared`
    /// (`target/sim-shared`), which is read from there.
    pub sim: PathBuf,
    /// Where `cargo xtask mutants` writes each crate's run (`target/mutants`, holding
    /// `<crate>/mutants.out/outcomes.json`).
    pub mutants: PathBuf,
    /// The survivors explained as equivalent (`docs/mutants.md`).
    pub mutant_notes: PathBuf,
}

/// The crates `cargo xtask mutants` runs over, as it names their directories.
pub const MUTATED_CRATES: [&str; 2] = ["core", "redis"];

impl Paths {
    /// Where the shared limiter's sweep wrote its summary: `sim-shared` beside [`sim`](Paths::sim).
    pub fn sim_shared(&self) -> PathBuf {
        self.sim.with_file_name("sim-shared")
    }
}

/// The inputs that could be read, and a line for each that could not.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The benchmark runs, if any were found.
    pub bench: Option<BenchRuns>,
    /// The simulator's summary.
    pub summary: Option<SimSummary>,
    /// The simulator's trace.
    pub trace: Option<Trace>,
    /// Which sweep wrote the trace, as its first line says.
    pub trace_sweep: Option<SweepProvenance>,
    /// The shared limiter's sweep summary (`cargo xtask simulate --limiter shared`).
    pub shared_summary: Option<SimSummary>,
    /// Each crate's mutation run that was found, by its name in [`MUTATED_CRATES`].
    pub mutants: Vec<(&'static str, MutationRun)>,
    /// The survivors explained as equivalent.
    pub equivalents: Equivalents,
    /// What is missing or unreadable, one sentence each.
    pub missing: Vec<String>,
}

impl Inputs {
    /// Reads every input under `paths`; a missing or unreadable one becomes a line in
    /// [`missing`](Inputs::missing), never an error.
    pub fn gather(paths: &Paths) -> Inputs {
        let mut inputs = Inputs::default();
        inputs.bench = gather_bench(paths, &mut inputs.missing);
        if let Some(bench) = &inputs.bench {
            inputs.missing.extend(bench.skipped.iter().cloned());
            if bench.is_recorded() {
                let dir = paths.bench_runs.display();
                if bench.with_cas_retries().is_none() {
                    inputs.missing.push(format!(
                        "CAS retry counts: none in {dir} (`cargo xtask bench` counts them after its first run)"
                    ));
                }
                if bench.with_redis_latency().is_none() {
                    inputs.missing.push(format!(
                        "the shared limiter's percentiles: no {REDIS_LATENCY} in {dir} (`cargo xtask bench` keeps it with each run of the redis bench)"
                    ));
                }
                if bench.with_keyed_memory().is_none() {
                    inputs.missing.push(format!(
                        "keyed memory: no {KEYED_MEMORY} in {dir} (`cargo xtask bench` counts it after its first run)"
                    ));
                }
                if bench.with_server_time().is_none() {
                    inputs.missing.push(format!(
                        "the server's time per decision: no {SERVER_TIME} in {dir} (`cargo xtask bench` measures it after its first run)"
                    ));
                }
            }
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
                inputs.trace_sweep = SweepProvenance::of_trace(&text);
            }
            Err(line) => inputs.missing.push(format!("simulator trace {line}")),
        }
        let shared_path = paths.sim_shared().join("summary.json");
        match read(&shared_path) {
            Ok(text) => match SimSummary::parse(&text) {
                Ok(summary) => inputs.shared_summary = Some(summary),
                Err(err) => inputs.missing.push(format!(
                    "shared-limiter simulation summary {} unreadable: {err}",
                    shared_path.display()
                )),
            },
            Err(line) => inputs.missing.push(format!(
                "shared-limiter simulation summary {}",
                line.replace(
                    "`cargo xtask simulate`",
                    "`cargo xtask simulate --limiter shared`"
                )
            )),
        }
        for name in MUTATED_CRATES {
            let path = paths.mutants.join(name).join("mutants.out/outcomes.json");
            match fs::read_to_string(&path) {
                Ok(text) => match MutationRun::parse(&text) {
                    Ok(run) => inputs.mutants.push((name, run)),
                    Err(err) => inputs
                        .missing
                        .push(format!("mutation run {} unreadable: {err}", path.display())),
                },
                // Mutation testing is slow and runs by hand, never in CI: a run not made is
                // said on its section, not listed as missing.
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => inputs
                    .missing
                    .push(format!("mutation run {}: {err}", path.display())),
            }
        }
        if let Ok(text) = fs::read_to_string(&paths.mutant_notes) {
            inputs.equivalents = Equivalents::parse(&text);
        }
        inputs
    }
}

/// The recorded runs if there are any, else criterion's latest results as of unknown origin.
fn gather_bench(paths: &Paths, missing: &mut Vec<String>) -> Option<BenchRuns> {
    if paths.bench_runs.is_dir() {
        match BenchRuns::load(&paths.bench_runs) {
            Ok(runs) if !runs.runs.is_empty() => return Some(runs),
            Ok(runs) => missing.extend(runs.skipped),
            Err(err) => missing.push(format!("benchmark runs unreadable: {err}")),
        }
    }
    if !paths.criterion.is_dir() {
        missing.push(format!(
            "no benchmark results: neither {} nor {} exists (run `cargo xtask bench`)",
            paths.bench_runs.display(),
            paths.criterion.display()
        ));
        return None;
    }
    let cas_retries = read_unrecorded(
        &paths.cas_retries,
        "CAS retry counts",
        "`cargo xtask bench` counts them",
        missing,
        CasRetries::parse,
    );
    let redis_latency = read_unrecorded(
        &paths.redis_latency,
        "the shared limiter's percentiles",
        "the redis bench writes them",
        missing,
        RedisLatency::parse,
    );
    let keyed_memory = read_unrecorded(
        &paths.keyed_memory,
        "keyed memory",
        "the keyed_memory example writes it",
        missing,
        KeyedMemory::parse,
    );
    let server_time = read_unrecorded(
        &paths.server_time,
        "the server's time per decision",
        "the redis_server_time example writes it",
        missing,
        ServerTime::parse,
    );
    match BenchRuns::latest(&paths.criterion, cas_retries) {
        Ok(runs) if runs.runs.iter().all(|run| run.results.is_empty()) => {
            missing.push(format!(
                "no benchmark results under {} (run `cargo xtask bench`)",
                paths.criterion.display()
            ));
            None
        }
        Ok(mut runs) => {
            for run in &mut runs.runs {
                run.redis_latency.clone_from(&redis_latency);
                run.keyed_memory.clone_from(&keyed_memory);
                run.server_time.clone_from(&server_time);
            }
            Some(runs)
        }
        Err(err) => {
            missing.push(format!("benchmark results unreadable: {err}"));
            None
        }
    }
}

/// A file of unknown origin read beside criterion's results: `None`, with a line in
/// `missing` naming `what`, its path and (if absent) what writes it, if it cannot be used.
fn read_unrecorded<T>(
    path: &Path,
    what: &str,
    written_by: &str,
    missing: &mut Vec<String>,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Option<T> {
    match fs::read_to_string(path) {
        Ok(text) => match parse(&text) {
            Ok(parsed) => Some(parsed),
            Err(err) => {
                missing.push(format!("{what} {} unreadable: {err}", path.display()));
                None
            }
        },
        Err(err) => {
            missing.push(format!("{what} {}: {err} ({written_by})", path.display()));
            None
        }
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
