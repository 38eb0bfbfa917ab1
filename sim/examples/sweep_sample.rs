//! The `sweep/drawn` bench's work done once, for profilers: the default sweep's first 1,000
//! scenarios drawn, run against the real limiter and checked by the oracle, then the number of
//! simulated calls. Under `valgrind --tool=callgrind` its instruction count divided by the calls
//! is the instructions a call costs, a figure that, unlike a timing, a busy machine leaves alone.
//!
//! `sweep_sample [SCENARIOS] [--hash]`: with `--hash` it also prints a hash of every scenario
//! drawn and every trace, which a change meant to leave the draw and the runs alone must leave
//! alone too (hashing costs instructions, so profile without it).

/// The allocator the simulator's binary runs on, as in the bench.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hash::{DefaultHasher, Hash, Hasher};

use fixed_window_sim::{Scenario, Sweep, Target, check, run};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let hash = args.iter().any(|arg| arg == "--hash");
    let scenarios = args
        .iter()
        .find(|arg| *arg != "--hash")
        .map_or(1_000, |count| count.parse().expect("a number of scenarios"));
    let mut hasher = DefaultHasher::new();
    let sweep = Sweep {
        seed: Sweep::DEFAULT_SEED,
        scenarios,
        shard: (0, 1),
        threads: 1,
        target: Target::Real,
        check_determinism: false,
    };
    let (mut calls, mut violations) = (0, 0);
    for index in 0..scenarios {
        let scenario = Scenario::generate(&sweep.scenario(index));
        if hash {
            scenario.hash(&mut hasher);
        }
        if let Ok(trace) = run(&scenario, Target::Real) {
            if hash {
                trace.trace_hash().hash(&mut hasher);
            }
            calls += trace.stats.calls;
            violations += check(&scenario, &trace).len();
        }
    }
    print!("{scenarios} scenarios, {calls} calls, {violations} violations");
    if hash {
        print!(", hash {:016x}", hasher.finish());
    }
    println!();
}
