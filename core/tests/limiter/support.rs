//! Helpers shared by the test modules.

use core::time::Duration;
use std::sync::{Arc, Mutex};

use fixed_window::{Clock, Instant, ManualClock, RateLimiter, RateLimiterEvent};

/// Nanoseconds as an instant, for brevity.
pub fn at(nanos: u64) -> Instant {
    Instant::from_nanos(nanos)
}

/// A limiter of `limit` per `period_ns` on a fresh manual clock starting at `start`.
pub fn limiter(limit: u32, period_ns: u64, start: u64) -> (RateLimiter<ManualClock>, ManualClock) {
    let clock = ManualClock::starting_at(at(start));
    let limiter = RateLimiter::of("test", limit, Duration::from_nanos(period_ns))
        .expect("valid configuration")
        .with_clock(clock.clone());
    (limiter, clock)
}

/// Events recorded by a listener.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<RateLimiterEvent>>>);

impl Recorder {
    pub fn listener(&self) -> impl Fn(&RateLimiterEvent) + Send + Sync + 'static {
        let events = Arc::clone(&self.0);
        move |event| events.lock().unwrap().push(*event)
    }

    pub fn events(&self) -> Vec<RateLimiterEvent> {
        self.0.lock().unwrap().clone()
    }
}

/// Permits granted by `n` successive `try_acquire` calls at the clock's current reading.
pub fn grant_count<C: Clock>(limiter: &RateLimiter<C>, n: u32) -> u32 {
    (0..n)
        .map(|_| u32::from(limiter.try_acquire().is_ok()))
        .sum()
}

/// Whether permits, each of which may belong to any window in its `(earliest, latest)` range,
/// can be placed with at most `limit` in any window (earliest deadline first, window by window,
/// which finds a placement whenever one exists).
pub fn placeable(mut permits: Vec<(u64, u64)>, limit: usize) -> bool {
    permits.sort_unstable();
    let mut open = std::collections::BinaryHeap::new();
    let (mut next, mut window) = (0, 0);
    while next < permits.len() || !open.is_empty() {
        if open.is_empty() {
            window = window.max(permits[next].0);
        }
        while next < permits.len() && permits[next].0 <= window {
            open.push(core::cmp::Reverse(permits[next].1));
            next += 1;
        }
        for _ in 0..limit {
            match open.pop() {
                Some(core::cmp::Reverse(latest)) if latest < window => return false,
                Some(_) => {}
                None => break,
            }
        }
        window += 1;
    }
    true
}
