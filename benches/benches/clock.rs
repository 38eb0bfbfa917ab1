//! `clock`: one reading of each clock the limiters run on, to split the permit path's cost
//! between reading the time and deciding.

use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use fixed_window::{Clock, ManualClock, SystemClock};
use fixed_window_benches::{StdClock, on_cpu};
use governor::clock::{Clock as _, DefaultClock};

fn bench<T>(group: &mut BenchmarkGroup<'_, WallTime>, id: &str, read: impl Fn() -> T) {
    group.bench_function(id, |b| {
        b.iter_custom(|iters| {
            on_cpu(|| {
                for _ in 0..iters {
                    black_box(read());
                }
            })
        });
    });
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("clock");
    bench(&mut group, "std-instant", std::time::Instant::now);
    bench(&mut group, "ours-system", || black_box(&SystemClock).now());
    let governor = DefaultClock::default();
    bench(&mut group, "governor-default", || {
        black_box(&governor).now()
    });
    bench(&mut group, "ours-std", || black_box(&StdClock).now());
    let manual = ManualClock::new();
    bench(&mut group, "ours-manual", || black_box(&manual).now());
    group.finish();
}
