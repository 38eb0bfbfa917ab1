//! `call`: the cost `call(op)` adds to running `op`.
//!
//! `bare-closure` runs the operation alone; `ours-*-call` runs it through `call` on an open
//! limiter; `ours-system-try_acquire` takes a permit and runs the operation by hand, to
//! separate the permit from `call`'s own wrapping.

use std::hint::black_box;

use criterion::Criterion;
use fixed_window::{ManualClock, SystemClock};
use fixed_window_benches::{configs, on_cpu};

fn op() -> u64 {
    black_box(42)
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("call");
    group.bench_function("bare-closure", |b| {
        b.iter_custom(|iters| {
            let op = black_box(op);
            on_cpu(|| {
                for _ in 0..iters {
                    black_box(op());
                }
            })
        });
    });
    group.bench_function("ours-system-call", |b| {
        b.iter_custom(|iters| {
            let limiter = configs::ours_open(SystemClock);
            on_cpu(|| {
                for _ in 0..iters {
                    black_box(black_box(&limiter).call(op)).ok();
                }
            })
        });
    });
    group.bench_function("ours-system-try_acquire", |b| {
        b.iter_custom(|iters| {
            let limiter = configs::ours_open(SystemClock);
            on_cpu(|| {
                for _ in 0..iters {
                    black_box(black_box(&limiter).try_acquire().map(|_| op())).ok();
                }
            })
        });
    });
    group.bench_function("ours-manual-call", |b| {
        b.iter_custom(|iters| {
            let limiter = configs::ours_open(ManualClock::new());
            on_cpu(|| {
                for _ in 0..iters {
                    black_box(black_box(&limiter).call(op)).ok();
                }
            })
        });
    });
    group.finish();
}
