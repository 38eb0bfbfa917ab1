//! Ours and governor's keyed limiters hammered by the same threads in alternation, for a ratio
//! that a busy machine skews less than criterion's sequential groups do.
//!
//! ```text
//! cargo run --profile bench -p fixed-window-benches --example keyed_contention -- 2 7 2000000
//! ```
//!
//! runs 7 rounds; each round times 2 threads making 2,000,000 permitted calls each on ours
//! (`ours-system`), then on governor's (`governor-default`), both holding 1,000 keys and
//! called in the `keyed-contention-permit` benchmarks' key order. It prints each round and the
//! median ratio (governor's time over ours) of the wall time per round of calls (the slowest
//! thread's, as the benchmarks time it) and of the CPU time per call (the threads' own, which
//! leaves out the stretches in which another process had the core). In criterion's run, every
//! thread count of ours is measured before any of governor's, so a change in the machine's load
//! between the two lands on the ratio whole.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use fixed_window::SystemClock;
use fixed_window_benches::{KeyWalk, KeyedContender, keyed_configs};

/// The population, as the targets' contention benchmarks use.
const KEYS: u64 = 1_000;

/// The wall time of the slowest of `threads` threads making `calls` calls each on `limiter`,
/// and the CPU time they used together.
fn hammer<L: KeyedContender>(limiter: &L, threads: usize, calls: u64) -> (Duration, Duration) {
    let start = Barrier::new(threads);
    let times: Vec<(Duration, Duration)> = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    let mut keys = KeyWalk::new(thread, threads, KEYS);
                    let (wall, cpu) = (Instant::now(), ThreadTime::now());
                    for _ in 0..calls {
                        black_box(limiter.try_acquire_key(keys.next_key()));
                    }
                    (wall.elapsed(), cpu.elapsed())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a hammering thread panicked"))
            .collect()
    });
    let wall = times.iter().map(|time| time.0).max().unwrap_or_default();
    (wall, times.iter().map(|time| time.1).sum())
}

/// Nanoseconds per unit of `count`.
fn per(time: Duration, count: u64) -> f64 {
    // Counts stay far below 2^52, where the conversion would round.
    #[allow(clippy::cast_precision_loss)]
    let count = count as f64;
    time.as_secs_f64() * 1e9 / count
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn parse(arg: Option<String>, default: u64, what: &str) -> Result<u64, String> {
    arg.map_or(Ok(default), |text| {
        text.parse::<u64>()
            .ok()
            .filter(|&value| value > 0)
            .ok_or_else(|| format!("{what} must be a positive integer, not `{text}`"))
    })
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let threads = parse(args.next(), 2, "the number of threads")?;
    let rounds = parse(args.next(), 7, "the number of rounds")?;
    let calls = parse(args.next(), 2_000_000, "the calls per thread")?;
    let threads = usize::try_from(threads).map_err(|_| "too many threads".to_owned())?;
    let ours = keyed_configs::ours_open(SystemClock, KEYS);
    let governor = keyed_configs::governor_open(KEYS);
    let all_calls = calls * threads as u64;
    let (mut wall_ratios, mut cpu_ratios) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let (our_wall, our_cpu) = hammer(&ours, threads, calls);
        let (their_wall, their_cpu) = hammer(&governor, threads, calls);
        let (our_wall, their_wall) = (per(our_wall, calls), per(their_wall, calls));
        let (our_cpu, their_cpu) = (per(our_cpu, all_calls), per(their_cpu, all_calls));
        println!(
            "round {round}: wall per round of calls {our_wall:.1} ns ours, {their_wall:.1} ns \
             governor ({:.2}x); CPU per call {our_cpu:.1} ns ours, {their_cpu:.1} ns governor \
             ({:.2}x)",
            their_wall / our_wall,
            their_cpu / our_cpu,
        );
        wall_ratios.push(their_wall / our_wall);
        cpu_ratios.push(their_cpu / our_cpu);
    }
    println!(
        "{threads} threads, {KEYS} keys: median ratio governor / ours: wall {:.2}x, CPU {:.2}x",
        median(wall_ratios),
        median(cpu_ratios),
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("keyed_contention: {message}");
            ExitCode::from(2)
        }
    }
}
