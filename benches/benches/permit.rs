//! `permit`: a `try_acquire` that succeeds, on each limiter and clock.

use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use fixed_window::{Clock, ManualClock, RateLimiter, SystemClock};
use fixed_window_benches::{Contender, StdClock, configs, on_cpu};
use governor::clock::FakeRelativeClock;

/// Times `iters` calls on a limiter made fresh for this sample.
pub fn bench<L: Contender>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    make: impl Fn() -> L,
) {
    group.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let limiter = make();
            on_cpu(|| {
                for _ in 0..iters {
                    black_box(black_box(&limiter).try_acquire());
                }
            })
        });
    });
}

/// Times `iters` sans-IO steps at one fixed instant: the limiter's own work, with no clock
/// read and no `Result` built around the outcome.
pub fn bench_attempt(
    group: &mut BenchmarkGroup<'_, WallTime>,
    make: impl Fn() -> RateLimiter<ManualClock>,
) {
    group.bench_function("ours-attempt", |b| {
        b.iter_custom(|iters| {
            let limiter = make();
            let now = limiter.clock().now();
            on_cpu(|| {
                for _ in 0..iters {
                    black_box(black_box(&limiter).attempt(black_box(now), now));
                }
            })
        });
    });
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("permit");
    bench(&mut group, "ours-system", || {
        configs::ours_open(SystemClock)
    });
    bench(&mut group, "ours-std", || configs::ours_open(StdClock));
    bench(&mut group, "ours-manual", || {
        configs::ours_open(ManualClock::new())
    });
    bench_attempt(&mut group, || configs::ours_open(ManualClock::new()));
    bench(&mut group, "governor-default", configs::governor_open);
    bench(&mut group, "governor-fake", || {
        configs::governor_open_fake(FakeRelativeClock::default())
    });
    bench(&mut group, "mutex-system", || {
        configs::mutex_open(SystemClock)
    });
    bench(&mut group, "mutex-manual", || {
        configs::mutex_open(ManualClock::new())
    });
    group.finish();
}
