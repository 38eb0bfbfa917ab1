//! One permit or rejection path, ours or governor's, in a loop for a profiler to count.
//!
//! ```text
//! cargo build --profile bench -p fixed-window-benches --example hot_path
//! valgrind --tool=callgrind --toggle-collect='hot_path::measure*' \
//!     target/release/examples/hot_path rejection/ours-manual 100000
//! ```
//!
//! makes 100000 calls on the path named (the benchmarks' names: `permit/ours-system`,
//! `rejection/governor-fake`, …, and `call/ours-manual` for a permit through `call`; no name
//! lists them) on a limiter set up as the benchmarks set
//! theirs up. With `--toggle-collect`, callgrind counts only the loop, so its "Collected"
//! figure divided by the calls is the instructions one call costs, loop included. Instruction
//! counts are exact and repeatable even on a busy machine, where times are not: they decide
//! what to change, and criterion's times say what it bought. Counts say nothing of latency:
//! the time-stamp counter read behind `SystemClock` and governor's default clock is a few
//! instructions that take tens of cycles.

use std::hint::black_box;
use std::process::ExitCode;

use fixed_window::{Clock, ManualClock, RateLimiter, SystemClock};
use fixed_window_benches::{Contender, configs};
use governor::clock::FakeRelativeClock;

/// The paths, by the names the benchmarks give them.
const PATHS: [&str; 10] = [
    "permit/ours-system",
    "permit/ours-manual",
    "permit/governor-default",
    "permit/governor-fake",
    "rejection/ours-system",
    "rejection/ours-manual",
    "rejection/governor-default",
    "rejection/governor-fake",
    "call/ours-system",
    "call/ours-manual",
];

/// `calls` attempts on `limiter`, each outcome kept as the benchmarks keep it.
#[inline(never)]
fn measure<L: Contender>(limiter: &L, calls: u64) {
    for _ in 0..calls {
        black_box(black_box(limiter).try_acquire());
    }
}

/// `calls` calls of a trivial operation through `call`, which waits if it must.
#[inline(never)]
fn measure_call<C: Clock>(limiter: &RateLimiter<C>, calls: u64) {
    for _ in 0..calls {
        black_box(black_box(limiter).call(|| black_box(42))).ok();
    }
}

fn run(path: &str, calls: u64) -> Result<(), String> {
    match path {
        "permit/ours-system" => measure(&configs::ours_open(SystemClock), calls),
        "permit/ours-manual" => measure(&configs::ours_open(ManualClock::new()), calls),
        "permit/governor-default" => measure(&configs::governor_open(), calls),
        "permit/governor-fake" => measure(
            &configs::governor_open_fake(FakeRelativeClock::default()),
            calls,
        ),
        "rejection/ours-system" => measure(&configs::ours_full(SystemClock), calls),
        "rejection/ours-manual" => measure(&configs::ours_full(ManualClock::new()), calls),
        "rejection/governor-default" => measure(&configs::governor_full(), calls),
        "rejection/governor-fake" => measure(
            &configs::governor_full_fake(FakeRelativeClock::default()),
            calls,
        ),
        "call/ours-system" => measure_call(&configs::ours_open(SystemClock), calls),
        "call/ours-manual" => measure_call(&configs::ours_open(ManualClock::new()), calls),
        _ => {
            return Err(format!(
                "unknown path `{path}`; one of: {}",
                PATHS.join(", ")
            ));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        println!("{}", PATHS.join("\n"));
        return ExitCode::SUCCESS;
    };
    let calls = match args.next().map(|text| text.parse::<u64>()) {
        None => 100_000,
        Some(Ok(calls)) => calls,
        Some(Err(_)) => {
            eprintln!("hot_path: the number of calls must be a non-negative integer");
            return ExitCode::from(2);
        }
    };
    match run(&path, calls) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hot_path: {message}");
            ExitCode::from(2)
        }
    }
}
