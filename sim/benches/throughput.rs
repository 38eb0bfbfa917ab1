//! The simulator's throughput, in simulated limiter calls per second on one core.
//!
//! The sample is the default sweep's first 1,000 scenarios (`cargo xtask simulate` runs
//! 10,000 of them): herds of waiters, idle gaps, extreme clocks and all. Two mixes: the
//! scenarios exactly as the sweep draws them (blocking callers on coroutines, panicking
//! operations and listeners included), and the same scenarios with every caller asynchronous
//! and nothing panicking, which measures the event loop itself (also counted in events). The
//! last bench adds the oracle's check to the drawn mix, as a sweep runs it.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fixed_window_sim::{CallKind, OpKind, Scenario, Sweep, Target, check, run};

/// Scenarios per iteration: enough that no single scenario sets the figure.
const SCENARIOS: u64 = 1_000;

fn drawn() -> Vec<Scenario> {
    let sweep = Sweep {
        seed: Sweep::DEFAULT_SEED,
        scenarios: SCENARIOS,
        shard: (0, 1),
        threads: 1,
        target: Target::Real,
        check_determinism: false,
    };
    (0..SCENARIOS)
        .map(|index| Scenario::generate(&sweep.scenario(index)))
        .collect()
}

fn asynchronous_only() -> Vec<Scenario> {
    drawn()
        .into_iter()
        .map(|mut scenario| {
            scenario.panicking_listeners.clear();
            for caller in &mut scenario.callers {
                if caller.kind == CallKind::CallBlocking {
                    caller.kind = CallKind::CallAsync;
                }
                if caller.op == OpKind::Panics {
                    caller.op = OpKind::Succeeds;
                }
            }
            scenario
        })
        .collect()
}

fn calls(scenarios: &[Scenario]) -> u64 {
    scenarios
        .iter()
        .map(|scenario| run(scenario, Target::Real).map_or(0, |trace| trace.stats.calls))
        .sum()
}

fn events(scenarios: &[Scenario]) -> u64 {
    scenarios
        .iter()
        .map(|scenario| run(scenario, Target::Real).map_or(0, |trace| trace.stats.events))
        .sum()
}

fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulator");
    for (name, scenarios) in [("drawn", drawn()), ("asynchronous", asynchronous_only())] {
        group.throughput(Throughput::Elements(calls(&scenarios)));
        group.bench_with_input(BenchmarkId::new("run", name), &scenarios, |b, scenarios| {
            b.iter(|| {
                for scenario in scenarios {
                    let trace = run(scenario, Target::Real);
                    std::hint::black_box(trace.map(|trace| trace.stats.calls).ok());
                }
            });
        });
    }
    // The same asynchronous run counted in events (arrivals, timers firing, interrupts,
    // cancellations): herds of waiters wake at every window, so a call costs several events.
    let scenarios = asynchronous_only();
    group.throughput(Throughput::Elements(events(&scenarios)));
    group.bench_with_input(
        BenchmarkId::new("run_events", "asynchronous"),
        &scenarios,
        |b, scenarios| {
            b.iter(|| {
                for scenario in scenarios {
                    let trace = run(scenario, Target::Real);
                    std::hint::black_box(trace.map(|trace| trace.stats.events).ok());
                }
            });
        },
    );
    let scenarios = drawn();
    group.throughput(Throughput::Elements(calls(&scenarios)));
    group.bench_with_input(
        BenchmarkId::new("run_and_check", "drawn"),
        &scenarios,
        |b, scenarios| {
            b.iter(|| {
                for scenario in scenarios {
                    if let Ok(trace) = run(scenario, Target::Real) {
                        std::hint::black_box(check(scenario, &trace).len());
                    }
                }
            });
        },
    );
    group.finish();
}

criterion_group! {
    name = benches;
    // An iteration runs a thousand scenarios (tens of milliseconds): twenty samples suffice.
    config = Criterion::default().sample_size(20);
    targets = bench_all
}
criterion_main!(benches);
