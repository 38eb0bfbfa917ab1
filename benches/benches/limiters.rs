//! The benchmarks, in one run so that every comparison is a ratio measured on the same
//! machine at the same moment: ours (`fixed-window`) beside governor's direct limiter and a
//! `Mutex`-based fixed window.
//!
//! Groups (each module's `bench_all`), whose names the report reads:
//!
//! - `permit`: a `try_acquire` that succeeds, single-threaded (and `ours-attempt`: the sans-IO
//!   step alone, at a fixed instant, without reading a clock or building the result);
//! - `rejection`: a `try_acquire` on a used-up window;
//! - `advance`: a call that finds its window over and opens the next one;
//! - `call`: `call(op)` against the bare closure;
//! - `clock`: one reading of each clock;
//! - `contention-permit`, `contention-rejection`: 1, 2, 4 and 8 threads on one limiter;
//! - `backoff-sweep`: ours under contention across `Backoff` spin settings.
//!
//! Function names are `<limiter>-<clock>`: `ours`, `governor` or `mutex`, on `system` (ours
//! and the mutex on `SystemClock`), `default` (governor's quanta clock), `std` (ours on
//! `std::time::Instant`), `manual` (`ManualClock`) or `fake` (governor's `FakeRelativeClock`).
//!
//! Single-threaded groups report the benchmark thread's CPU time per iteration (see
//! [`on_cpu`](fixed_window_benches::on_cpu): on a busy machine, wall time would mostly measure
//! the other load); the contention groups report wall time.
//!
//! Defaults are 1 s of warm-up and 2 s of measurement per benchmark; criterion's flags
//! (`--warm-up-time`, `--measurement-time`, `--sample-size`, a filter) override them.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

mod advance;
mod backoff_sweep;
mod call;
mod clock;
mod contention;
mod permit;
mod rejection;

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = permit::bench_all,
        rejection::bench_all,
        advance::bench_all,
        call::bench_all,
        clock::bench_all,
        contention::bench_all,
        backoff_sweep::bench_all
}
criterion_main!(benches);
