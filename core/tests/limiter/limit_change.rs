//! A call whose weight a lowering of the limit passes while it is under way: it ends refused
//! as too many at its next decision, never waiting for a window that could not hold it and
//! never counted as a rejection.

use core::time::Duration;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use fixed_window::{
    Attempt, Clock, Instant, Interrupt, Interrupted, KeyedRateLimiter, ManualClock, RateLimiter,
    RateLimiterError, RateLimiterEvent, Sleep, WeightedRejection,
};

use crate::support::Recorder;

/// A manual clock that lowers its limiter's limit to `to` the first time it is slept through
/// (just after the sleep) or read (just before the reading), whichever it is armed for: a
/// `set_limit` from another thread, landing at a chosen point of a call.
struct Lowering<L> {
    clock: ManualClock,
    limiter: OnceLock<Weak<L>>,
    on_sleep: AtomicBool,
    on_read: AtomicBool,
    to: u32,
}

/// What the clock lowers: either limiter.
trait SetLimit {
    fn lower(&self, to: u32);
}

impl<C: Clock> SetLimit for RateLimiter<C> {
    fn lower(&self, to: u32) {
        self.set_limit(to)
            .expect("a positive limit below the ceiling");
    }
}

impl<C: Clock> SetLimit for KeyedRateLimiter<&'static str, C> {
    fn lower(&self, to: u32) {
        self.set_limit(to)
            .expect("a positive limit below the ceiling");
    }
}

impl<L: SetLimit + Send + Sync> Lowering<L> {
    fn new(to: u32) -> Arc<Lowering<L>> {
        Arc::new(Lowering {
            clock: ManualClock::new(),
            limiter: OnceLock::new(),
            on_sleep: AtomicBool::new(false),
            on_read: AtomicBool::new(false),
            to,
        })
    }

    fn watch(&self, limiter: &Arc<L>) {
        assert!(self.limiter.set(Arc::downgrade(limiter)).is_ok());
    }

    fn arm_on_sleep(&self) {
        self.on_sleep.store(true, Ordering::SeqCst);
    }

    fn arm_on_read(&self) {
        self.on_read.store(true, Ordering::SeqCst);
    }

    fn fire(&self, armed: &AtomicBool) {
        if armed.swap(false, Ordering::SeqCst)
            && let Some(limiter) = self.limiter.get().and_then(Weak::upgrade)
        {
            limiter.lower(self.to);
        }
    }
}

impl<L: SetLimit + Send + Sync> Clock for Lowering<L> {
    fn now(&self) -> Instant {
        self.fire(&self.on_read);
        self.clock.now()
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        let slept = self.clock.sleep(duration, interrupt);
        self.fire(&self.on_sleep);
        slept
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        // The manual clock's sleep has moved its time by the time it returns the future.
        let sleep = self.clock.sleep_async(duration);
        self.fire(&self.on_sleep);
        sleep
    }
}

type Plain = RateLimiter<Arc<Lowering<PlainOf>>>;
/// The plain limiter the clock lowers (a name for the recursive type).
struct PlainOf(Plain);

impl SetLimit for PlainOf {
    fn lower(&self, to: u32) {
        self.0.lower(to);
    }
}

/// A limiter of 4 per second that may wait 10 s, whose clock lowers it to `to` when armed,
/// with what its listener hears.
fn plain(to: u32) -> (Arc<PlainOf>, Arc<Lowering<PlainOf>>, Recorder) {
    let clock = Lowering::new(to);
    let recorder = Recorder::default();
    let limiter = RateLimiter::builder("api", 4, Duration::from_secs(1))
        .expect("a valid configuration")
        .max_wait(Duration::from_secs(10))
        .clock(Arc::clone(&clock))
        .listener(recorder.listener())
        .build();
    let limiter = Arc::new(PlainOf(limiter));
    clock.watch(&limiter);
    (limiter, clock, recorder)
}

fn too_many(limit: u32, requested: u32) -> RateLimiterError {
    RateLimiterError::TooMany {
        name: "api",
        limit,
        requested,
    }
}

#[test]
fn a_waiting_call_whose_weight_a_lowering_passes_ends_too_many_at_its_next_decision() {
    let (limiter, clock, recorder) = plain(2);
    assert!(limiter.0.try_acquire_n(3).is_ok());
    // Three waits for the next window; while it sleeps, the limit falls to two.
    clock.arm_on_sleep();
    assert_eq!(limiter.0.acquire_n(3), Err(too_many(2, 3)));
    // It woke in the next window, refused there without a wait or a rejection.
    assert_eq!(clock.clock.now(), Instant::from_nanos(1_000_000_000));
    assert!(
        !recorder
            .events()
            .iter()
            .any(|event| matches!(event, RateLimiterEvent::Rejected { .. }))
    );
    // A weight the lowered limit holds is still served.
    assert!(limiter.0.acquire_n(2).is_ok());
}

#[test]
fn an_asynchronous_waiting_call_is_refused_the_same_way() {
    let (limiter, clock, _) = plain(1);
    assert!(limiter.0.try_acquire_n(4).is_ok());
    clock.arm_on_sleep();
    let ended = futures::executor::block_on(limiter.0.acquire_n_async(2));
    assert_eq!(ended, Err(too_many(1, 2)));
}

#[test]
fn a_try_whose_weight_a_lowering_passes_before_its_claim_is_too_many_and_no_rejection() {
    let (limiter, clock, recorder) = plain(2);
    // The weight is checked against 4; the clock, read after that, lowers the limit to 2
    // before the claim reads it.
    clock.arm_on_read();
    assert_eq!(
        limiter
            .0
            .try_acquire_n(3)
            .map_err(WeightedRejection::to_error),
        Err(too_many(2, 3))
    );
    assert!(recorder.events().is_empty());
    // A weight that fits the lowered limit but not the window is still a rejection.
    assert!(limiter.0.try_acquire_n(2).is_ok());
    assert!(matches!(
        limiter.0.try_acquire_n(1),
        Err(WeightedRejection::Full(rejection)) if rejection.limit() == 2
    ));
}

#[test]
fn the_sans_io_step_refuses_a_weight_above_the_limit_it_reads() {
    let limiter = RateLimiter::of("api", 4, Duration::from_secs(1))
        .expect("a valid configuration")
        .with_clock(ManualClock::new());
    let (now, deadline) = (Instant::ZERO, Instant::from_nanos(2_000_000_000));
    assert!(limiter.attempt_n(3, now, deadline).is_ok());
    let next = Instant::from_nanos(1_000_000_000);
    assert_eq!(
        limiter.attempt_n(3, now, deadline),
        Ok(Attempt::Wait { until: next })
    );
    limiter.set_limit(2).expect("a positive limit");
    assert_eq!(limiter.attempt_n(3, next, deadline), Err(too_many(2, 3)));
}

type Keyed = KeyedRateLimiter<&'static str, Arc<Lowering<KeyedOf>>>;
/// The keyed limiter the clock lowers; `shrink` also reclaims every key whose window ended
/// when it does.
struct KeyedOf(Keyed, bool);

impl SetLimit for KeyedOf {
    fn lower(&self, to: u32) {
        self.0.lower(to);
        if self.1 {
            self.0.shrink();
        }
    }
}

/// A keyed limiter of 4 per second per key that may wait 10 s, whose clock lowers it to 1 when
/// armed (and, if `shrinks`, reclaims every key whose window ended then).
fn keyed(shrinks: bool) -> (Arc<KeyedOf>, Arc<Lowering<KeyedOf>>) {
    let clock = Lowering::new(1);
    let limiter = KeyedRateLimiter::builder("api", 4, Duration::from_secs(1))
        .expect("a valid configuration")
        .max_wait(Duration::from_secs(10))
        .clock(Arc::clone(&clock))
        .build();
    let limiter = Arc::new(KeyedOf(limiter, shrinks));
    clock.watch(&limiter);
    (limiter, clock)
}

/// Three of key `a`'s four permits taken, a call for two more waits for the next window, and
/// the limit falls to one while it sleeps: it is refused as too many.
fn refused_after_lowering(limiter: &KeyedOf, clock: &Lowering<KeyedOf>) {
    assert!(limiter.0.try_acquire_n(&"a", 3).is_ok());
    clock.arm_on_sleep();
    let error = limiter
        .0
        .acquire_n(&"a", 2)
        .expect_err("refused after the lowering");
    assert_eq!(error.error(), too_many(1, 2));
}

#[test]
fn a_keyed_waiting_call_is_refused_for_its_key() {
    let (limiter, clock) = keyed(false);
    refused_after_lowering(&limiter, &clock);
}

/// A key reclaimed while its call waited, whose weight a lowering then passed, is refused
/// without being added again: added, it would hold an empty count no sweep removes, past the
/// memory bound (the simulator found this, `--limiter keyed --seed 20261205`, four scenarios
/// in 100,000).
#[test]
fn a_key_reclaimed_while_its_call_waited_is_not_added_back_by_its_refusal() {
    let (limiter, clock) = keyed(true);
    refused_after_lowering(&limiter, &clock);
    assert_eq!(limiter.0.len(), 0);
    // The same for a try on a key the limiter does not hold.
    assert!(limiter.0.try_acquire_n(&"b", 2).is_err());
    assert_eq!(limiter.0.len(), 0);
}
