//! `fixed-window-sim`: sweeps seeded scenarios through the limiter and checks each with the
//! oracle; replays one scenario; writes traces and a summary for the report.

/// The simulated server's Lua makes and frees a score of small blocks per simulated call;
/// mimalloc serves them in fewer instructions than the C library's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::num::{NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;

use clap::Parser;
use fixed_window_sim::shared::SharedTarget;
use fixed_window_sim::{KeyedPlantedBug, PlantedBug, ScenarioId, Sweep, Target};

mod console;
mod merge;
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
pub(crate) struct Shard {
    /// Below `count`.
    pub(crate) index: u64,
    pub(crate) count: NonZeroU64,
}

impl Shard {
    /// The whole sweep, as one shard.
    const WHOLE: Shard = Shard {
        index: 0,
        count: NonZeroU64::MIN,
    };

    /// How many of a sweep's first `scenarios` scenarios belong to this shard.
    pub(crate) fn scenarios_of(self, scenarios: u64) -> u64 {
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
    if cli.cut.is_some() && cli.limiter != Limiter::Shared {
        return Err("--cut applies to --limiter shared only".to_owned());
    }
    let options = console::Options {
        seed,
        scenarios: cli.scenarios,
        shard: cli.shard.unwrap_or(Shard::WHOLE),
        replay: cli.replay.as_ref(),
        cut: cli.cut.clone().unwrap_or_default(),
        trace: cli.trace.as_deref(),
        check_determinism: cli.check_determinism,
        threads,
        out_dir: cli.out_dir.clone(),
        require_coverage: cli.require_coverage,
    };
    let planted = cli.planted.as_deref();
    match cli.limiter {
        Limiter::Plain => console::execute(&options, target(false, planted)?),
        Limiter::Keyed => console::execute(&options, target(true, planted)?),
        Limiter::Shared => {
            let planted = planted
                .map(str::parse)
                .transpose()
                .map_err(|error| format!("--planted: {error}"))?;
            console::execute(&options, SharedTarget { planted })
        }
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
