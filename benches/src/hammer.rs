//! Several threads calling one limiter at once, timed.

use std::hint::black_box;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use crate::contender::Contender;

/// Runs `calls` attempts on `limiter` from each of `threads` threads at once and returns how
/// long the slowest thread took, from the moment all were released together.
///
/// That is the wall time of `calls` rounds in which every thread makes one attempt, so divided
/// by `calls` it is the time one attempt takes under this contention (criterion does the
/// division), and `threads` attempts complete in that time. Spawning is not timed: the
/// threads start together on a barrier, and each times its own loop.
///
/// # Panics
///
/// If a thread cannot be spawned, or a hammering thread panics.
///
/// # Examples
///
/// ```
/// use fixed_window_benches::{configs, hammer};
///
/// let limiter = configs::ours_open(fixed_window::ManualClock::new());
/// hammer(&limiter, 2, 1000);
/// assert_eq!(limiter.try_acquire().map(|permit| permit.remaining()), Ok(u32::MAX - 2001));
/// ```
pub fn hammer<L: Contender>(limiter: &L, threads: usize, calls: u64) -> Duration {
    let start = Barrier::new(threads);
    thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    let began = Instant::now();
                    for _ in 0..calls {
                        black_box(limiter.try_acquire());
                    }
                    began.elapsed()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a hammering thread panicked"))
            .max()
            .unwrap_or_default()
    })
}
