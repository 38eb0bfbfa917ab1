//! `fixed-window-sim`: sweeps seeded scenarios through the limiter and checks each with the
//! oracle; replays one scenario; writes traces and a summary for the report.

/// The simulated server's Lua makes and frees a score of small blocks per simulated call;
/// mimalloc serves them in fewer instructions than the C library's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fs::{self, File};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

use clap::Parser;
use fixed_window_sim::{
    ClockKind, Coverage, KeyedPlantedBug, PlantedBug, Provenance, Run, Scenario, ScenarioId,
    Summary, Sweep, Target, coverage_failure, run, sweep, verdict, write_trace,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

mod merge;
mod shared_cli;
mod summary_file;

/// The environment variable that may set the seed.
const SEED_VARIABLE: &str = "FIXED_WINDOW_SEED";

/// Deterministic simulation of the fixed-window rate limiter.
#[derive(Debug, Parser)]
#[command(
    name = "fixed-window-sim",
    version,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The sweep's seed (default: `FIXED_WINDOW_SEED` from the environment, else 24301).
    #[arg(long)]
    seed: Option<u64>,
    /// Scenarios in the whole sweep (at least 1).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    scenarios: u64,
    /// Run only shard I of N (scenario k belongs to shard k mod N), e.g. `--shard 0/4`.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Replay one scenario by the id a failure printed, e.g. `--replay 1234:0-5,9`.
    #[arg(long, value_name = "ID")]
    replay: Option<ScenarioId>,
    /// With `--limiter shared --replay`: the faults and processes a shrink kept, as a failure
    /// printed them, e.g. `--cut p:0,2/f:1/l:0`.
    #[arg(long, value_name = "CUT", requires = "replay")]
    cut: Option<fixed_window_sim::shared::SharedCut>,
    /// Write the full event trace (JSON Lines) of the replayed scenario, or of the sweep's
    /// representative scenario, to FILE.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Run every scenario twice and compare trace hashes.
    #[arg(long)]
    check_determinism: bool,
    /// Worker threads, at least 1 (default: the machine's cores).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    threads: Option<NonZeroUsize>,
    /// Which limiter to drive: `plain` (`RateLimiter`), `keyed` (`KeyedRateLimiter`, on
    /// scenarios whose callers are drawn over keys) or `shared` (`fixed-window-redis`'s
    /// `SharedRateLimiter`: client processes, a network, a simulated Redis, faults).
    #[arg(long, value_enum, default_value_t = Limiter::Plain)]
    limiter: Limiter,
    /// Drive a limiter with this planted bug instead, to watch the oracle catch it (one of
    /// `fixed-window-broken`'s catalogue, plain or keyed as `--limiter` says, or one of the
    /// shared limiter's). `--broken`, its former name, is accepted too.
    #[arg(long, alias = "broken", value_name = "BUG")]
    planted: Option<String>,
    /// Fail (exit 1), naming them, if any feature the summary's `coverage` counts was reached
    /// by no scenario of the sweep (or of this shard).
    #[arg(long)]
    require_coverage: bool,
    /// Where the sweep writes `summary.json` and `trace.jsonl`.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

/// What else the simulator does than sweep or replay.
#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Merge the `summary.json` of each shard of a sweep (`--shard I/N`) into the summary of
    /// the whole sweep; exit 1 if it holds a violation, 2 if the files are not one sweep's
    /// shards.
    Merge(merge::Args),
}

/// The limiters the simulator drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Limiter {
    /// `fixed_window::RateLimiter`.
    #[value(alias = "in-process")]
    Plain,
    /// `fixed_window::KeyedRateLimiter`.
    Keyed,
    /// `fixed_window_redis::SharedRateLimiter`.
    Shared,
}

/// The in-process target `--planted` names, for the keyed limiter if `keyed`.
fn target(keyed: bool, planted: Option<&str>) -> Result<Target, String> {
    Ok(match (keyed, planted) {
        (false, None) => Target::Real,
        (true, None) => Target::Keyed,
        (false, Some(name)) => Target::Planted(
            name.parse::<PlantedBug>()
                .map_err(|error| format!("--planted: {error} (or --limiter keyed)"))?,
        ),
        (true, Some(name)) => Target::PlantedKeyed(
            name.parse::<KeyedPlantedBug>()
                .map_err(|error| format!("--planted: {error}"))?,
        ),
    })
}

/// One shard of a sweep split `count` ways: scenario `k` belongs to shard `k mod count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shard {
    /// Below `count`.
    index: u64,
    count: NonZeroU64,
}

impl Shard {
    /// The whole sweep, as one shard.
    const WHOLE: Shard = Shard {
        index: 0,
        count: NonZeroU64::MIN,
    };

    /// How many of a sweep's first `scenarios` scenarios belong to this shard.
    fn scenarios_of(self, scenarios: u64) -> u64 {
        scenarios
            .checked_sub(self.index)
            .map_or(0, |after| after.div_ceil(self.count.get()))
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let refuse = |why: &str| format!("{why}: expected I/N with I < N, e.g. 0/4, not `{s}`");
        let (index, count) = s.split_once('/').ok_or_else(|| refuse("no `/`"))?;
        let index = index
            .trim()
            .parse::<u64>()
            .map_err(|_| refuse("I is not a whole number"))?;
        let count = count
            .trim()
            .parse::<NonZeroU64>()
            .map_err(|_| refuse("N is not a whole number above 0"))?;
        if index >= count.get() {
            return Err(refuse("I is not below N"));
        }
        Ok(Shard { index, count })
    }
}

fn parse_threads(s: &str) -> Result<NonZeroUsize, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("expected a whole number of threads, at least 1, not `{s}`"))
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
    if let Some(Command::Merge(args)) = &cli.command {
        return merge::run(args).map_err(|error| format!("merge: {error}"));
    }
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
    let threads = cli
        .threads
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    let shard = cli.shard.unwrap_or(Shard::WHOLE);
    if cli.limiter == Limiter::Shared {
        let planted = cli
            .planted
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(|error| format!("--planted: {error}"))?;
        return shared_cli::execute(&shared_cli::Options {
            seed,
            scenarios: cli.scenarios,
            shard: (shard.index, shard.count.get()),
            replay: cli.replay.as_ref(),
            cut: cli.cut.clone().unwrap_or_default(),
            trace: cli.trace.as_deref(),
            check_determinism: cli.check_determinism,
            threads,
            planted,
            out_dir: cli.out_dir.clone(),
            require_coverage: cli.require_coverage,
        });
    }
    if cli.cut.is_some() {
        return Err("--cut applies to --limiter shared only".to_owned());
    }
    let target = target(cli.limiter == Limiter::Keyed, cli.planted.as_deref())?;
    let command = command_line(target);
    if let Some(id) = &cli.replay {
        return replay(id, target, cli.trace.as_deref(), &command);
    }
    let config = Sweep {
        seed,
        scenarios: cli.scenarios,
        shard: (shard.index, shard.count.get()),
        threads,
        target,
        check_determinism: cli.check_determinism,
    };
    let out_dir = cli
        .out_dir
        .clone()
        .unwrap_or_else(|| default_out_dir(target));
    let bar = progress_bar(shard.scenarios_of(config.scenarios));
    let provenance = config.provenance(&command, target.name(), unix_seconds());
    let started = std::time::Instant::now();
    let summary = sweep(&config, |n| bar.inc(n));
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    print_summary(&summary, wall, threads);
    summary_file::write(
        &out_dir,
        summary_file::plain(&config, &summary, &command, wall, &provenance),
    )?;
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
    let covered = passes_coverage(cli.require_coverage, &summary.coverage);
    Ok(summary.failures.is_empty() && covered)
}

/// Whether a sweep passes the coverage gate: always unless `required`; if not, it prints the
/// features no scenario reached.
fn passes_coverage(required: bool, coverage: &Coverage) -> bool {
    let uncovered = required
        .then(|| coverage_failure(&coverage.missing()))
        .flatten();
    if let Some(line) = &uncovered {
        println!("{line}");
    }
    uncovered.is_none()
}

/// The command that reruns this binary with the same target, for replay lines.
fn command_line(target: Target) -> String {
    let mut command = "cargo xtask simulate".to_owned();
    if target.is_keyed() {
        command.push_str(" --limiter keyed");
    }
    if let Target::Planted(_) | Target::PlantedKeyed(_) = target {
        command.push_str(" --planted ");
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
        // One limit throughout: the report draws it as a line over the permits per window.
        let good = scenario.clock.kind() == ClockKind::Ordinary
            && scenario.limit_changes.is_empty()
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
    println!("  coverage (scenarios exercising each feature)");
    for (name, count) in summary.coverage.counts() {
        println!("    {name:<26} {count:>10}");
    }
    println!("  violations (scenarios breaking each rule)");
    for (name, count) in &summary.violations {
        println!("    {name:<20} {count:>8}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(index: u64, count: u64) -> Shard {
        Shard {
            index,
            count: NonZeroU64::new(count).unwrap(),
        }
    }

    #[test]
    fn a_shard_reads_as_index_slash_count() {
        assert_eq!("0/4".parse(), Ok(shard(0, 4)));
        assert_eq!(" 3 / 4 ".parse(), Ok(shard(3, 4)));
    }

    #[test]
    fn a_bad_shard_is_refused_saying_why() {
        for (input, why) in [
            ("3", "no `/`"),
            ("x/4", "I is not a whole number"),
            ("-1/4", "I is not a whole number"),
            ("0/0", "N is not a whole number above 0"),
            ("0/", "N is not a whole number above 0"),
            ("4/4", "I is not below N"),
            ("3/2", "I is not below N"),
        ] {
            let error = input.parse::<Shard>().unwrap_err();
            assert!(error.starts_with(why), "{input}: {error}");
            assert!(error.contains("expected I/N"), "{input}: {error}");
        }
    }

    #[test]
    fn shards_split_a_sweep_without_overlap_or_gap() {
        for scenarios in [0, 1, 5, 12] {
            let sizes: Vec<u64> = (0..4)
                .map(|i| shard(i, 4).scenarios_of(scenarios))
                .collect();
            let counted: Vec<u64> = (0..4)
                .map(|i| (0..scenarios).filter(|k| k % 4 == i).count() as u64)
                .collect();
            assert_eq!(sizes, counted, "{scenarios} scenarios");
        }
        assert_eq!(Shard::WHOLE.scenarios_of(7), 7);
    }

    #[test]
    fn the_command_line_takes_a_shard_and_refuses_zero_threads() {
        let cli =
            Cli::try_parse_from(["fixed-window-sim", "--shard", "1/3", "--threads", "2"]).unwrap();
        assert_eq!(cli.shard, Some(shard(1, 3)));
        assert_eq!(cli.threads, NonZeroUsize::new(2));
        for threads in ["0", "two", "1.5"] {
            let error =
                Cli::try_parse_from(["fixed-window-sim", "--threads", threads]).unwrap_err();
            assert!(error.to_string().contains("at least 1"), "{error}");
        }
        let error = Cli::try_parse_from(["fixed-window-sim", "--shard", "2/2"]).unwrap_err();
        assert!(error.to_string().contains("I is not below N"), "{error}");
    }
}
