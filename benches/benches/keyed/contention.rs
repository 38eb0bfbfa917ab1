//! `keyed-contention-permit` and `keyed-contention-rejection`: 1, 2, 4 and 8 threads calling
//! one keyed limiter at once over populations of 1, 1,000 and 1,000,000 keys (wall time per
//! round of one call per thread; throughput counts every thread's calls).
//!
//! Each thread count is measured for every limiter in turn before the next thread count, so
//! the figures a ratio compares (ours and governor's at 2 threads, say) are taken seconds apart
//! rather than after every other thread count of the first limiter: on a shared machine, a
//! change of load between the two then lands on one pair, not on all of them.

use std::sync::OnceLock;
use std::time::Duration;

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput, measurement::WallTime};
use fixed_window::SystemClock;
use fixed_window_benches::{KeyedContender, hammer_keys, keyed_configs};

use crate::{KEY_COUNTS, THREADS};

/// One limiter over one population: `iters` rounds of `threads` threads, timed.
type Hammer<'a> = Box<dyn Fn(usize, u64) -> Duration + 'a>;

/// The hammer of the limiter `make(keys)`, made on first use, so a filtered run does not fill
/// the populations it skips.
fn hammer_of<'a, L>(keys: u64, make: impl Fn(u64) -> L + 'a) -> Hammer<'a>
where
    L: KeyedContender + Send + 'a,
{
    let limiter = OnceLock::new();
    Box::new(move |threads, iters| {
        let limiter = limiter.get_or_init(|| make(keys));
        hammer_keys(threads, iters, keys, |key| limiter.try_acquire_key(key))
    })
}

/// Times every thread count of every limiter in `subjects(keys)` (named as given) per
/// population, the benchmark id being `<limiter>/<keys>-keys/<threads>`.
fn bench<'a>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    subjects: impl Fn(u64) -> Vec<(&'static str, Hammer<'a>)>,
) {
    for keys in KEY_COUNTS {
        let hammers = subjects(keys);
        for threads in THREADS {
            group.throughput(Throughput::Elements(threads as u64));
            for (id, hammer) in &hammers {
                let name = format!("{id}/{keys}-keys");
                group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &threads| {
                    b.iter_custom(|iters| hammer(threads, iters));
                });
            }
        }
    }
}

/// Ours, governor's and the mutex map, named as the benchmark ids name them, each made from a
/// population by its own `make`.
fn contenders<'a, O, G, M>(
    keys: u64,
    ours: impl Fn(u64) -> O + 'a,
    governor: impl Fn(u64) -> G + 'a,
    mutex: impl Fn(u64) -> M + 'a,
) -> Vec<(&'static str, Hammer<'a>)>
where
    O: KeyedContender + Send + 'a,
    G: KeyedContender + Send + 'a,
    M: KeyedContender + Send + 'a,
{
    vec![
        ("ours-system", hammer_of(keys, ours)),
        ("governor-default", hammer_of(keys, governor)),
        ("mutex-system", hammer_of(keys, mutex)),
    ]
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("keyed-contention-permit");
    bench(&mut group, |keys| {
        contenders(
            keys,
            |keys| keyed_configs::ours_open(SystemClock, keys),
            keyed_configs::governor_open,
            |keys| keyed_configs::mutex_open(SystemClock, keys),
        )
    });
    group.finish();
    let mut group = c.benchmark_group("keyed-contention-rejection");
    bench(&mut group, |keys| {
        contenders(
            keys,
            |keys| keyed_configs::ours_full(SystemClock, keys),
            keyed_configs::governor_full,
            |keys| keyed_configs::mutex_full(SystemClock, keys),
        )
    });
    group.finish();
}
