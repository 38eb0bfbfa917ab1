//! Lost compare-and-set races, counted from outside the limiter.
//!
//! With `Backoff::new(0)` every retry after a lost race yields the thread, and a yield is one
//! `sched_yield` system call, so counting those calls counts the retries without touching the
//! limiter. Run it under perf's system-call tracepoint:
//!
//! ```text
//! cargo build --release -p fixed-window-benches --example yield_count
//! perf stat -e syscalls:sys_enter_sched_yield target/release/examples/yield_count 2 1000000
//! ```
//!
//! and divide the count by the attempts it prints. Only this backoff can be counted so: spins
//! make no system call. Arguments: threads (default 2), attempts per thread (default 1000000).

use std::process::ExitCode;

use fixed_window::{Backoff, SystemClock};
use fixed_window_benches::{configs, hammer};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let parse = |arg: Option<String>, default: u64, what: &str| match arg {
        None => Ok(default),
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{what} must be a positive integer, not {text:?}")),
    };
    let threads = parse(args.next(), 2, "threads");
    let calls = parse(args.next(), 1_000_000, "attempts per thread");
    let (threads, calls) = match (threads, calls) {
        (Ok(threads), Ok(calls)) => (threads, calls),
        (Err(err), _) | (_, Err(err)) => {
            eprintln!("yield_count: {err}");
            return ExitCode::FAILURE;
        }
    };
    let Ok(thread_count) = usize::try_from(threads) else {
        eprintln!("yield_count: too many threads");
        return ExitCode::FAILURE;
    };
    let limiter = configs::ours_open(SystemClock).with_backoff(Backoff::new(0));
    let took = hammer(&limiter, thread_count, calls);
    println!(
        "{} attempts on {threads} threads in {took:?}",
        threads * calls
    );
    ExitCode::SUCCESS
}
