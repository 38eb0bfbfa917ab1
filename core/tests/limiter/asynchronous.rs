//! The async path: waits are awaited through the clock, and dropping a waiting call is safe.

use core::future::Future;
use core::pin::pin;
use core::task::Context;
use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use fixed_window::{Clock, Instant, Interrupt, Interrupted, RateLimiter, Sleep};

use crate::support::{at, bounded, grant_count, limiter};

#[test]
fn an_async_call_waits_for_the_next_window_on_the_manual_clock() {
    let (limiter, clock) = limiter(1, 100, 0);
    let limiter = limiter.with_max_wait(Duration::from_nanos(100));
    futures::executor::block_on(async {
        assert_eq!(limiter.call_async(async { 1 }).await, Ok(1));
        assert_eq!(limiter.call_async(async { 2 }).await, Ok(2));
    });
    assert_eq!(clock.now(), at(100));
}

#[test]
fn an_async_call_past_its_deadline_is_rejected_and_its_future_never_polled() {
    let (limiter, _) = limiter(1, 100, 0);
    let polled = AtomicBool::new(false);
    futures::executor::block_on(async {
        limiter.acquire_async().await.unwrap();
        let result = limiter
            .call_async(async { polled.store(true, Ordering::SeqCst) })
            .await;
        assert!(result.is_err());
    });
    assert!(!polled.load(Ordering::SeqCst));
}

/// A clock whose asynchronous sleeps never finish, counting the sleeps begun.
#[derive(Debug, Default, Clone)]
struct Never {
    sleeps: Arc<AtomicU32>,
}

impl Clock for Never {
    fn now(&self) -> Instant {
        at(0)
    }

    fn sleep(&self, _: Duration, _: &Interrupt) -> Result<(), Interrupted> {
        Err(Interrupted)
    }

    fn sleep_async(&self, _: Duration) -> Sleep<'_> {
        self.sleeps.fetch_add(1, Ordering::SeqCst);
        Box::pin(core::future::pending())
    }
}

#[test]
fn dropping_a_waiting_call_takes_no_permit_and_leaves_the_limiter_as_it_was() {
    let clock = Never::default();
    let limiter = RateLimiter::of("cancel", 2, Duration::from_nanos(100))
        .unwrap()
        .with_max_wait(Duration::MAX)
        .with_clock(clock.clone());
    limiter.try_acquire().unwrap();
    limiter.try_acquire().unwrap();
    let before = format!("{limiter:?}");
    {
        let mut waiting =
            pin!(limiter.call_async(async { unreachable!("cancelled before a permit") }));
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
    }
    assert_eq!(clock.sleeps.load(Ordering::SeqCst), 1);
    assert_eq!(format!("{limiter:?}"), before);
}

#[test]
fn a_cancelled_wait_on_the_system_clock_leaves_every_permit_of_the_next_window() {
    let (limiter, clock) = limiter(3, 1_000, 0);
    let limiter = limiter.with_max_wait(Duration::from_nanos(1_000));
    assert_eq!(grant_count(&limiter, 3), 3);
    // Build the future but drop it before it is polled: nothing happens at all.
    drop(limiter.acquire_async());
    assert_eq!(clock.now(), at(0));
    clock.advance(Duration::from_nanos(1_000));
    assert_eq!(grant_count(&limiter, 5), 3);
}

#[test]
fn many_tasks_on_a_runtime_get_exactly_limit_permits() {
    let limit = 500;
    let limiter = Arc::new(RateLimiter::of("tasks", limit, Duration::from_secs(3_600)).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap();
    // No call may wait (max_wait is zero); one that does anyway waits for the next hour.
    let granted = bounded("2,000 tasks", move || {
        runtime.block_on(async {
            let tasks: Vec<_> = (0..2_000)
                .map(|_| {
                    let limiter = Arc::clone(&limiter);
                    tokio::spawn(async move { limiter.acquire_async().await.is_ok() })
                })
                .collect();
            let mut granted = 0;
            for task in tasks {
                granted += u32::from(task.await.unwrap());
            }
            granted
        })
    });
    assert_eq!(granted, limit);
}

#[test]
fn an_async_wait_on_the_system_clock_completes_at_the_next_window() {
    let limiter = RateLimiter::of("sys", 1, Duration::from_millis(20))
        .unwrap()
        .with_max_wait(Duration::from_secs(5));
    let (first, second) = bounded("two async calls 20 ms apart", move || {
        futures::executor::block_on(async {
            (limiter.acquire_async().await, limiter.acquire_async().await)
        })
    });
    let (first, second) = (first.unwrap(), second.unwrap());
    // The second permit lies in a later window, reached by sleeping through the clock.
    assert!(second.at() > first.at());
    assert_eq!(second.remaining(), 0);
}
