//! Events: emitted before the operation, matching the outcome, and a panicking listener breaks
//! nothing.

use core::time::Duration;
use std::sync::{Arc, Mutex};

use fixed_window::RateLimiterEvent;

use crate::support::{Recorder, at, limiter};

#[test]
fn permitted_is_emitted_before_the_operation_runs() {
    let recorder = Recorder::default();
    let (limiter, _) = limiter(2, 100, 0);
    let limiter = limiter.with_listener(recorder.listener());
    let seen_by_op = limiter.call(|| recorder.events()).unwrap();
    assert_eq!(
        seen_by_op,
        [RateLimiterEvent::Permitted {
            at: at(0),
            name: "test",
            remaining: 1
        }]
    );
}

#[test]
fn events_carry_remaining_and_retry_after_exactly() {
    let recorder = Recorder::default();
    let (limiter, clock) = limiter(2, 100, 0);
    let limiter = limiter.with_listener(recorder.listener());
    clock.set(at(40));
    limiter.try_acquire().unwrap();
    limiter.try_acquire().unwrap();
    assert!(limiter.try_acquire().is_err());
    assert_eq!(
        recorder.events(),
        [
            RateLimiterEvent::Permitted {
                at: at(40),
                name: "test",
                remaining: 1
            },
            RateLimiterEvent::Permitted {
                at: at(40),
                name: "test",
                remaining: 0
            },
            RateLimiterEvent::Rejected {
                at: at(40),
                name: "test",
                retry_after: Duration::from_nanos(60)
            },
        ]
    );
}

#[test]
fn a_wait_emits_only_the_final_outcome() {
    let recorder = Recorder::default();
    let (limiter, _) = limiter(1, 100, 0);
    let limiter = limiter
        .with_max_wait(Duration::from_nanos(100))
        .with_listener(recorder.listener());
    limiter.acquire().unwrap();
    limiter.acquire().unwrap();
    assert_eq!(
        recorder.events(),
        [
            RateLimiterEvent::Permitted {
                at: at(0),
                name: "test",
                remaining: 0
            },
            RateLimiterEvent::Permitted {
                at: at(100),
                name: "test",
                remaining: 0
            },
        ]
    );
}

#[test]
fn listeners_run_in_the_order_they_were_added() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let (first, second) = (Arc::clone(&order), Arc::clone(&order));
    let (limiter, _) = limiter(1, 100, 0);
    let limiter = limiter
        .with_listener(move |_| first.lock().unwrap().push(1))
        .with_listener(move |_| second.lock().unwrap().push(2));
    limiter.try_acquire().unwrap();
    assert_eq!(*order.lock().unwrap(), [1, 2]);
}

#[test]
fn a_panicking_listener_breaks_neither_the_call_nor_the_limiter_nor_other_listeners() {
    let recorder = Recorder::default();
    let (limiter, clock) = limiter(1, 100, 0);
    let limiter = limiter
        .with_listener(|_| panic!("listener failure"))
        .with_listener(recorder.listener());
    assert_eq!(limiter.call(|| "ran"), Ok("ran"));
    assert!(limiter.call(|| "ran").is_err());
    clock.advance(Duration::from_nanos(100));
    assert_eq!(limiter.call(|| "ran again"), Ok("ran again"));
    assert_eq!(recorder.events().len(), 3);
}
