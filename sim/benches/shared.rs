//! The shared limiter's simulation speed, in simulated calls per second on one core,
//! including the Lua script the simulated Redis runs for each call that reaches it.
//!
//! The sample is the default shared sweep's first 200 scenarios (`cargo xtask simulate
//! --limiter shared` runs 10,000 of them): 1 to 16 processes, every key mode, faults in most.
//! Two mixes: the scenarios as drawn, and the same with every fault removed (healthy: delay
//! and jitter only). Each scenario is drawn (untimed) just before its run; the `sweep` bench
//! also times drawing and the oracle, a sweep's whole work per core.
//!
//! Times are the benchmark thread's CPU time, so the figures are per core and stay
//! comparable on a shared machine.

/// The allocator the simulator's binary runs on, so that the figures are its.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Duration;

use cpu_time::ThreadTime;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fixed_window_sim::Sweep;
use fixed_window_sim::shared::{
    Faults, SharedScenario, SharedStats, SharedTarget, check_shared, run_shared,
};

/// Scenarios per iteration.
const SCENARIOS: u64 = 200;

fn default_sweep() -> Sweep<SharedTarget> {
    Sweep {
        seed: fixed_window_sim::Sweep::DEFAULT_SEED,
        scenarios: SCENARIOS,
        shard: (0, 1),
        threads: 1,
        target: SharedTarget { planted: None },
        check_determinism: false,
    }
}

#[derive(Clone, Copy)]
enum Mix {
    Drawn,
    Healthy,
}

impl Mix {
    fn scenario(self, index: u64) -> SharedScenario {
        let mut scenario = SharedScenario::generate(&default_sweep().scenario(index));
        if let Mix::Healthy = self {
            scenario.faults = Faults::default();
        }
        scenario
    }

    fn totals(self) -> SharedStats {
        let mut totals = SharedStats::default();
        for index in 0..SCENARIOS {
            let stats = run_shared(&self.scenario(index), None).stats;
            totals.calls += stats.calls;
            totals.scripts += stats.scripts;
        }
        totals
    }

    fn time(self, iterations: u64, check: bool) -> Duration {
        let mut timed = Duration::ZERO;
        for _ in 0..iterations {
            for index in 0..SCENARIOS {
                let drawn = ThreadTime::now();
                let scenario = self.scenario(index);
                let drawing = drawn.elapsed();
                let start = ThreadTime::now();
                let run = run_shared(&scenario, None);
                if check {
                    std::hint::black_box(check_shared(&scenario, &run).len());
                }
                std::hint::black_box(run.stats.calls);
                timed += start.elapsed();
                if check {
                    timed += drawing;
                }
            }
        }
        timed
    }
}

fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("shared");
    for (name, mix) in [("drawn", Mix::Drawn), ("healthy", Mix::Healthy)] {
        let totals = mix.totals();
        group.throughput(Throughput::Elements(totals.calls));
        group.bench_function(BenchmarkId::new("run", name), |b| {
            b.iter_custom(|iterations| mix.time(iterations, false));
        });
        group.throughput(Throughput::Elements(totals.scripts));
        group.bench_function(BenchmarkId::new("run_scripts", name), |b| {
            b.iter_custom(|iterations| mix.time(iterations, false));
        });
    }
    group.throughput(Throughput::Elements(Mix::Drawn.totals().calls));
    group.bench_function(BenchmarkId::new("sweep", "drawn"), |b| {
        b.iter_custom(|iterations| Mix::Drawn.time(iterations, true));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // An iteration runs two hundred scenarios (a few hundred milliseconds).
    config = Criterion::default().sample_size(10);
    targets = bench_all
}
criterion_main!(benches);
