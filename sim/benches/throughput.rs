//! The simulator's throughput, in simulated limiter calls per second on one core.
//!
//! The sample is the default sweep's first 1,000 scenarios (`cargo xtask simulate` runs
//! 10,000 of them): herds of waiters, idle gaps, extreme clocks and all. As in a sweep, each
//! scenario is drawn just before it runs; the `run` benches time the run alone, the `sweep`
//! bench times drawing, running and checking, which is a sweep's work per core.
//!
//! Two mixes: the scenarios exactly as the sweep draws them (blocking callers on coroutines,
//! panicking operations and listeners included), and the same scenarios with every caller
//! asynchronous and nothing panicking, which measures the event loop itself (also counted in
//! events: herds of waiters wake at every window, so a call costs several events).
//!
//! Times are the benchmark thread's CPU time, so the figures are per core and stay
//! comparable on a shared machine whose other work would otherwise scatter them by the
//! stretches this thread spent descheduled.

/// The allocator the simulator's binary runs on, so that the figures are its.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Duration;

use cpu_time::ThreadTime;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fixed_window_sim::{CallKind, OpKind, Scenario, Stats, Sweep, Target, check, run};

/// Scenarios per iteration: enough that no single scenario sets the figure.
const SCENARIOS: u64 = 1_000;

/// The default sweep, whose first scenarios are the sample.
fn default_sweep() -> Sweep {
    Sweep {
        seed: Sweep::DEFAULT_SEED,
        scenarios: SCENARIOS,
        shard: (0, 1),
        threads: 1,
        target: Target::Real,
        check_determinism: false,
    }
}

/// Which scenarios a bench runs.
#[derive(Clone, Copy)]
enum Mix {
    /// As drawn.
    Drawn,
    /// Every caller asynchronous, nothing panicking.
    Asynchronous,
}

impl Mix {
    fn scenario(self, sweep: &Sweep, index: u64) -> Scenario {
        let mut scenario = Scenario::generate(&sweep.scenario(index));
        if let Mix::Asynchronous = self {
            scenario.panicking_listeners.clear();
            for caller in &mut scenario.callers {
                if caller.kind == CallKind::CallBlocking {
                    caller.kind = CallKind::CallAsync;
                }
                if caller.op == OpKind::Panics {
                    caller.op = OpKind::Succeeds;
                }
            }
        }
        scenario
    }

    /// The sample's total counts.
    fn totals(self) -> Stats {
        let sweep = default_sweep();
        let mut totals = Stats::default();
        for index in 0..SCENARIOS {
            if let Ok(trace) = run(&self.scenario(&sweep, index), Target::Real) {
                totals.calls += trace.stats.calls;
                totals.events += trace.stats.events;
            }
        }
        totals
    }

    /// The time the sample's runs take, `iterations` times over, each scenario drawn (untimed)
    /// just before its run.
    fn time_runs(self, iterations: u64) -> Duration {
        let sweep = default_sweep();
        let mut timed = Duration::ZERO;
        for _ in 0..iterations {
            for index in 0..SCENARIOS {
                let scenario = self.scenario(&sweep, index);
                let start = ThreadTime::now();
                let trace = run(&scenario, Target::Real);
                std::hint::black_box(trace.map(|trace| trace.stats.calls).ok());
                timed += start.elapsed();
            }
        }
        timed
    }
}

fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulator");
    for (name, mix) in [("drawn", Mix::Drawn), ("asynchronous", Mix::Asynchronous)] {
        group.throughput(Throughput::Elements(mix.totals().calls));
        group.bench_function(BenchmarkId::new("run", name), |b| {
            b.iter_custom(|iterations| mix.time_runs(iterations));
        });
    }
    group.throughput(Throughput::Elements(Mix::Asynchronous.totals().events));
    group.bench_function(BenchmarkId::new("run_events", "asynchronous"), |b| {
        b.iter_custom(|iterations| Mix::Asynchronous.time_runs(iterations));
    });
    group.throughput(Throughput::Elements(Mix::Drawn.totals().calls));
    group.bench_function(BenchmarkId::new("sweep", "drawn"), |b| {
        let sweep = default_sweep();
        b.iter_custom(|iterations| {
            let start = ThreadTime::now();
            for _ in 0..iterations {
                for index in 0..SCENARIOS {
                    let scenario = Mix::Drawn.scenario(&sweep, index);
                    if let Ok(trace) = run(&scenario, Target::Real) {
                        std::hint::black_box(check(&scenario, &trace).len());
                    }
                }
            }
            start.elapsed()
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // An iteration runs a thousand scenarios (tens of milliseconds): twenty samples suffice.
    config = Criterion::default().sample_size(20);
    targets = bench_all
}
criterion_main!(benches);
