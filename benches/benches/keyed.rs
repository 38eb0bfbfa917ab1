//! The keyed benchmarks: the concurrent map candidates for the keyed limiter's table.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "keyed/maps.rs"]
mod maps;

/// Populations of distinct keys.
pub const KEY_COUNTS: [u64; 3] = [1, 1_000, 1_000_000];

/// Thread counts of the contention groups.
pub const THREADS: [usize; 4] = [1, 2, 4, 8];

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = maps::bench_all
}
criterion_main!(benches);
