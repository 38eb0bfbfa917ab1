//! `keyed-permit` and `keyed-rejection`: one thread calling keys already in the table, over
//! populations of 1, 1,000 and 1,000,000 keys, every call permitted or every call rejected
//! (CPU time per call).

use core::hash::BuildHasher;
use std::cell::OnceCell;
use std::hash::RandomState;
use std::hint::black_box;

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, measurement::WallTime};
use fixed_window::{KeyedRateLimiter, SystemClock};
use fixed_window_benches::{KeyWalk, KeyedContender, configs, keyed_configs, on_cpu};

use crate::KEY_COUNTS;

/// Times `iters` calls over the keys of a limiter made once per population.
pub fn bench<L: KeyedContender>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    make: impl Fn(u64) -> L,
) {
    for keys in KEY_COUNTS {
        // Made on first use, so a filtered run does not fill the populations it skips.
        let limiter = OnceCell::new();
        let mut walk = KeyWalk::new(0, 1, keys);
        group.bench_with_input(BenchmarkId::new(id, keys), &keys, |b, &keys| {
            let limiter = limiter.get_or_init(|| make(keys));
            b.iter_custom(|iters| {
                on_cpu(|| {
                    for _ in 0..iters {
                        black_box(black_box(limiter).try_acquire_key(walk.next_key()));
                    }
                })
            });
        });
    }
}

/// Ours hashing with `hasher` rather than its default `KeyHasher`, holding keys `0..keys` with
/// `limit` per hour, each called once: what the hasher costs.
fn ours_hashing<S: BuildHasher>(
    hasher: S,
    limit: u32,
    keys: u64,
) -> KeyedRateLimiter<u64, SystemClock, S> {
    let limiter = KeyedRateLimiter::builder(configs::NAME, limit, configs::PERIOD)
        .expect("a valid configuration")
        .hasher(hasher)
        .build();
    for key in 0..keys {
        limiter.try_acquire(&key).expect("the first permit");
    }
    limiter
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("keyed-permit");
    bench(&mut group, "ours-system", |keys| {
        keyed_configs::ours_open(SystemClock, keys)
    });
    bench(&mut group, "ours-siphash", |keys| {
        ours_hashing(RandomState::new(), u32::MAX, keys)
    });
    bench(&mut group, "ours-ahash", |keys| {
        ours_hashing(ahash::RandomState::new(), u32::MAX, keys)
    });
    bench(&mut group, "governor-default", keyed_configs::governor_open);
    bench(&mut group, "mutex-system", |keys| {
        keyed_configs::mutex_open(SystemClock, keys)
    });
    group.finish();
    let mut group = c.benchmark_group("keyed-rejection");
    bench(&mut group, "ours-system", |keys| {
        keyed_configs::ours_full(SystemClock, keys)
    });
    bench(&mut group, "ours-siphash", |keys| {
        ours_hashing(RandomState::new(), 1, keys)
    });
    bench(&mut group, "ours-ahash", |keys| {
        ours_hashing(ahash::RandomState::new(), 1, keys)
    });
    bench(&mut group, "governor-default", keyed_configs::governor_full);
    bench(&mut group, "mutex-system", |keys| {
        keyed_configs::mutex_full(SystemClock, keys)
    });
    group.finish();
}
