//! `keyed-contention-permit` and `keyed-contention-rejection`: 1, 2, 4 and 8 threads calling
//! one keyed limiter at once over populations of 1, 1,000 and 1,000,000 keys (wall time per
//! round of one call per thread; throughput counts every thread's calls).

use std::sync::OnceLock;

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput, measurement::WallTime};
use fixed_window::SystemClock;
use fixed_window_benches::{KeyedContender, hammer_keys, keyed_configs};

use crate::{KEY_COUNTS, THREADS};

/// Times `iters` rounds of each thread count over one limiter per population, the benchmark
/// id being `<limiter>/<keys>-keys/<threads>`.
pub fn bench<L: KeyedContender>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    make: impl Fn(u64) -> L,
) {
    for keys in KEY_COUNTS {
        // Made on first use, so a filtered run does not fill the populations it skips.
        let limiter = OnceLock::new();
        for threads in THREADS {
            group.throughput(Throughput::Elements(threads as u64));
            let name = format!("{id}/{keys}-keys");
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &threads| {
                let limiter = limiter.get_or_init(|| make(keys));
                b.iter_custom(|iters| {
                    hammer_keys(threads, iters, keys, |key| limiter.try_acquire_key(key))
                });
            });
        }
    }
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("keyed-contention-permit");
    bench(&mut group, "ours-system", |keys| {
        keyed_configs::ours_open(SystemClock, keys)
    });
    bench(&mut group, "governor-default", keyed_configs::governor_open);
    bench(&mut group, "mutex-system", |keys| {
        keyed_configs::mutex_open(SystemClock, keys)
    });
    group.finish();
    let mut group = c.benchmark_group("keyed-contention-rejection");
    bench(&mut group, "ours-system", |keys| {
        keyed_configs::ours_full(SystemClock, keys)
    });
    bench(&mut group, "governor-default", keyed_configs::governor_full);
    bench(&mut group, "mutex-system", |keys| {
        keyed_configs::mutex_full(SystemClock, keys)
    });
    group.finish();
}
