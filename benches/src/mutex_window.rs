//! The straightforward peer: a fixed window behind a `Mutex`.

use core::time::Duration;
use std::sync::{Mutex, PoisonError};

use fixed_window::{Clock, Instant, SystemClock};

/// A fixed-window limiter as most people would first write it: the window's start and its
/// used count behind one `std::sync::Mutex`, read and updated under the lock.
///
/// It keeps the same rules as the lock-free limiter (windows aligned to creation, advanced by
/// whole periods, no carry-over, a reading before the window counts against it) so that the
/// benchmarks compare the cost of the lock, not a different policy.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ManualClock, SystemClock};
/// use fixed_window_benches::MutexWindow;
///
/// let clock = ManualClock::new();
/// let limiter = MutexWindow::new(1, Duration::from_secs(1), clock.clone());
/// assert_eq!(limiter.try_acquire(), Ok(0));
/// assert_eq!(limiter.try_acquire(), Err(Duration::from_secs(1)));
/// clock.advance(Duration::from_secs(1));
/// assert_eq!(limiter.try_acquire(), Ok(0));
/// ```
#[derive(Debug)]
pub struct MutexWindow<C = SystemClock> {
    limit: u32,
    period: u64,
    clock: C,
    window: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    start: u64,
    used: u32,
}

impl<C: Clock> MutexWindow<C> {
    /// A limiter of `limit` permits per `period` on `clock`, its first window opening now.
    ///
    /// # Panics
    ///
    /// If `limit` or `period` is zero, or `period` is longer than `u64::MAX` nanoseconds: a
    /// benchmark's setup error, not an input to handle.
    pub fn new(limit: u32, period: Duration, clock: C) -> MutexWindow<C> {
        let period = u64::try_from(period.as_nanos()).expect("period fits in u64 nanoseconds");
        assert!(limit > 0 && period > 0, "limit and period must be positive");
        let start = clock.now().as_nanos();
        MutexWindow {
            limit,
            period,
            clock,
            window: Mutex::new(Window { start, used: 0 }),
        }
    }

    /// Takes a permit if the current window has one: `Ok(remaining)`, or
    /// `Err(time until the next window)`.
    ///
    /// # Errors
    ///
    /// The time until the next window opens, if this one's permits are used up.
    #[inline]
    pub fn try_acquire(&self) -> Result<u32, Duration> {
        let now = self.clock.now().as_nanos();
        // A panic while the lock is held cannot leave the window half-written (both fields
        // are set together below), so a poisoned lock is still sound to use.
        let mut window = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        let elapsed = now.saturating_sub(window.start);
        if elapsed >= self.period {
            window.start += elapsed - elapsed % self.period;
            window.used = 0;
        }
        if window.used < self.limit {
            window.used += 1;
            Ok(self.limit - window.used)
        } else {
            let next = window.start.saturating_add(self.period);
            Err(Instant::from_nanos(next).saturating_duration_since(Instant::from_nanos(now)))
        }
    }
}
