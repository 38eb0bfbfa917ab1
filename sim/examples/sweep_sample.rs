//! The `sweep/drawn` bench's work done once, for profilers: the default sweep's first 1,000
//! scenarios drawn, run against the real limiter and checked by the oracle, then the number of
//! simulated calls. Under `valgrind --tool=callgrind` its instruction count divided by the calls
//! is the instructions a call costs, a figure that, unlike a timing, a busy machine leaves alone.

/// The allocator the simulator's binary runs on, as in the bench.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use fixed_window_sim::{Scenario, Sweep, Target, check, run};

fn main() {
    let scenarios = std::env::args()
        .nth(1)
        .map_or(1_000, |count| count.parse().expect("a number of scenarios"));
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
        if let Ok(trace) = run(&scenario, Target::Real) {
            calls += trace.stats.calls;
            violations += check(&scenario, &trace).len();
        }
    }
    println!("{scenarios} scenarios, {calls} calls, {violations} violations");
}
