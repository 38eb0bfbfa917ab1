//! The keyed limiter: keys independent of each other, every rule per key, memory reclaimed as it
//! is used, the removal-versus-claim race on real threads, events and errors naming the key, and
//! the keyed tower layer.

use core::time::Duration;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use fixed_window::{
    Attempt, Clock, Instant, Interrupt, KeyedRateLimiter, ManualClock, RateLimiterError,
    RateLimiterEvent,
};

use crate::support::{at, placeable};

fn keyed(limit: u32, period_ns: u64) -> (KeyedRateLimiter<u64, ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    let limiter = KeyedRateLimiter::of("keyed", limit, Duration::from_nanos(period_ns))
        .expect("valid configuration")
        .with_clock(clock.clone());
    (limiter, clock)
}

fn grants(limiter: &KeyedRateLimiter<u64, ManualClock>, key: u64, calls: u32) -> u32 {
    (0..calls)
        .map(|_| u32::from(limiter.try_acquire(&key).is_ok()))
        .sum()
}

#[test]
fn each_key_has_its_own_limit_per_window() {
    let (limiter, clock) = keyed(3, 100);
    assert_eq!(grants(&limiter, 1, 5), 3);
    assert_eq!(grants(&limiter, 2, 5), 3);
    clock.advance(Duration::from_nanos(99));
    assert_eq!(grants(&limiter, 1, 5), 0);
    clock.advance(Duration::from_nanos(1));
    assert_eq!(grants(&limiter, 1, 5), 3);
}

#[test]
fn every_key_lives_on_the_limiters_grid() {
    // Key 2 first appears at 150, in the middle of window 1: its window still ends at 200.
    let (limiter, clock) = keyed(1, 100);
    clock.set(at(150));
    assert!(limiter.try_acquire(&2).is_ok());
    let err = limiter.try_acquire(&2).unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_nanos(50)));
    clock.set(at(200));
    assert!(limiter.try_acquire(&2).is_ok());
}

#[test]
fn the_sans_io_step_waits_and_rejects_per_key() {
    let (limiter, _) = keyed(1, 10);
    let (now, deadline) = (at(3), at(12));
    assert_eq!(
        limiter.attempt(&5, now, deadline),
        Attempt::Permitted { remaining: 0 }
    );
    assert_eq!(
        limiter.attempt(&5, now, deadline),
        Attempt::Wait { until: at(10) }
    );
    assert_eq!(
        limiter.attempt(&5, now, now),
        Attempt::Rejected {
            retry_after: Duration::from_nanos(7)
        }
    );
    assert_eq!(
        limiter.attempt(&6, now, now),
        Attempt::Permitted { remaining: 0 }
    );
}

#[test]
fn a_waiting_call_sleeps_to_its_keys_next_window() {
    let (limiter, clock) = keyed(1, 1_000);
    let limiter = limiter.with_max_wait(Duration::from_nanos(1_000));
    limiter.acquire(&9).unwrap();
    assert_eq!(limiter.acquire(&9).unwrap().at(), at(1_000));
    assert_eq!(clock.now(), at(1_000));
}

#[test]
fn interrupts_and_async_calls_work_per_key() {
    let (limiter, _) = keyed(1, 1_000);
    let limiter = limiter.with_max_wait(Duration::from_nanos(1_000));
    let interrupt = Interrupt::new();
    interrupt.interrupt();
    limiter.acquire_interruptible(&1, &interrupt).unwrap();
    let err = limiter
        .call_interruptible(&1, &interrupt, || ())
        .unwrap_err();
    assert_eq!(err.error(), RateLimiterError::Interrupted { name: "keyed" });
    assert_eq!(*err.key(), &1);
    let ran = futures::executor::block_on(async {
        limiter.acquire_async(&2).await.unwrap();
        limiter.call_async(&2, async { "ran" }).await
    });
    assert_eq!(ran, Ok("ran"));
}

#[test]
fn ended_keys_are_reclaimed_as_the_limiter_is_used() {
    // Fewer shards than calls in each window: every round completes within its window, so
    // after a window's calls the table holds exactly that window's keys.
    let (limiter, clock) = keyed(2, 1_000);
    for window in 0..20_u64 {
        clock.set(at(window * 1_000));
        for key in 0..500 {
            assert!(limiter.try_acquire(&(window * 1_000 + key)).is_ok());
        }
        assert_eq!(limiter.len(), 500, "window {window}");
    }
}

/// An attempt for zero permits used to add its key with an empty count that recorded no
/// window, so no sweep and no `shrink` ever took it out: such keys piled up past the bound.
#[test]
fn an_attempt_for_no_permit_adds_no_key() {
    let (limiter, clock) = keyed(2, 1_000);
    for key in 0..100 {
        assert_eq!(limiter.try_acquire_n(&key, 0).unwrap().remaining(), 2);
    }
    assert!(limiter.is_empty(), "{} keys held", limiter.len());
    limiter.try_acquire(&7).unwrap();
    assert_eq!(limiter.try_acquire_n(&7, 0).unwrap().remaining(), 1);
    clock.set(at(1_000));
    assert_eq!(limiter.try_acquire_n(&8, 0).unwrap().remaining(), 2);
    // Key 7's window has ended: the call's turn at sweeping removed it if its shard came up
    // (the hasher is seeded per process), else `shrink` does. Key 8 was never added.
    assert!(limiter.shrink() <= 1);
    assert!(limiter.is_empty(), "{} keys held", limiter.len());
}

#[test]
fn shrink_removes_every_ended_key_at_once() {
    let (limiter, clock) = keyed(2, 1_000);
    for key in 0..100 {
        limiter.try_acquire(&key).unwrap();
    }
    clock.set(at(999));
    assert_eq!(limiter.shrink(), 0);
    assert_eq!(limiter.len(), 100);
    clock.set(at(1_000));
    assert_eq!(limiter.shrink(), 100);
    assert!(limiter.is_empty());
    limiter.try_acquire(&7).unwrap();
    assert_eq!(limiter.len(), 1);
}

#[test]
fn a_reclaimed_key_starts_afresh_in_its_new_window() {
    let (limiter, clock) = keyed(2, 100);
    assert_eq!(grants(&limiter, 1, 3), 2);
    clock.set(at(250));
    assert_eq!(limiter.shrink(), 1);
    let permit = limiter.try_acquire(&1).unwrap();
    assert_eq!(permit.remaining(), 1);
    assert_eq!(grants(&limiter, 1, 3), 1);
}

#[test]
fn a_clock_stepping_back_behind_a_reclaimed_window_never_reopens_it() {
    // Key 1 uses up window 0; at window 3 it is reclaimed; the clock then steps back into
    // window 0. The key's new word counts against window 3 (the horizon), never window 0 again,
    // and window 3 still grants no more than the limit.
    let (limiter, clock) = keyed(2, 100);
    assert_eq!(grants(&limiter, 1, 2), 2);
    clock.set(at(350));
    assert_eq!(limiter.shrink(), 1);
    clock.set(at(50));
    assert_eq!(grants(&limiter, 1, 5), 2);
    clock.set(at(350));
    assert_eq!(grants(&limiter, 1, 5), 0);
    clock.set(at(400));
    assert_eq!(grants(&limiter, 1, 5), 2);
}

#[test]
fn the_wide_state_word_works_per_key() {
    // A one-nanosecond period from the epoch needs the 128-bit word.
    let (limiter, clock) = keyed(2, 1);
    assert!(format!("{limiter:?}").contains("wide u128"));
    assert_eq!(grants(&limiter, 1, 3), 2);
    clock.advance(Duration::from_nanos(1));
    assert_eq!(grants(&limiter, 1, 3), 2);
    assert_eq!(limiter.shrink(), 0);
    clock.advance(Duration::from_nanos(1));
    assert_eq!(limiter.shrink(), 1);
}

#[test]
fn the_last_window_of_the_timeline_rejects_with_the_longest_wait() {
    let clock = ManualClock::starting_at(Instant::MAX.saturating_sub(Duration::from_nanos(5)));
    let limiter = KeyedRateLimiter::of("end", 1, Duration::from_nanos(10))
        .unwrap()
        .with_clock(clock);
    limiter.try_acquire(&"k").unwrap();
    let err = limiter.try_acquire(&"k").unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::MAX));
    assert_eq!(limiter.shrink(), 0);
}

#[test]
fn events_name_the_key_and_a_panicking_listener_is_contained() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let (limiter, _) = keyed(1, 100);
    let limiter = limiter
        .with_listener(|_, _| panic!("a listener's own failure"))
        .with_listener(move |key, event| log.lock().unwrap().push((*key, *event)));
    limiter.try_acquire(&4).unwrap();
    let _ = limiter.try_acquire(&4);
    let seen = seen.lock().unwrap();
    assert!(matches!(
        seen[..],
        [
            (4, RateLimiterEvent::Permitted { remaining: 0, .. }),
            (4, RateLimiterEvent::Rejected { .. })
        ]
    ));
}

#[test]
fn a_stopped_clock_rejects_a_waiter_with_an_event_for_its_key() {
    #[derive(Debug)]
    struct Stopped;
    impl Clock for Stopped {
        fn now(&self) -> Instant {
            at(5)
        }
        fn sleep(&self, _: Duration, _: &Interrupt) -> Result<(), fixed_window::Interrupted> {
            Ok(())
        }
        fn sleep_async(&self, _: Duration) -> fixed_window::Sleep<'_> {
            Box::pin(async { Ok(()) })
        }
    }
    let rejections = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&rejections);
    let limiter = KeyedRateLimiter::of("stopped", 1, Duration::from_nanos(10))
        .unwrap()
        .with_clock(Stopped)
        .with_max_wait(Duration::from_nanos(100))
        .with_listener(move |key: &u8, event| {
            if *key == 3 && matches!(event, RateLimiterEvent::Rejected { .. }) {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
    limiter.acquire(&3).unwrap();
    assert!(limiter.acquire(&3).is_err());
    assert_eq!(rejections.load(Ordering::Relaxed), 1);
}

#[test]
fn racing_threads_get_exactly_limit_permits_per_key() {
    // Eight threads over four keys in an hour-long window.
    let limiter = Arc::new(KeyedRateLimiter::of("race", 500, Duration::from_secs(3_600)).unwrap());
    let handles: Vec<_> = (0..8_u64)
        .map(|thread| {
            let limiter = Arc::clone(&limiter);
            std::thread::spawn(move || {
                let mut granted = [0_u32; 4];
                for call in 0..1_000_u64 {
                    let key = (thread + call) % 4;
                    if limiter.try_acquire(&key).is_ok() {
                        granted[usize::try_from(key).unwrap()] += 1;
                    }
                }
                granted
            })
        })
        .collect();
    let mut total = [0_u32; 4];
    for handle in handles {
        for (sum, granted) in total.iter_mut().zip(handle.join().unwrap()) {
            *sum += granted;
        }
    }
    assert_eq!(total, [500; 4]);
}

#[test]
fn the_placement_check_fails_on_one_window_too_many() {
    assert!(placeable(vec![(0, 1), (0, 1), (0, 1)], 2));
    assert!(!placeable(vec![(0, 0), (0, 0), (0, 0)], 2));
}

#[test]
fn claims_racing_reclamation_are_never_lost() {
    // One key, limit 3 per 1,000 ns on a shared manual clock; a sweeper calls shrink while
    // claimers take permits and the main thread walks the clock across 50 windows. A permit
    // belongs to a window between the one its reading falls in and the one the clock shows
    // when it returns; the permits must fit those windows at 3 each, which a removal that lost
    // a claim (re-creating the key empty within its window) would break.
    let clock = ManualClock::new();
    let limiter = Arc::new(
        KeyedRateLimiter::of("reclaim", 3, Duration::from_nanos(1_000))
            .unwrap()
            .with_clock(clock.clone()),
    );
    let claimers: Vec<_> = (0..3)
        .map(|_| {
            let (limiter, clock) = (Arc::clone(&limiter), clock.clone());
            std::thread::spawn(move || {
                let mut permits = Vec::new();
                for _ in 0..20_000 {
                    if let Ok(permit) = limiter.try_acquire(&"hot") {
                        let returned = clock.now().as_nanos() / 1_000;
                        permits.push((permit.at().as_nanos() / 1_000, returned));
                    }
                }
                permits
            })
        })
        .collect();
    let sweeper = {
        let limiter = Arc::clone(&limiter);
        std::thread::spawn(move || {
            for _ in 0..20_000 {
                limiter.shrink();
            }
        })
    };
    for _ in 0..50 {
        std::thread::sleep(Duration::from_micros(200));
        clock.advance(Duration::from_nanos(1_000));
    }
    let permits: Vec<(u64, u64)> = claimers
        .into_iter()
        .flat_map(|claimer| claimer.join().unwrap())
        .collect();
    sweeper.join().unwrap();
    assert!(permits.len() >= 3, "{} permits", permits.len());
    assert!(placeable(permits, 3));
}
