//! `advance`: every call finds its window over and opens the next one.
//!
//! Each limiter allows one permit per microsecond, and the manual (or fake) clock moves one
//! period before each call, so every call advances the window and claims the new window's only
//! permit. Moving the clock is timed too (one atomic add, the same for all three); compare with
//! the `permit` group's `-manual` and `-fake` entries for the cost of the advance itself.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use fixed_window::{ManualClock, RateLimiter};
use fixed_window_benches::{Contender, MutexWindow, configs, on_cpu};
use governor::Quota;
use governor::clock::FakeRelativeClock;

const PERIOD: Duration = Duration::from_micros(1);

fn bench<L: Contender, A: Fn(Duration)>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    make: impl Fn() -> (L, A),
) {
    group.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let (limiter, advance) = make();
            on_cpu(|| {
                for _ in 0..iters {
                    advance(black_box(PERIOD));
                    black_box(black_box(&limiter).try_acquire());
                }
            })
        });
    });
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("advance");
    bench(&mut group, "ours-manual", || {
        let clock = ManualClock::new();
        let limiter = RateLimiter::of(configs::NAME, 1, PERIOD)
            .expect("a valid configuration")
            .with_clock(clock.clone());
        (limiter, move |d| clock.advance(d))
    });
    bench(&mut group, "governor-fake", || {
        let clock = FakeRelativeClock::default();
        let quota = Quota::with_period(PERIOD).expect("a non-zero period");
        let limiter = governor::RateLimiter::direct_with_clock(quota, clock.clone());
        (limiter, move |d| clock.advance(d))
    });
    bench(&mut group, "mutex-manual", || {
        let clock = ManualClock::new();
        let limiter = MutexWindow::new(1, PERIOD, clock.clone());
        (limiter, move |d| clock.advance(d))
    });
    group.finish();
}
