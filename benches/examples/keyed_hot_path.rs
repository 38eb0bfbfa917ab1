//! One keyed permit or rejection path, ours or governor's, in a loop for a profiler to count.
//!
//! ```text
//! cargo build --profile bench -p fixed-window-benches --example keyed_hot_path
//! valgrind --tool=callgrind --toggle-collect='keyed_hot_path::measure*' \
//!     target/release/examples/keyed_hot_path keyed-rejection/ours-manual 100000
//! ```
//!
//! makes 100000 calls on the path named (the keyed benchmarks' names; no name lists them) on a
//! limiter holding 1,000 keys, set up as the benchmarks set theirs up, the calls cycling through
//! the keys in the benchmarks' order. "Collected" divided by the calls is the instructions one
//! call costs, loop included. A separate program from `hot_path` on purpose: in one binary,
//! governor's direct and keyed limiters share their algorithm's code, which LLVM then stops
//! inlining into either, and the direct limiter's counts would no longer be those its users get.

use std::hash::RandomState;
use std::hint::black_box;
use std::process::ExitCode;

use fixed_window::{KeyedRateLimiter, ManualClock, SystemClock};
use fixed_window_benches::{KeyWalk, KeyedContender, configs, keyed_configs};

/// The keys each limiter holds and the calls cycle through.
const KEYS: u64 = 1_000;

/// The paths, by the names the benchmarks give them.
const PATHS: [&str; 8] = [
    "keyed-permit/ours-system",
    "keyed-permit/ours-manual",
    "keyed-permit/ours-siphash",
    "keyed-permit/governor-default",
    "keyed-rejection/ours-system",
    "keyed-rejection/ours-manual",
    "keyed-rejection/ours-siphash",
    "keyed-rejection/governor-default",
];

/// `calls` attempts on `limiter`, over its [`KEYS`] keys, each outcome kept as the benchmarks
/// keep it.
#[inline(never)]
fn measure<L: KeyedContender>(limiter: &L, calls: u64) {
    let mut walk = KeyWalk::new(0, 1, KEYS);
    for _ in 0..calls {
        black_box(black_box(limiter).try_acquire_key(walk.next_key()));
    }
}

/// Ours on the system clock hashing with std's `SipHash` instead of its default `KeyHasher`,
/// holding keys `0..KEYS` with `limit` per hour, each called once (as the benchmarks'
/// `ours-siphash`).
fn ours_siphash(limit: u32) -> KeyedRateLimiter<u64, SystemClock, RandomState> {
    let limiter = KeyedRateLimiter::builder(configs::NAME, limit, configs::PERIOD)
        .expect("a valid configuration")
        .hasher(RandomState::new())
        .build();
    for key in 0..KEYS {
        limiter.try_acquire(&key).expect("the first permit");
    }
    limiter
}

fn run(path: &str, calls: u64) -> Result<(), String> {
    match path {
        "keyed-permit/ours-system" => measure(&keyed_configs::ours_open(SystemClock, KEYS), calls),
        "keyed-permit/ours-manual" => {
            measure(&keyed_configs::ours_open(ManualClock::new(), KEYS), calls);
        }
        "keyed-permit/ours-siphash" => measure(&ours_siphash(u32::MAX), calls),
        "keyed-permit/governor-default" => measure(&keyed_configs::governor_open(KEYS), calls),
        "keyed-rejection/ours-system" => {
            measure(&keyed_configs::ours_full(SystemClock, KEYS), calls);
        }
        "keyed-rejection/ours-manual" => {
            measure(&keyed_configs::ours_full(ManualClock::new(), KEYS), calls);
        }
        "keyed-rejection/ours-siphash" => measure(&ours_siphash(1), calls),
        "keyed-rejection/governor-default" => {
            measure(&keyed_configs::governor_full(KEYS), calls);
        }
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
            eprintln!("keyed_hot_path: the number of calls must be a non-negative integer");
            return ExitCode::from(2);
        }
    };
    match run(&path, calls) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("keyed_hot_path: {message}");
            ExitCode::from(2)
        }
    }
}
