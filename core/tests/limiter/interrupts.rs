//! Interrupted waits fail with `Interrupted`, take no permit, emit no event and never retry.

use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use fixed_window::{Clock, Instant, Interrupt, Interrupted, RateLimiter, RateLimiterError, Sleep};

use crate::support::{Recorder, bounded, grant_count, limiter};

/// A clock whose sleeps always report an interruption, counting them.
#[derive(Debug, Default, Clone)]
struct Interrupting {
    sleeps: Arc<AtomicU32>,
}

impl Clock for Interrupting {
    fn now(&self) -> Instant {
        Instant::from_nanos(7)
    }

    fn sleep(&self, _: Duration, _: &Interrupt) -> Result<(), Interrupted> {
        self.sleeps.fetch_add(1, Ordering::SeqCst);
        Err(Interrupted)
    }

    fn sleep_async(&self, d: Duration) -> Sleep<'_> {
        Box::pin(async move { self.sleep(d, &Interrupt::new()) })
    }
}

#[test]
fn a_clock_reporting_an_interruption_fails_the_call_once_without_running_it() {
    let clock = Interrupting::default();
    let recorder = Recorder::default();
    let limiter = RateLimiter::of("int", 1, Duration::from_nanos(100))
        .unwrap()
        .with_max_wait(Duration::MAX)
        .with_clock(clock.clone())
        .with_listener(recorder.listener());
    limiter.try_acquire().unwrap();
    let ran = AtomicU32::new(0);
    let result = limiter.call(|| ran.fetch_add(1, Ordering::SeqCst));
    assert_eq!(result, Err(RateLimiterError::Interrupted { name: "int" }));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(
        clock.sleeps.load(Ordering::SeqCst),
        1,
        "never retried silently"
    );
    // Only the first call's Permitted event: an interruption is not a rejection.
    assert_eq!(recorder.events().len(), 1);
}

#[test]
fn an_async_sleep_reporting_an_interruption_fails_the_call() {
    let limiter = RateLimiter::of("int", 1, Duration::from_nanos(100))
        .unwrap()
        .with_max_wait(Duration::MAX)
        .with_clock(Interrupting::default());
    limiter.try_acquire().unwrap();
    let result = futures::executor::block_on(limiter.call_async(async { 1 }));
    assert_eq!(result, Err(RateLimiterError::Interrupted { name: "int" }));
}

#[test]
fn an_interrupted_wait_takes_no_permit() {
    let (limiter, clock) = limiter(2, 100, 0);
    let limiter = limiter.with_max_wait(Duration::from_nanos(100));
    assert_eq!(grant_count(&limiter, 2), 2);
    let interrupt = Interrupt::new();
    interrupt.interrupt();
    assert!(limiter.acquire_interruptible(&interrupt).is_err());
    assert_eq!(
        clock.now(),
        Instant::ZERO,
        "an interrupted manual sleep does not move time"
    );
    clock.advance(Duration::from_nanos(100));
    assert_eq!(grant_count(&limiter, 3), 2);
}

#[test]
fn the_interrupt_status_stays_set_until_cleared() {
    let (limiter, _) = limiter(1, 100, 0);
    let limiter = limiter.with_max_wait(Duration::from_nanos(100));
    limiter.try_acquire().unwrap();
    let interrupt = Interrupt::new();
    interrupt.interrupt();
    assert!(limiter.acquire_interruptible(&interrupt).is_err());
    assert!(limiter.acquire_interruptible(&interrupt).is_err());
    interrupt.clear();
    assert!(limiter.acquire_interruptible(&interrupt).is_ok());
}

#[test]
fn another_thread_interrupts_a_blocking_wait_on_the_system_clock() {
    // An hour-long window: the waiter can only return early by being interrupted, however
    // the threads are scheduled. A waiter that ignores the interrupt fails the test when the
    // bound runs out.
    let limiter = Arc::new(
        RateLimiter::builder("sys", 1, Duration::from_secs(3_600))
            .unwrap()
            .max_wait(Duration::from_secs(7_200))
            .build(),
    );
    limiter.try_acquire().unwrap();
    let interrupt = Interrupt::new();
    let (waiter, remote) = (Arc::clone(&limiter), interrupt.clone());
    let interrupter = std::thread::spawn(move || remote.interrupt());
    let result = bounded("the interrupted call", move || {
        waiter.call_interruptible(&interrupt, || "ran")
    });
    interrupter.join().unwrap();
    assert_eq!(result, Err(RateLimiterError::Interrupted { name: "sys" }));
}
