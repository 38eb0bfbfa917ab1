//! Each keyed bug does what its name says, and apart from it the keyed limiter reclaims ended
//! keys on the documented schedule.

use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use fixed_window::{ManualClock, Settings};
use fixed_window_broken::{KeyedPlantedBug, PlantedKeyedLimiter};

const PERIOD: Duration = Duration::from_nanos(10);

fn limiter(
    bug: KeyedPlantedBug,
    limit: u32,
    clock: &ManualClock,
) -> PlantedKeyedLimiter<ManualClock> {
    let settings = Settings::new("keyed", limit, PERIOD).expect("a valid configuration");
    PlantedKeyedLimiter::new(bug, settings, clock.clone())
}

#[test]
fn every_keyed_planted_bug_has_one_name() {
    for bug in KeyedPlantedBug::ALL {
        assert_eq!(bug.name().parse(), Ok(bug));
        assert_eq!(bug.to_string(), bug.name());
    }
}

#[test]
fn apart_from_its_bug_the_table_keeps_only_the_keys_of_the_window_once_it_saw_64_calls() {
    let clock = ManualClock::new();
    let limiter = limiter(KeyedPlantedBug::ClaimLostToRemoval, 1, &clock);
    for key in 1..=100 {
        assert!(limiter.try_acquire(key).is_ok());
    }
    assert_eq!(limiter.len(), 100);
    clock.advance(PERIOD);
    for _ in 0..63 {
        let _ = limiter.try_acquire(0);
    }
    assert!(limiter.len() > 1, "63 turns leave a shard unswept");
    let _ = limiter.try_acquire(0);
    assert_eq!(limiter.len(), 1);
}

#[test]
fn a_live_key_reclaimed_is_granted_its_limit_again() {
    let clock = ManualClock::new();
    let limiter = limiter(KeyedPlantedBug::ReclaimLive, 2, &clock);
    clock.advance(PERIOD);
    let granted = (0..64).filter(|_| limiter.try_acquire(5).is_ok()).count();
    assert!(granted > 2, "{granted} permits in a window of 2");
}

#[test]
fn a_shared_count_refuses_a_key_whose_own_window_is_untouched() {
    let clock = ManualClock::new();
    let limiter = limiter(KeyedPlantedBug::SharedCount, 2, &clock);
    assert!(limiter.try_acquire(1).is_ok());
    assert!(limiter.try_acquire(1).is_ok());
    assert!(limiter.try_acquire(2).is_err());
}

#[test]
fn a_limiter_that_never_reclaims_holds_every_key_it_ever_saw() {
    let clock = ManualClock::new();
    let limiter = limiter(KeyedPlantedBug::NeverReclaims, 1, &clock);
    for key in 0..200 {
        assert!(limiter.try_acquire(key).is_ok());
        clock.advance(PERIOD);
    }
    assert_eq!(limiter.len(), 200);
}

#[test]
fn a_claim_read_before_a_removal_is_lost_with_the_removed_count() {
    let clock = ManualClock::new();
    let limiter = limiter(KeyedPlantedBug::ClaimLostToRemoval, 1, &clock);
    assert!(limiter.try_acquire(7).is_ok());
    clock.advance(PERIOD);
    let mut context = Context::from_waker(Waker::noop());
    // Reads key 7's ended count, then yields before claiming.
    let mut first = pin!(limiter.acquire_async(7));
    assert!(first.as_mut().poll(&mut context).is_pending());
    // Other keys' calls take the rest of the window's turns: every shard is swept, key 7's
    // count removed unmarked.
    for key in 100..163 {
        assert!(limiter.try_acquire(key).is_ok());
    }
    // Key 7, gone from the table, is added anew and granted its permit...
    assert!(limiter.try_acquire(7).is_ok());
    // ...and the call that read the removed count claims from it too: two in a window of one.
    assert!(matches!(
        first.as_mut().poll(&mut context),
        Poll::Ready(Ok(_))
    ));
}

#[test]
fn a_limit_change_applies_to_every_key_and_keeps_their_counts() {
    let clock = ManualClock::new();
    for bug in [
        KeyedPlantedBug::NeverReclaims,
        KeyedPlantedBug::LimitReadBeforeWord,
    ] {
        let limiter = limiter(bug, 3, &clock);
        assert!(limiter.try_acquire_n(1, 2).is_ok());
        limiter.set_limit(2).expect("a positive limit");
        assert_eq!(limiter.limit(), 2);
        assert!(limiter.try_acquire(1).is_err(), "{bug:?}");
        assert_eq!(
            limiter.try_acquire_n(2, 2).map(|grant| grant.remaining),
            Ok(0)
        );
        limiter.set_limit(4).expect("a positive limit");
        assert_eq!(limiter.try_acquire(1).map(|grant| grant.remaining), Ok(1));
        assert!(limiter.set_limit(0).is_err());
    }
}
