//! `keyed-map-hit`, `keyed-map-contention`, `keyed-map-churn`: the concurrent maps considered
//! for the keyed limiter's table (see `fixed_window_benches::map_candidates`), on its access
//! pattern.
//!
//! - `keyed-map-hit`: one thread finds an existing key's word and claims from it in place, over
//!   1, 1,000 and 1,000,000 keys (CPU time per call).
//! - `keyed-map-contention`: 1, 2, 4 and 8 threads doing the same over 1,000 keys (wall time per
//!   round of one call per thread).
//! - `keyed-map-churn`: one thread removes a key and adds a new one, over a steady population
//!   of 1,000 (CPU time per pair).

use std::cell::OnceCell;
use std::hint::black_box;

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput, measurement::WallTime};
use fixed_window_benches::map_candidates::{Dash, Papaya, SccIndex, SccMap, Table};
use fixed_window_benches::{KeyWalk, hammer_keys, on_cpu};

use crate::{KEY_COUNTS, THREADS};

fn hit<T: Table>(group: &mut BenchmarkGroup<'_, WallTime>) {
    for keys in KEY_COUNTS {
        let table = OnceCell::new();
        group.bench_with_input(BenchmarkId::new(T::NAME, keys), &keys, |b, &keys| {
            let table = table.get_or_init(|| T::filled(keys));
            let mut walk = KeyWalk::new(0, 1, keys);
            b.iter_custom(|iters| {
                on_cpu(|| {
                    for _ in 0..iters {
                        black_box(table.claim(walk.next_key()));
                    }
                })
            });
        });
    }
}

fn contention<T: Table>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let keys = 1_000;
    let table = T::filled(keys);
    for threads in THREADS {
        group.throughput(Throughput::Elements(threads as u64));
        group.bench_with_input(
            BenchmarkId::new(T::NAME, threads),
            &threads,
            |b, &threads| {
                b.iter_custom(|iters| hammer_keys(threads, iters, keys, |key| table.claim(key)));
            },
        );
    }
}

fn churn<T: Table>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let population = 1_000;
    let table = T::filled(population);
    let mut next = population;
    group.bench_function(T::NAME, |b| {
        b.iter_custom(|iters| {
            on_cpu(|| {
                for _ in 0..iters {
                    table.replace(next - population, next);
                    next += 1;
                }
            })
        });
    });
}

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("keyed-map-hit");
    hit::<Papaya>(&mut group);
    hit::<SccMap>(&mut group);
    hit::<SccIndex>(&mut group);
    hit::<Dash>(&mut group);
    group.finish();
    let mut group = c.benchmark_group("keyed-map-contention");
    contention::<Papaya>(&mut group);
    contention::<SccMap>(&mut group);
    contention::<SccIndex>(&mut group);
    contention::<Dash>(&mut group);
    group.finish();
    let mut group = c.benchmark_group("keyed-map-churn");
    churn::<Papaya>(&mut group);
    churn::<SccMap>(&mut group);
    churn::<SccIndex>(&mut group);
    churn::<Dash>(&mut group);
    group.finish();
}
