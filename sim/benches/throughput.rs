//! The simulator's throughput, in simulated limiter calls per second on one core.
//!
//! Two mixes: scenarios exactly as a sweep draws them (blocking callers on their own threads,
//! panicking operations and listeners included), and the same scenarios with every caller
//! asynchronous and nothing panicking, which measures the event loop itself (also counted in
//! events). The last bench adds the oracle's check to the drawn mix, as a sweep runs it.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fixed_window_sim::{CallKind, OpKind, Scenario, ScenarioId, Target, check, run};

/// Scenarios per iteration: enough to mix clocks, limits and workloads.
const SCENARIOS: u64 = 64;

fn drawn() -> Vec<Scenario> {
    (0..SCENARIOS)
        .map(|seed| Scenario::generate(&ScenarioId::seed(seed)))
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

criterion_group!(benches, bench_all);
criterion_main!(benches);
