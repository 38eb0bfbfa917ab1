//! A real-time clock whose first reading is exactly zero, so a model knows the origin of a
//! limiter built on it; and histories recorded from real threads on it.

use core::time::Duration;
use std::sync::{Arc, OnceLock};

use fixed_window::{Clock, Instant, Interrupt, Interrupted, Sleep, SystemClock};

use crate::config::Config;
use crate::history::{History, Recorder};
use crate::outcome::Kind;
use crate::subject::Subject;
use crate::target::Target;

/// The system's monotonic clock, measured from its own first reading, which is
/// [`Instant::ZERO`].
///
/// [`RateLimiter::with_clock`](fixed_window::RateLimiter::with_clock) reads the clock once to
/// place the first window; on a `WallClock` that reading is zero, so the origin the checkers
/// need is known exactly instead of being a bound. Clones share one epoch. Sleeps are real
/// (interruptible through the handle).
///
/// # Examples
///
/// ```
/// use fixed_window::{Clock, Instant};
/// use fixed_window_models::WallClock;
///
/// let clock = WallClock::new();
/// assert_eq!(clock.now(), Instant::ZERO);
/// assert!(clock.now() >= Instant::ZERO);
/// ```
#[derive(Debug, Clone, Default)]
pub struct WallClock {
    epoch: Arc<OnceLock<std::time::Instant>>,
}

impl WallClock {
    /// A clock not yet read.
    ///
    /// # Examples
    ///
    /// See [`WallClock`].
    pub fn new() -> WallClock {
        WallClock::default()
    }
}

impl Clock for WallClock {
    fn now(&self) -> Instant {
        let mut first = false;
        let epoch = self.epoch.get_or_init(|| {
            first = true;
            std::time::Instant::now()
        });
        if first {
            return Instant::ZERO;
        }
        Instant::from_nanos(u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        interrupt.wait_timeout(duration)
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        SystemClock.sleep_async(duration)
    }
}

/// Records `threads` real threads performing `per_thread` operations each (cycling through
/// `try_acquire`, `call`, `try_acquire`, `acquire`, with a short sleep every 16) on `target`,
/// built on a [`WallClock`] with a limit of 5 per 200 µs and waits of up to one period, so
/// windows fill, open, and make callers wait.
///
/// # Panics
///
/// If a recording thread panics.
///
/// # Examples
///
/// ```
/// use fixed_window_models::{Target, linearizability, record_on_wall_clock};
///
/// let history = record_on_wall_clock(Target::Core, 2, 50);
/// assert_eq!(history.records.len(), 100);
/// assert!(linearizability::check(&history).is_ok());
/// ```
pub fn record_on_wall_clock(target: Target, threads: usize, per_thread: usize) -> History {
    let clock = WallClock::new();
    let config = Config::new(
        Instant::ZERO,
        5,
        Duration::from_micros(200),
        Duration::from_micros(200),
    );
    let recorder = Arc::new(Recorder::new(config));
    let limiter: Arc<dyn Subject> =
        Arc::from(target.build(&config, clock.clone(), recorder.events()));
    let handles: Vec<_> = (0..threads)
        .map(|thread| {
            let (clock, recorder, limiter) =
                (clock.clone(), Arc::clone(&recorder), Arc::clone(&limiter));
            std::thread::spawn(move || {
                let kinds = [
                    Kind::TryAcquire,
                    Kind::Call,
                    Kind::TryAcquire,
                    Kind::Acquire,
                ];
                for i in 0..per_thread {
                    recorder.perform(&clock as &dyn Clock, &*limiter, kinds[(i + thread) % 4]);
                    if i % 16 == 0 {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("a recording thread panicked");
    }
    recorder.finish()
}
