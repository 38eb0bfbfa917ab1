//! `fixed-window-sim`: sweeps seeded scenarios through the limiter and checks each with the
//! oracle; replays one scenario; writes traces and a summary for the report.

use std::fs::{self, File};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use fixed_window_sim::{
    ClockKind, Flaw, KeyedFlaw, Provenance, Run, Scenario, ScenarioId, Summary, Sweep, Target, run,
    sweep, verdict, write_trace,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The environment variable that may set the seed.
const SEED_VARIABLE: &str = "FIXED_WINDOW_SEED";

/// Deterministic simulation of the fixed-window rate limiter.
#[derive(Debug, Parser)]
#[command(name = "fixed-window-sim", version)]
struct Cli {
    /// The sweep's seed (default: `FIXED_WINDOW_SEED` from the environment, else 24301).
    #[arg(long)]
    seed: Option<u64>,
    /// Scenarios in the whole sweep (at least 1).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    scenarios: u64,
    /// Run only shard I of N (scenario k belongs to shard k mod N), e.g. `--shard 0/4`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(u64, u64)>,
    /// Replay one scenario by the id a failure printed, e.g. `--replay 1234:0-5,9`.
    #[arg(long, value_name = "ID")]
    replay: Option<ScenarioId>,
    /// Write the full event trace (JSON Lines) of the replayed scenario, or of the sweep's
    /// representative scenario, to FILE.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Run every scenario twice and compare trace hashes.
    #[arg(long)]
    check_determinism: bool,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Which limiter to drive: `plain` (`RateLimiter`) or `keyed` (`KeyedRateLimiter`, on
    /// scenarios whose callers are drawn over keys).
    #[arg(long, value_enum, default_value_t = Limiter::Plain)]
    limiter: Limiter,
    /// Drive a deliberately broken limiter of that kind instead, to watch the oracle catch it
    /// (a flaw of `fixed-window-broken`'s catalogue, plain or keyed as `--limiter` says).
    #[arg(long, value_name = "FLAW")]
    broken: Option<String>,
    /// Where the sweep writes `summary.json` and `trace.jsonl`.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

/// The limiters the simulator drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Limiter {
    /// `fixed_window::RateLimiter`.
    Plain,
    /// `fixed_window::KeyedRateLimiter`.
    Keyed,
}

/// The target `--limiter` and `--broken` name.
fn target(limiter: Limiter, broken: Option<&str>) -> Result<Target, String> {
    Ok(match (limiter, broken) {
        (Limiter::Plain, None) => Target::Real,
        (Limiter::Keyed, None) => Target::Keyed,
        (Limiter::Plain, Some(name)) => Target::Broken(
            name.parse::<Flaw>()
                .map_err(|error| format!("--broken: {error} (or --limiter keyed)"))?,
        ),
        (Limiter::Keyed, Some(name)) => Target::BrokenKeyed(
            name.parse::<KeyedFlaw>()
                .map_err(|error| format!("--broken: {error}"))?,
        ),
    })
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let error = || format!("expected I/N with I < N, e.g. 0/4, not `{s}`");
    let (i, n) = s.split_once('/').ok_or_else(error)?;
    let i = i.trim().parse::<u64>().map_err(|_| error())?;
    let n = n.trim().parse::<u64>().map_err(|_| error())?;
    if n == 0 || i >= n {
        return Err(error());
    }
    Ok((i, n))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("fixed-window-sim: {message}");
            ExitCode::from(2)
        }
    }
}

/// Whether everything passed, or a message saying what could not be done.
fn execute(cli: &Cli) -> Result<bool, String> {
    let seed = match cli.seed {
        Some(seed) => seed,
        None => match std::env::var(SEED_VARIABLE) {
            Ok(value) => value
                .trim()
                .parse()
                .map_err(|_| format!("{SEED_VARIABLE}=`{value}` is not a u64"))?,
            Err(_) => Sweep::DEFAULT_SEED,
        },
    };
    let target = target(cli.limiter, cli.broken.as_deref())?;
    let command = command_line(target);
    if let Some(id) = &cli.replay {
        return replay(id, target, cli.trace.as_deref(), &command);
    }
    let threads = cli.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    let config = Sweep {
        seed,
        scenarios: cli.scenarios,
        shard: cli.shard.unwrap_or((0, 1)),
        threads,
        target,
        check_determinism: cli.check_determinism,
    };
    let out_dir = cli
        .out_dir
        .clone()
        .unwrap_or_else(|| default_out_dir(target));
    let mine = (0..config.scenarios)
        .filter(|k| k % config.shard.1 == config.shard.0)
        .count() as u64;
    let bar = progress_bar(mine);
    let provenance = config.provenance(&command, target.name(), unix_seconds());
    let started = std::time::Instant::now();
    let summary = sweep(&config, |n| bar.inc(n));
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    print_summary(&summary, wall, threads);
    write_summary(&out_dir, &summary, wall, &provenance)?;
    let trace_path = cli
        .trace
        .clone()
        .unwrap_or_else(|| out_dir.join("trace.jsonl"));
    if let Some((scenario, trace)) = representative(&config) {
        write_trace_file(&trace_path, &scenario, &trace, Some(&provenance))?;
        eprintln!(
            "trace of scenario {} written to {}",
            scenario.id,
            trace_path.display()
        );
    }
    for failure in &summary.failures {
        let first = failure.violations.first().map_or_else(
            || "trace differs between runs".to_owned(),
            ToString::to_string,
        );
        println!("FAIL scenario {}: {first}", failure.id);
        println!("  replay: {command} --replay {}", failure.shrunk);
    }
    Ok(summary.failures.is_empty())
}

/// The command that reruns this binary with the same target, for replay lines.
fn command_line(target: Target) -> String {
    let mut command = "cargo xtask simulate".to_owned();
    if target.is_keyed() {
        command.push_str(" --limiter keyed");
    }
    if let Target::Broken(_) | Target::BrokenKeyed(_) = target {
        command.push_str(" --broken ");
        command.push_str(target.name());
    }
    command
}

/// `target/sim` for the plain limiter, where the report reads; `target/sim/keyed` for the
/// keyed one.
fn default_out_dir(target: Target) -> PathBuf {
    let sim = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("target"), |root| root.join("target"))
        .join("sim");
    if target.is_keyed() {
        sim.join("keyed")
    } else {
        sim
    }
}

fn progress_bar(length: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(length);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} scenarios ({per_sec}, eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar
}

fn replay(
    id: &ScenarioId,
    target: Target,
    trace_path: Option<&Path>,
    command: &str,
) -> Result<bool, String> {
    let scenario = target.scenario(id);
    let trace = run(&scenario, target).map_err(|error| format!("scenario {id}: {error}"))?;
    let verdict = verdict(&scenario, &trace);
    let violations = verdict.violations;
    let config = &scenario.config;
    println!(
        "scenario {id}: limit {}, period {:?}, max wait {:?}, clock {:?}, origin {}, {} callers, patterns {:?}",
        config.limit,
        config.period,
        config.max_wait,
        scenario.clock.kind(),
        scenario.origin(),
        scenario.callers.len(),
        scenario.patterns,
    );
    if let Some(population) = scenario.keys {
        println!("keys: {population:?}");
    }
    println!(
        "{} calls, {} permits, {} rejections, {} waits, {} interrupts, trace hash {:016x}",
        trace.stats.calls,
        trace.stats.permits,
        trace.stats.rejections,
        trace.stats.waits,
        trace.stats.interrupts,
        trace.trace_hash(),
    );
    if let Some(memory) = verdict.memory {
        println!(
            "keys held: at most {} (the bound then {}), the bound at most {}, checked after {} events",
            memory.most_held, memory.bound_then, memory.most_bound, memory.checked
        );
    }
    if let Some(path) = trace_path {
        write_trace_file(path, &scenario, &trace, None)?;
        println!("trace written to {}", path.display());
    }
    for violation in &violations {
        println!("VIOLATION {violation}");
    }
    for (caller, message) in &trace.panics {
        println!("PANIC caller {caller}: {message}");
    }
    if !violations.is_empty() {
        println!("replay: {command} --replay {id}");
    }
    Ok(violations.is_empty())
}

/// A scenario worth charting: an ordinary clock, a limit above one, several windows and
/// waits. The first such among the sweep's (or shard's) own first scenarios, else the first
/// of them, so that the trace is of a scenario the summary counts.
fn representative(config: &Sweep) -> Option<(Scenario, Run)> {
    let (shard, shards) = config.shard;
    let mut fallback = None;
    let own = (0..config.scenarios).filter(|index| index % shards.max(1) == shard);
    for index in own.take(500) {
        let scenario = config.target.scenario(&config.scenario(index));
        let Ok(trace) = run(&scenario, config.target) else {
            continue;
        };
        let stats = trace.stats;
        let limit = u64::from(scenario.config.limit);
        let good = scenario.clock.kind() == ClockKind::Ordinary
            && (2..=20).contains(&limit)
            && stats.waits >= 3
            && stats.permits >= 4 * limit
            && (20..=400).contains(&scenario.callers.len());
        if good {
            return Some((scenario, trace));
        }
        if fallback.is_none() {
            fallback = Some((scenario, trace));
        }
    }
    fallback
}

/// Writes the trace of `scenario`, headed by the sweep it belongs to (a replay's has none).
fn write_trace_file(
    path: &Path,
    scenario: &Scenario,
    trace: &Run,
    sweep: Option<&Provenance>,
) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    let file =
        File::create(path).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    let mut out = BufWriter::new(file);
    sweep
        .map_or(Ok(()), |sweep| {
            writeln!(out, "{}", sweep.trace_line().map_err(io::Error::other)?)
        })
        .and_then(|()| write_trace(&mut out, scenario, trace))
        .and_then(|()| out.flush())
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// Seconds since the Unix epoch now: when a sweep started, for its summary and trace.
fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

#[allow(clippy::cast_precision_loss)]
fn calls_per_second(summary: &Summary, wall: f64) -> f64 {
    if wall > 0.0 {
        summary.calls as f64 / wall
    } else {
        0.0
    }
}

fn print_summary(summary: &Summary, wall: f64, threads: usize) {
    let years = summary.simulated_ns / 1_000_000_000 / 3600 / 24 / 365;
    println!("fixed-window simulation, seed {}", summary.seed);
    println!("  scenarios          {:>16}", summary.scenarios);
    println!("  simulated calls    {:>16}", summary.calls);
    println!("  permits            {:>16}", summary.permits);
    println!("  rejections         {:>16}", summary.rejections);
    println!("  waits              {:>16}", summary.waits);
    println!("  interrupts         {:>16}", summary.interrupts);
    println!("  events             {:>16}", summary.events);
    println!(
        "  simulated time     {:>16} ns (~{years} years)",
        summary.simulated_ns
    );
    println!("  wall time          {wall:>16.2} s on {threads} threads");
    println!(
        "  calls per second   {:>16.0}",
        calls_per_second(summary, wall)
    );
    if let Some(memory) = &summary.memory {
        println!("  keys drawn         {:>16}", summary.keys);
        println!("  most in a scenario {:>16}", summary.most_keys);
        for (population, count) in &summary.populations {
            println!("  {population:<8} scenarios {count:>16}");
        }
        println!("  keys held, checked {:>16} times", memory.checked);
        println!(
            "  most keys held     {:>16} (bound then {})",
            memory.most_held, memory.bound_then
        );
        println!("  largest bound      {:>16}", memory.most_bound);
        println!("  held at the bound  {:>16} times", memory.at_bound);
    }
    println!("  violations (scenarios breaking each rule)");
    for (name, count) in &summary.violations {
        println!("    {name:<20} {count:>8}");
    }
}

fn write_summary(
    dir: &Path,
    summary: &Summary,
    wall: f64,
    provenance: &Provenance,
) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let json = serde_json::json!({
        "seed": summary.seed,
        "scenarios": summary.scenarios,
        "calls": summary.calls,
        "permits": summary.permits,
        "rejections": summary.rejections,
        "waits": summary.waits,
        "interrupts": summary.interrupts,
        "violations": summary.violations,
        // As a string: u128 does not fit every JSON reader's numbers.
        "simulated_ns": summary.simulated_ns.to_string(),
        "wall_seconds": wall,
        "calls_per_second": calls_per_second(summary, wall),
        "sweep": provenance,
    });
    let mut json = json;
    if let (Some(memory), Some(object)) = (&summary.memory, json.as_object_mut()) {
        object.insert(
            "keys".to_owned(),
            serde_json::json!({
                "drawn": summary.keys,
                "most_in_a_scenario": summary.most_keys,
                "populations": summary.populations,
                "held_checked": memory.checked,
                "most_held": memory.most_held,
                "bound_then": memory.bound_then,
                "largest_bound": memory.most_bound,
                "held_at_bound": memory.at_bound,
            }),
        );
    }
    let path = dir.join("summary.json");
    fs::write(&path, format!("{json:#}\n"))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}
