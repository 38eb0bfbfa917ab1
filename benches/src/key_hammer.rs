//! Several threads calling a keyed table or limiter at once over a population of keys, timed.

use std::hint::black_box;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

/// A prime step through the keys: consecutive calls of one thread land on keys far apart (and,
/// by hashing, on unrelated slots), and every key of a population not divisible by it is
/// visited once per cycle.
const STRIDE: u64 = 7_919;

/// The key that call number `call` of thread `thread` (of `threads`) uses, in a population of
/// `keys`: each thread starts at its own share of the population and walks it by a prime stride
/// (7,919), so consecutive calls land on keys far apart.
///
/// # Examples
///
/// ```
/// use fixed_window_benches::key_at;
///
/// assert_eq!(key_at(0, 0, 2, 1000), 0);
/// assert_eq!(key_at(1, 0, 2, 1000), 500);
/// assert_eq!(key_at(0, 1, 2, 1000), 919);
/// assert_eq!(key_at(3, 9, 4, 1), 0);
/// ```
#[inline]
pub fn key_at(thread: usize, call: u64, threads: usize, keys: u64) -> u64 {
    let start = thread as u64 * keys / threads.max(1) as u64;
    (start + call.wrapping_mul(STRIDE)) % keys
}

/// Runs `calls` calls of `op(key)` from each of `threads` threads at once, keys drawn by
/// [`key_at`] from a population of `keys`, and returns how long the slowest thread took from
/// the moment all were released together (as [`hammer`](crate::hammer) does for one limiter).
///
/// # Panics
///
/// If a thread cannot be spawned, or a hammering thread panics.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use fixed_window_benches::hammer_keys;
///
/// let calls = AtomicU64::new(0);
/// hammer_keys(2, 100, 10, |_key| {
///     calls.fetch_add(1, Ordering::Relaxed);
/// });
/// assert_eq!(calls.load(Ordering::Relaxed), 200);
/// ```
pub fn hammer_keys<R>(
    threads: usize,
    calls: u64,
    keys: u64,
    op: impl Fn(u64) -> R + Sync,
) -> Duration {
    let start = Barrier::new(threads);
    thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let (start, op) = (&start, &op);
                scope.spawn(move || {
                    start.wait();
                    let began = Instant::now();
                    for call in 0..calls {
                        black_box(op(key_at(thread, call, threads, keys)));
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
