//! `backoff-sweep`: ours on the default clock under contention, across `Backoff` settings.
//!
//! Each setting is the number of lost compare-and-set races a caller answers with a spin
//! before it starts yielding; `spin-max` never yields. The report reads this group to
//! recommend the default ([`Backoff::SPIN_LIMIT`] today).

use criterion::Criterion;
use fixed_window::{Backoff, SystemClock};
use fixed_window_benches::configs;

use crate::contention::bench;

/// The spin settings swept; `u32::MAX` is named `spin-max`.
const SPINS: [u32; 10] = [0, 1, 2, 4, 6, 8, 16, 32, 64, u32::MAX];

/// The thread counts swept: contention needs at least two.
const THREADS: [usize; 3] = [2, 4, 8];

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("backoff-sweep");
    for threads in THREADS {
        for spins in SPINS {
            let id = if spins == u32::MAX {
                "spin-max".to_owned()
            } else {
                format!("spin-{spins}")
            };
            bench(&mut group, &id, threads, || {
                configs::ours_open(SystemClock).with_backoff(Backoff::new(spins))
            });
        }
    }
    group.finish();
}
