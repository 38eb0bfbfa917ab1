//! `max_wait`: reject at once, or sleep through the clock until the next window, with a
//! deadline fixed when the call starts.

use core::time::Duration;
use std::sync::{Arc, Mutex};

use fixed_window::{
    Clock, Instant, Interrupt, Interrupted, ManualClock, RateLimiter, RateLimiterEvent, Sleep,
};

use crate::support::{Recorder, at, limiter};

#[test]
fn zero_max_wait_rejects_at_once_without_sleeping() {
    let (limiter, clock) = limiter(1, 100, 0);
    limiter.acquire().unwrap();
    assert!(limiter.acquire().is_err());
    assert_eq!(clock.now(), at(0));
}

#[test]
fn a_call_sleeps_until_the_next_window_and_gets_a_permit_there() {
    let (limiter, clock) = limiter(1, 100, 0);
    let limiter = limiter.with_max_wait(Duration::from_nanos(150));
    limiter.acquire().unwrap();
    clock.set(at(30));
    let permit = limiter.acquire().unwrap();
    assert_eq!(permit.at(), at(100));
    assert_eq!(clock.now(), at(100));
}

#[test]
fn a_next_window_exactly_at_the_deadline_is_waited_for() {
    let (limiter, clock) = limiter(1, 100, 0);
    let limiter = limiter.with_max_wait(Duration::from_nanos(70));
    limiter.acquire().unwrap();
    clock.set(at(30));
    assert_eq!(limiter.acquire().unwrap().at(), at(100));
}

#[test]
fn a_next_window_after_the_deadline_is_rejected_without_sleeping() {
    let (limiter, clock) = limiter(1, 100, 0);
    let limiter = limiter.with_max_wait(Duration::from_nanos(69));
    limiter.acquire().unwrap();
    clock.set(at(30));
    let err = limiter.acquire().unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_nanos(70)));
    assert_eq!(clock.now(), at(30));
}

#[test]
fn max_wait_of_duration_max_waits_for_the_next_window() {
    let (limiter, clock) = limiter(2, 1_000_000_000, 5);
    let limiter = limiter.with_max_wait(Duration::MAX);
    assert_eq!(limiter.deadline(at(5)), Instant::MAX);
    for _ in 0..2 {
        limiter.acquire().unwrap();
    }
    assert_eq!(limiter.acquire().unwrap().at(), at(1_000_000_005));
    assert_eq!(clock.now(), at(1_000_000_005));
}

type Hook = Arc<Mutex<Option<Box<dyn FnMut() + Send>>>>;

/// A manual clock that runs a hook after every sleep: the hook plays a competing caller that
/// takes the freshly opened window's permits while the waiter sleeps.
#[derive(Clone)]
struct Contested {
    clock: ManualClock,
    hook: Hook,
    sleeps: Arc<Mutex<Vec<Duration>>>,
}

impl Contested {
    fn new() -> Contested {
        Contested {
            clock: ManualClock::new(),
            hook: Arc::default(),
            sleeps: Arc::default(),
        }
    }
}

impl Clock for Contested {
    fn now(&self) -> Instant {
        self.clock.now()
    }

    fn sleep(&self, d: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        self.sleeps.lock().unwrap().push(d);
        self.clock.sleep(d, interrupt)?;
        if let Some(hook) = self.hook.lock().unwrap().as_mut() {
            hook();
        }
        Ok(())
    }

    fn sleep_async(&self, d: Duration) -> Sleep<'_> {
        Box::pin(async move { self.sleep(d, &Interrupt::new()) })
    }
}

/// A limiter of 1 per 100 ns on a contested clock whose hook steals the permit of each of the
/// first `steals` windows opened during a sleep.
fn contested(max_wait: Duration, steals: u32) -> (Arc<RateLimiter<Contested>>, Contested) {
    let clock = Contested::new();
    let limiter = Arc::new(
        RateLimiter::of("contested", 1, Duration::from_nanos(100))
            .unwrap()
            .with_max_wait(max_wait)
            .with_clock(clock.clone()),
    );
    let thief = Arc::clone(&limiter);
    let mut left = steals;
    *clock.hook.lock().unwrap() = Some(Box::new(move || {
        if left > 0 {
            left -= 1;
            thief
                .try_acquire()
                .expect("the thief finds the new window open");
        }
    }));
    (limiter, clock)
}

#[test]
fn a_waiter_that_loses_the_next_window_waits_again_until_its_deadline() {
    let (limiter, clock) = contested(Duration::from_nanos(250), u32::MAX);
    limiter.try_acquire().unwrap();
    let err = limiter.acquire().unwrap_err();
    // Woke at 100 and 200, lost both windows; the window at 300 is past the deadline (250).
    assert_eq!(
        *clock.sleeps.lock().unwrap(),
        [Duration::from_nanos(100); 2]
    );
    assert_eq!(clock.now(), at(200));
    assert_eq!(err.retry_after(), Some(Duration::from_nanos(100)));
}

#[test]
fn a_waiter_keeps_competing_until_it_wins_a_window() {
    let (limiter, clock) = contested(Duration::MAX, 3);
    limiter.try_acquire().unwrap();
    let permit = limiter.acquire().unwrap();
    assert_eq!(permit.at(), at(400));
    assert_eq!(clock.sleeps.lock().unwrap().len(), 4);
}

/// A clock that never moves, even when asked to sleep.
#[derive(Debug, Default)]
struct Stopped;

impl Clock for Stopped {
    fn now(&self) -> Instant {
        at(50)
    }

    fn sleep(&self, _: Duration, _: &Interrupt) -> Result<(), Interrupted> {
        Ok(())
    }

    fn sleep_async(&self, _: Duration) -> Sleep<'_> {
        Box::pin(async { Ok(()) })
    }
}

#[test]
fn a_waiter_on_a_clock_that_never_moves_is_rejected_instead_of_sleeping_forever() {
    let recorder = Recorder::default();
    let limiter = RateLimiter::of("stopped", 1, Duration::from_nanos(100))
        .unwrap()
        .with_max_wait(Duration::MAX)
        .with_clock(Stopped)
        .with_listener(recorder.listener());
    limiter.acquire().unwrap();
    let err = limiter.acquire().unwrap_err();
    // Created at 50, so the window is [50, 150).
    assert_eq!(err.retry_after(), Some(Duration::from_nanos(100)));
    let async_err = futures::executor::block_on(limiter.acquire_async()).unwrap_err();
    assert_eq!(async_err, err);
    let rejections = recorder
        .events()
        .into_iter()
        .filter(|event| matches!(event, RateLimiterEvent::Rejected { .. }))
        .count();
    assert_eq!(rejections, 2);
}
