//! The keyed benchmarks, in one run so that every comparison is a ratio measured on the same
//! machine at the same moment: ours (`KeyedRateLimiter`) beside governor's keyed limiter
//! (`DefaultKeyedRateLimiter`, `DashMap` state) and a `Mutex<HashMap>` window, and the
//! concurrent maps considered for our table.
//!
//! Groups (each module's `bench_all`):
//!
//! - `keyed-permit`, `keyed-rejection`: one thread on keys already held, over 1, 1,000 and
//!   1,000,000 keys (CPU time per call); `ours-siphash` and `ours-ahash` are ours with std's
//!   `SipHash` and with `ahash` in place of its default `KeyHasher` (`foldhash`);
//! - `keyed-contention-permit`, `keyed-contention-rejection`: 1, 2, 4 and 8 threads over the
//!   same populations (wall time per round of one call per thread);
//! - `keyed-map-hit`, `keyed-map-contention`, `keyed-map-churn`: the map candidates (`papaya`,
//!   `scc`'s `HashMap` and `HashIndex`, `dashmap`) on the table's access pattern.
//!
//! Memory per key and after 10 million keys is measured by the `keyed_memory` example, with a
//! counting allocator. Defaults as in `limiters`: 1 s of warm-up, 2 s of measurement.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "keyed/contention.rs"]
mod contention;
#[path = "keyed/maps.rs"]
mod maps;
#[path = "keyed/paths.rs"]
mod paths;

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
    targets = paths::bench_all, contention::bench_all, maps::bench_all
}
criterion_main!(benches);
