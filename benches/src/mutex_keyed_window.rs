//! The straightforward keyed peer: one fixed window for all keys, and a `HashMap` of counts per
//! key, behind one `Mutex`.

use core::hash::Hash;
use core::time::Duration;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use fixed_window::{Clock, Instant, SystemClock};

/// A keyed fixed-window limiter as most people would first write it: the current window's start
/// and a count per key, in a `HashMap` behind one `std::sync::Mutex`. When the window advances,
/// the map is cleared (its capacity kept), which is what bounds its memory.
///
/// The same rules as the lock-free limiters per key (windows aligned to creation, advanced by
/// whole periods, no carry-over), so the benchmarks compare the cost of the lock and the map,
/// not a different policy.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::ManualClock;
/// use fixed_window_benches::MutexKeyedWindow;
///
/// let clock = ManualClock::new();
/// let limiter = MutexKeyedWindow::new(1, Duration::from_secs(1), clock.clone());
/// assert_eq!(limiter.try_acquire(&"a"), Ok(0));
/// assert_eq!(limiter.try_acquire(&"a"), Err(Duration::from_secs(1)));
/// assert_eq!(limiter.try_acquire(&"b"), Ok(0));
/// clock.advance(Duration::from_secs(1));
/// assert_eq!(limiter.try_acquire(&"a"), Ok(0));
/// assert_eq!(limiter.len(), 1);
/// ```
#[derive(Debug)]
pub struct MutexKeyedWindow<K, C = SystemClock> {
    limit: u32,
    period: u64,
    clock: C,
    window: Mutex<Window<K>>,
}

#[derive(Debug)]
struct Window<K> {
    start: u64,
    used: HashMap<K, u32>,
}

impl<K: Hash + Eq + Clone, C: Clock> MutexKeyedWindow<K, C> {
    /// A limiter of `limit` permits per `period` for each key, on `clock`.
    ///
    /// # Panics
    ///
    /// If `limit` or `period` is zero, or `period` is longer than `u64::MAX` nanoseconds: a
    /// benchmark's setup error, not an input to handle.
    pub fn new(limit: u32, period: Duration, clock: C) -> Self {
        let period = u64::try_from(period.as_nanos()).expect("period fits in u64 nanoseconds");
        assert!(limit > 0 && period > 0, "limit and period must be positive");
        let start = clock.now().as_nanos();
        MutexKeyedWindow {
            limit,
            period,
            clock,
            window: Mutex::new(Window {
                start,
                used: HashMap::new(),
            }),
        }
    }

    /// Takes a permit for `key` if its window has one: `Ok(remaining)`, or
    /// `Err(time until the next window)`.
    ///
    /// # Errors
    ///
    /// The time until the next window opens, if `key`'s permits in this one are used up.
    #[inline]
    pub fn try_acquire(&self, key: &K) -> Result<u32, Duration> {
        let now = self.clock.now().as_nanos();
        // Both fields are updated together below, so a poisoned lock is still sound to use.
        let mut window = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        let elapsed = now.saturating_sub(window.start);
        if elapsed >= self.period {
            window.start += elapsed - elapsed % self.period;
            window.used.clear();
        }
        let used = match window.used.get_mut(key) {
            Some(used) => used,
            None => window.used.entry(key.clone()).or_insert(0),
        };
        if *used < self.limit {
            *used += 1;
            Ok(self.limit - *used)
        } else {
            let next = window.start.saturating_add(self.period);
            Err(Instant::from_nanos(next).saturating_duration_since(Instant::from_nanos(now)))
        }
    }

    /// How many keys the current window holds a count for.
    pub fn len(&self) -> usize {
        self.window
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .used
            .len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
