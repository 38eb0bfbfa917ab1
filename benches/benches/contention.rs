//! `contention-permit` and `contention-rejection`: 1, 2, 4 and 8 threads calling one limiter
//! at once.
//!
//! A criterion iteration is one round in which every thread makes one attempt (see
//! [`hammer`]), so the time per iteration is the time one attempt takes under that
//! contention, and the throughput (elements per second) counts the attempts of all threads.
//! The machine this is measured on has two cores, so 4 and 8 threads also measure how each
//! limiter behaves when its callers are descheduled.

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput, measurement::WallTime};
use fixed_window::SystemClock;
use fixed_window_benches::{Contender, StdClock, configs, hammer};

/// The thread counts of the contention groups.
pub const THREADS: [usize; 4] = [1, 2, 4, 8];

/// Times `iters` rounds of `threads` threads on a limiter made fresh for this sample.
pub fn bench<L: Contender>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    threads: usize,
    make: impl Fn() -> L,
) {
    group.throughput(Throughput::Elements(threads as u64));
    group.bench_with_input(BenchmarkId::new(id, threads), &threads, |b, &threads| {
        b.iter_custom(|iters| hammer(&make(), threads, iters));
    });
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("contention-permit");
    for threads in THREADS {
        bench(&mut group, "ours-system", threads, || {
            configs::ours_open(SystemClock)
        });
        bench(&mut group, "ours-std", threads, || {
            configs::ours_open(StdClock)
        });
        bench(
            &mut group,
            "governor-default",
            threads,
            configs::governor_open,
        );
        bench(&mut group, "mutex-system", threads, || {
            configs::mutex_open(SystemClock)
        });
    }
    group.finish();
    let mut group = c.benchmark_group("contention-rejection");
    for threads in THREADS {
        bench(&mut group, "ours-system", threads, || {
            configs::ours_full(SystemClock)
        });
        bench(
            &mut group,
            "governor-default",
            threads,
            configs::governor_full,
        );
        bench(&mut group, "mutex-system", threads, || {
            configs::mutex_full(SystemClock)
        });
    }
    group.finish();
}
