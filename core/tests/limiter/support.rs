//! Helpers shared by the test modules.

use core::time::Duration;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};

use fixed_window::{Clock, Instant, Interrupt, ManualClock, RateLimiter, RateLimiterEvent};

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

/// How long a test lets a call that waits on the real clock run before failing: a correct
/// limiter's call returns within milliseconds, so this bound is only ever reached by a broken
/// one, which would otherwise hang the test run (for an hour-long window, say). It bounds a
/// hang; it does not measure speed.
pub const HANG_AFTER: Duration = Duration::from_secs(10);

/// Runs `call` on a thread of its own and returns its result, or fails the test if it is still
/// running after [`HANG_AFTER`]. A panic in `call` fails the test as it is.
pub fn bounded<T: Send + 'static>(what: &str, call: impl FnOnce() -> T + Send + 'static) -> T {
    bounded_by(HANG_AFTER, what, call)
}

/// [`bounded`] with another bound, so the bound itself can be tested.
pub fn bounded_by<T: Send + 'static>(
    hang_after: Duration,
    what: &str,
    call: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, result) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        // The receiver is gone only if the test already failed.
        let _ = done.send(call());
    });
    match result.recv_timeout(hang_after) {
        Ok(value) => value,
        // The sender was dropped without sending: `call` panicked.
        Err(RecvTimeoutError::Disconnected) => match thread.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("a call that returned has sent its result"),
        },
        // The thread is left behind, blocked; the test binary ends it when it exits.
        Err(RecvTimeoutError::Timeout) => {
            panic!(
                "{what} still had not returned after {HANG_AFTER:?}: a wait that should have ended hangs"
            )
        }
    }
}

#[test]
fn a_call_that_hangs_fails_its_test() {
    let hanging = std::panic::catch_unwind(|| {
        bounded_by(
            Duration::from_millis(50),
            "a wait nobody interrupts",
            || Interrupt::new().wait_timeout(Duration::from_secs(3_600)),
        )
    });
    assert!(hanging.is_err());
}

#[test]
fn a_call_that_panics_fails_its_test_with_its_own_panic() {
    let panicking = std::panic::catch_unwind(|| bounded("a panicking call", || panic!("its own")));
    let panic = panicking.unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"its own"));
}
