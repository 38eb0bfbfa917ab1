//! Lost compare-and-set races per attempt, counted by the limiter itself (feature `stats`).
//!
//! ```text
//! cargo run --release -p fixed-window-benches --features stats --example cas_retries -- 1000000 6
//! ```
//!
//! hammers a fresh limiter, whose window never fills, from 1, 2, 4 and 8 threads and prints
//! the counts as the JSON the report reads (`target/cas-retries.json` when run by
//! `cargo xtask bench`). Arguments: attempts per thread (default 1000000), and the backoff's
//! spin retries (default `Backoff::SPIN_LIMIT`).

use std::process::ExitCode;

use fixed_window::{Backoff, SystemClock};
use fixed_window_benches::{configs, hammer};

/// Thread counts at which lost races are counted.
const THREADS: [u64; 4] = [1, 2, 4, 8];

fn parse(arg: Option<String>, default: u64, what: &str) -> Result<u64, String> {
    match arg {
        None => Ok(default),
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0 || what == "spin retries")
            .ok_or_else(|| format!("{what} must be a non-negative integer, not {text:?}")),
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let calls = parse(args.next(), 1_000_000, "attempts per thread");
    let spins =
        parse(args.next(), u64::from(Backoff::SPIN_LIMIT), "spin retries").and_then(|spins| {
            u32::try_from(spins).map_err(|_| format!("{spins} spin retries is too many"))
        });
    let (calls, spins) = match (calls, spins) {
        (Ok(calls), Ok(spins)) => (calls, spins),
        (Err(err), _) | (_, Err(err)) => {
            eprintln!("cas_retries: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut points = Vec::new();
    for threads in THREADS {
        let limiter = configs::ours_open(SystemClock).with_backoff(Backoff::new(spins));
        let Ok(thread_count) = usize::try_from(threads) else {
            eprintln!("cas_retries: too many threads");
            return ExitCode::FAILURE;
        };
        hammer(&limiter, thread_count, calls);
        let (attempts, retries) = (threads * calls, limiter.cas_retries());
        eprintln!("cas_retries: {threads} threads: {retries} retries in {attempts} attempts");
        points.push(format!(
            "{{\"threads\":{threads},\"attempts\":{attempts},\"retries\":{retries}}}"
        ));
    }
    println!(
        "{{\"backoff_spins\":{spins},\"points\":[{}]}}",
        points.join(",")
    );
    ExitCode::SUCCESS
}
