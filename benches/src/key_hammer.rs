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
/// (7,919), so consecutive calls land on keys far apart. [`KeyWalk`] yields the same keys
/// without a division per call.
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

/// The keys one thread calls with, in [`key_at`]'s order, one after the other.
///
/// A benchmark's loop takes its next key from here rather than from [`key_at`], whose
/// remainder is a 64-bit division: tens of cycles per call that every limiter would pay
/// alike, narrowing the differences the benchmark is there to show. Each step adds the
/// stride's remainder and subtracts the population at most once.
///
/// # Examples
///
/// ```
/// use fixed_window_benches::{KeyWalk, key_at};
///
/// let walked: Vec<u64> = KeyWalk::new(1, 2, 1000).take(5).collect();
/// let computed: Vec<u64> = (0..5).map(|call| key_at(1, call, 2, 1000)).collect();
/// assert_eq!(walked, computed);
/// assert_eq!(KeyWalk::new(0, 1, 1).take(3).collect::<Vec<_>>(), [0, 0, 0]);
/// ```
#[derive(Debug, Clone)]
pub struct KeyWalk {
    next: u64,
    step: u64,
    keys: u64,
}

impl KeyWalk {
    /// The walk of thread `thread` of `threads` over `keys` keys (at least one), from its
    /// first call.
    #[must_use]
    pub fn new(thread: usize, threads: usize, keys: u64) -> KeyWalk {
        let keys = keys.max(1);
        KeyWalk {
            next: key_at(thread, 0, threads, keys),
            step: STRIDE % keys,
            keys,
        }
    }

    /// The next key.
    #[inline]
    pub fn next_key(&mut self) -> u64 {
        let key = self.next;
        // Both are below `keys`, so the sum wraps around the population at most once; written
        // as a comparison with the room left, it cannot overflow.
        let room = self.keys - self.step;
        self.next = if key >= room {
            key - room
        } else {
            key + self.step
        };
        key
    }
}

impl Iterator for KeyWalk {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        Some(self.next_key())
    }
}

/// Runs `calls` calls of `op(key)` from each of `threads` threads at once, keys drawn by
/// [`key_at`] (walked by [`KeyWalk`]) from a population of `keys`, and returns how long the
/// slowest thread took from the moment all were released together (as
/// [`hammer`](crate::hammer) does for one limiter).
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
                    let mut walk = KeyWalk::new(thread, threads, keys);
                    let began = Instant::now();
                    for _ in 0..calls {
                        black_box(op(walk.next_key()));
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

#[cfg(test)]
mod tests {
    use super::{KeyWalk, key_at};

    #[test]
    fn the_walk_yields_key_at_in_order() {
        for keys in [1, 2, 999, 1_000, 7_919, 15_838, 1_000_000] {
            for threads in 1..=8 {
                for thread in 0..threads {
                    let mut walk = KeyWalk::new(thread, threads, keys);
                    for call in 0..3 * keys.min(5_000) {
                        assert_eq!(
                            walk.next_key(),
                            key_at(thread, call, threads, keys),
                            "thread {thread} of {threads}, {keys} keys, call {call}"
                        );
                    }
                }
            }
        }
    }
}
