//! Each bug, shown where it shows: alone on a manual clock, or with two asynchronous callers
//! interleaved between the read and the write.

use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::panic::{AssertUnwindSafe, catch_unwind};

use fixed_window::{Clock, Instant, Interrupt, Interrupted, ManualClock, Settings, Sleep};
use fixed_window_broken::{Grant, PlantedBug, PlantedLimiter, Refusal, Wide};

const PERIOD: Duration = Duration::from_nanos(10);

fn limiter(
    bug: PlantedBug,
    limit: u32,
    max_wait: Duration,
    clock: &ManualClock,
) -> PlantedLimiter<Wide, ManualClock> {
    let settings = Settings::new("flawed", limit, PERIOD).expect("a valid configuration");
    PlantedLimiter::new(bug, settings.with_max_wait(max_wait), clock.clone())
}

fn rejected(at: u64, retry_after: u64) -> Result<Grant, Refusal> {
    Err(Refusal::Rejected {
        at: Instant::from_nanos(at),
        retry_after: Duration::from_nanos(retry_after),
    })
}

/// Two `acquire_async` calls polled in turn until both end: a racing bug's read of each
/// comes before either writes.
fn race(limiter: &PlantedLimiter<Wide, ManualClock>) -> [Result<Grant, Refusal>; 2] {
    let mut context = Context::from_waker(Waker::noop());
    let mut calls = [pin!(limiter.acquire_async()), pin!(limiter.acquire_async())];
    let mut ended = [None, None];
    while ended.iter().any(Option::is_none) {
        for (call, end) in calls.iter_mut().zip(&mut ended) {
            if end.is_none()
                && let Poll::Ready(result) = call.as_mut().poll(&mut context)
            {
                *end = Some(result);
            }
        }
    }
    ended.map(|end| end.expect("both calls ended"))
}

#[test]
fn every_planted_bug_has_one_name() {
    for bug in PlantedBug::ALL {
        assert_eq!(bug.name().parse(), Ok(bug));
        assert_eq!(bug.to_string(), bug.name());
    }
    let error = "typo".parse::<PlantedBug>().unwrap_err().to_string();
    assert!(
        PlantedBug::ALL.iter().all(|bug| error.contains(bug.name())),
        "{error}"
    );
}

#[test]
fn a_window_advanced_from_now_is_off_the_grid() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::AdvanceFromNow, 1, Duration::ZERO, &clock);
    clock.set(Instant::from_nanos(15));
    assert!(limiter.try_acquire().is_ok());
    // The grid's next window opens at 20; this one, started at 15, runs to 25.
    clock.set(Instant::from_nanos(20));
    assert_eq!(limiter.try_acquire(), rejected(20, 5));
}

#[test]
fn a_deadline_overshoot_waits_past_the_deadline() {
    let clock = ManualClock::new();
    let limiter = limiter(
        PlantedBug::DeadlineOvershoot,
        1,
        Duration::from_nanos(4),
        &clock,
    );
    assert!(limiter.try_acquire().is_ok());
    clock.set(Instant::from_nanos(5));
    // The next window opens at 10, after the deadline 9; the call sleeps there anyway.
    let grant = limiter.acquire(None).expect("a permit at 10");
    assert_eq!(grant.at, Instant::from_nanos(10));
}

#[test]
fn an_overflow_panic_panics_near_the_end_of_the_timeline() {
    let clock = ManualClock::starting_at(Instant::MAX);
    let limiter = limiter(PlantedBug::OverflowPanic, 1, Duration::ZERO, &clock);
    assert!(limiter.try_acquire().is_ok());
    assert!(catch_unwind(AssertUnwindSafe(|| limiter.try_acquire())).is_err());
    let long_wait = limiter_with_wait(Duration::MAX);
    assert!(catch_unwind(AssertUnwindSafe(|| long_wait.acquire(None))).is_err());
}

fn limiter_with_wait(max_wait: Duration) -> PlantedLimiter<Wide, ManualClock> {
    limiter(PlantedBug::OverflowPanic, 1, max_wait, &ManualClock::new())
}

#[test]
fn without_its_bug_showing_a_planted_limiter_keeps_the_rules() {
    // Far from the end of time, alone: the permit, the full window's rejection, the wait.
    let clock = ManualClock::new();
    for bug in [
        PlantedBug::OverflowPanic,
        PlantedBug::LostUpdate,
        PlantedBug::Overcount,
        PlantedBug::GiveUpOnLostRace,
    ] {
        clock.set(Instant::ZERO);
        let limiter = limiter(bug, 1, PERIOD, &clock);
        assert!(limiter.try_acquire().is_ok(), "{bug:?}");
        clock.set(Instant::from_nanos(3));
        assert_eq!(limiter.try_acquire(), rejected(3, 7), "{bug:?}");
        let grant = limiter.acquire(None).expect("a permit in the next window");
        assert_eq!(
            grant,
            Grant {
                at: Instant::from_nanos(10),
                remaining: 0
            },
            "{bug:?}"
        );
    }
}

#[test]
fn a_lost_update_grants_the_last_permit_twice() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::LostUpdate, 1, Duration::ZERO, &clock);
    assert!(race(&limiter).iter().all(Result::is_ok));
}

#[test]
fn an_overcount_grants_the_last_permit_twice() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::Overcount, 1, Duration::ZERO, &clock);
    assert!(race(&limiter).iter().all(Result::is_ok));
}

#[test]
fn a_caller_that_loses_the_race_gives_up_with_a_permit_left() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::GiveUpOnLostRace, 2, Duration::ZERO, &clock);
    let [first, second] = race(&limiter);
    assert!(first.is_ok());
    assert_eq!(second, rejected(0, 10));
}

#[test]
fn a_correct_claim_retries_a_lost_race() {
    // The same race, with a bug that does not race: both permits are granted, each once.
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::DeadlineOvershoot, 2, Duration::ZERO, &clock);
    let remaining = race(&limiter).map(|result| result.map(|grant| grant.remaining));
    let mut remaining = remaining.map(|r| r.expect("a permit each"));
    remaining.sort_unstable();
    assert_eq!(remaining, [0, 1]);
}

#[test]
fn an_interrupted_wait_is_refused() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::CarryOver, 1, PERIOD, &clock);
    assert!(limiter.try_acquire().is_ok());
    let interrupt = fixed_window::Interrupt::new();
    interrupt.interrupt();
    assert_eq!(limiter.acquire(Some(&interrupt)), Err(Refusal::Interrupted));
}

#[test]
fn a_weight_counted_as_one_leaves_the_window_open() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::WeightCountedAsOne, 4, Duration::ZERO, &clock);
    // Four permits at once, counted as one: three more come, and then the window is full.
    assert_eq!(limiter.try_acquire_n(4).map(|grant| grant.remaining), Ok(0));
    assert_eq!((0..4).filter(|_| limiter.try_acquire().is_ok()).count(), 3);
    // Alone, a correct limiter would have refused them all.
    let correct = self::limiter(PlantedBug::CarryOver, 4, Duration::ZERO, &clock);
    assert!(correct.try_acquire_n(4).is_ok());
    assert_eq!(correct.try_acquire(), rejected(0, 10));
}

#[test]
fn a_drain_that_leaves_one_grants_one_more() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::DrainLeavesOne, 3, Duration::ZERO, &clock);
    clock.set(Instant::from_nanos(12));
    assert_eq!(limiter.drain(), Duration::from_nanos(8));
    assert_eq!(limiter.try_acquire().map(|grant| grant.remaining), Ok(0));
    assert_eq!(limiter.try_acquire(), rejected(12, 8));
}

/// A clock reading 103 ns, 7 ns into a period of Unix time.
struct UnixAt103;

impl Clock for UnixAt103 {
    fn now(&self) -> Instant {
        Instant::from_nanos(103)
    }
    fn sleep(&self, _: Duration, _: &Interrupt) -> Result<(), Interrupted> {
        Err(Interrupted)
    }
    fn sleep_async(&self, _: Duration) -> Sleep<'_> {
        Box::pin(async { Err(Interrupted) })
    }
    fn unix_time(&self) -> Duration {
        Duration::from_nanos(1_000_007)
    }
}

#[test]
fn an_epoch_off_by_one_period_starts_its_grid_a_period_late() {
    let settings = Settings::new("flawed", 1, PERIOD).expect("a valid configuration");
    let aligned = |bug| PlantedLimiter::<Wide, _>::aligned_to_unix_time(bug, settings, UnixAt103);
    // The rule: the boundary at or before the reading, 96; the window ends at 106.
    let correct = aligned(PlantedBug::CarryOver);
    assert!(correct.try_acquire().is_ok());
    assert_eq!(correct.try_acquire(), rejected(103, 3));
    // The bug: the boundary after it, 106, so the reading is in a first window ending at 116.
    let late = aligned(PlantedBug::EpochOffByOnePeriod);
    assert!(late.try_acquire().is_ok());
    assert_eq!(late.try_acquire(), rejected(103, 13));
}

#[test]
fn zero_permits_are_granted_without_counting() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::CarryOver, 1, Duration::ZERO, &clock);
    assert_eq!(limiter.try_acquire_n(0).map(|grant| grant.remaining), Ok(1));
    assert_eq!(limiter.try_acquire().map(|grant| grant.remaining), Ok(0));
    assert_eq!(limiter.try_acquire_n(0).map(|grant| grant.remaining), Ok(0));
}

#[test]
fn a_limit_change_keeps_the_count_and_a_drain_never_lowers_it() {
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::CarryOver, 4, Duration::ZERO, &clock);
    assert_eq!(limiter.try_acquire_n(3).map(|grant| grant.remaining), Ok(1));
    // Lowered below the count: full at once; a drain leaves the count where it is.
    limiter.set_limit(2).expect("a positive limit");
    assert_eq!(limiter.limit(), 2);
    assert_eq!(limiter.try_acquire(), rejected(0, 10));
    limiter.drain();
    // Raised: the three taken still count.
    limiter.set_limit(5).expect("a positive limit");
    assert_eq!(limiter.try_acquire_n(2).map(|grant| grant.remaining), Ok(0));
    assert_eq!(
        limiter.set_limit(0),
        Err(fixed_window::ConfigError::ZeroLimit)
    );
    assert_eq!(
        limiter.set_limit(u32::MAX).map(|()| limiter.limit()),
        Ok(u32::MAX)
    );
}

#[test]
fn a_limit_read_before_the_word_behaves_without_a_race() {
    // Alone, reading the limit first or last reads the same limit: the bug needs a limit
    // change between the two reads, which the models' loom and shuttle runs make.
    let clock = ManualClock::new();
    let limiter = limiter(PlantedBug::LimitReadBeforeWord, 4, Duration::ZERO, &clock);
    assert_eq!(limiter.try_acquire_n(3).map(|grant| grant.remaining), Ok(1));
    limiter.set_limit(2).expect("a positive limit");
    assert_eq!(limiter.try_acquire(), rejected(0, 10));
}
