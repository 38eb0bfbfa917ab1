//! `rejection`: a `try_acquire` on a used-up window, on each limiter and clock.

use criterion::Criterion;
use fixed_window::{ManualClock, SystemClock};
use fixed_window_benches::{StdClock, configs};
use governor::clock::FakeRelativeClock;

use crate::permit::{bench, bench_attempt};

pub fn bench_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("rejection");
    bench(&mut group, "ours-system", || {
        configs::ours_full(SystemClock)
    });
    bench(&mut group, "ours-std", || configs::ours_full(StdClock));
    bench(&mut group, "ours-manual", || {
        configs::ours_full(ManualClock::new())
    });
    bench_attempt(&mut group, || configs::ours_full(ManualClock::new()));
    bench(&mut group, "governor-default", configs::governor_full);
    bench(&mut group, "governor-fake", || {
        configs::governor_full_fake(FakeRelativeClock::default())
    });
    bench(&mut group, "mutex-system", || {
        configs::mutex_full(SystemClock)
    });
    bench(&mut group, "mutex-manual", || {
        configs::mutex_full(ManualClock::new())
    });
    group.finish();
}
