//! Peeks against the spec's rule of a peek, on the plain and the keyed limiter: every answer
//! is the model's, and no peek changes what any later call is told.

use core::time::Duration;

use fixed_window::{Instant, KeyedRateLimiter, ManualClock, Peek, RateLimiter};
use fixed_window_spec::{Count, Decision, Keyed, NEVER, Peeked, Rules};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    Forward(u64),
    Back(u64),
    /// `try_acquire` on key `.0 % 3` (the plain limiter ignores the key).
    Acquire(u8),
    /// A run of peeks on key `.0 % 4` (key 3 is never acquired).
    Peek(u8),
    SetLimit(u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..3_000u64).prop_map(Step::Forward),
        1 => any::<u64>().prop_map(Step::Forward),
        1 => (0..3_000u64).prop_map(Step::Back),
        5 => any::<u8>().prop_map(Step::Acquire),
        4 => any::<u8>().prop_map(Step::Peek),
        1 => (1..6u32).prop_map(Step::SetLimit),
    ]
}

fn period() -> impl Strategy<Value = u64> {
    prop_oneof![1..1_000u64, any::<u64>().prop_map(|p| p.max(1))]
}

/// The spec's answer as the limiter states it.
fn peek_of(peeked: Peeked, limit: u32) -> Peek {
    let resets_in = if peeked.resets_in == NEVER {
        Duration::MAX
    } else {
        Duration::from_nanos(u64::try_from(peeked.resets_in).unwrap_or(u64::MAX))
    };
    Peek::new(peeked.remaining, limit, resets_in)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn plain_peeks_answer_the_model_and_change_nothing(
        limit in 1..6u32,
        period in period(),
        start in 0..10_000u64,
        steps in proptest::collection::vec(step(), 1..60),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let limiter = RateLimiter::of("peek", limit, Duration::from_nanos(period))
            .unwrap()
            .with_clock(clock.clone());
        let mut rules = Rules::new(start.into(), limit, period.into(), 0).unwrap();
        let mut count = Count::new();
        let mut now = start;
        for step in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d),
                Step::Back(d) => now = now.saturating_sub(d),
                Step::Acquire(_) => {
                    let decision = rules.decide(&count, now.into(), now.into());
                    count.apply(decision);
                    let peek = limiter.peek();
                    let acquired = limiter.try_acquire();
                    prop_assert_eq!(peek.allows(1), acquired.is_ok(), "at {}", now);
                    prop_assert_eq!(acquired.is_ok(), matches!(decision, Decision::Permit { .. }), "at {}", now);
                }
                Step::Peek(runs) => {
                    let expected = peek_of(rules.peek(&count, now.into()), rules.limit);
                    for _ in 0..=runs % 4 {
                        prop_assert_eq!(limiter.peek(), expected, "at {}", now);
                    }
                }
                Step::SetLimit(new) => {
                    // A short period's word may count only up to its ceiling.
                    if limiter.set_limit(new).is_ok() {
                        rules = rules.with_limit(new).unwrap();
                    }
                }
            }
            clock.set(Instant::from_nanos(now));
        }
    }

    #[test]
    fn keyed_peeks_answer_the_model_and_add_no_key(
        limit in 1..6u32,
        period in period(),
        start in 0..10_000u64,
        steps in proptest::collection::vec(step(), 1..60),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let limiter = KeyedRateLimiter::of("peek", limit, Duration::from_nanos(period))
            .unwrap()
            .with_clock(clock.clone());
        let mut keyed = Keyed::new(Rules::new(start.into(), limit, period.into(), 0).unwrap());
        let mut now = start;
        let mut stepped_back = false;
        for step in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d),
                Step::Back(d) => {
                    stepped_back |= d > 0 && now > start;
                    now = now.saturating_sub(d);
                }
                Step::Acquire(key) => {
                    let key = key % 3;
                    let decision = keyed.attempt(&key, now.into(), now.into());
                    let peek = limiter.peek(&key);
                    let acquired = limiter.try_acquire(&key);
                    // On a clock that stepped back, the claim's turn of sweeping may reclaim
                    // the key's word (its window ended by an earlier, later reading), which
                    // the peek before it, writing nothing, did not.
                    if !stepped_back {
                        prop_assert_eq!(peek.allows(1), acquired.is_ok(), "key {} at {}", key, now);
                        if let Ok(permit) = acquired {
                            prop_assert_eq!(permit.remaining(), peek.remaining() - 1);
                        }
                        prop_assert_eq!(acquired.is_ok(), matches!(decision, Decision::Permit { .. }), "key {} at {}", key, now);
                    }
                }
                Step::Peek(key) => {
                    let key = key % 4;
                    let held = limiter.len();
                    let expected = peek_of(keyed.peek(&key, now.into()), keyed.rules().limit);
                    let peek = limiter.peek(&key);
                    // Once the clock stepped back, a key counts against the latest window the
                    // limiter has seen (its own, or for a key it does not hold the sweep's
                    // horizon), where the model counts per key: the two may differ.
                    if !stepped_back {
                        prop_assert_eq!(peek, expected, "key {} at {}", key, now);
                    }
                    prop_assert_eq!(limiter.len(), held, "a peek added or removed a key");
                }
                Step::SetLimit(new) => {
                    if limiter.set_limit(new).is_ok() {
                        prop_assert!(keyed.set_limit(new));
                    }
                }
            }
            clock.set(Instant::from_nanos(now));
        }
        if !stepped_back {
            let never_seen = peek_of(keyed.peek(&3, now.into()), keyed.rules().limit);
            prop_assert_eq!(limiter.peek(&3), never_seen);
        }
    }
}

#[test]
fn a_reclaimed_key_answers_a_whole_window() {
    let clock = ManualClock::new();
    let limiter = KeyedRateLimiter::of("peek", 2, Duration::from_secs(1))
        .unwrap()
        .with_clock(clock.clone());
    limiter.try_acquire(&"a").unwrap();
    limiter.try_acquire(&"a").unwrap();
    assert_eq!(limiter.peek(&"a").remaining(), 0);
    clock.advance(Duration::from_secs(3));
    // Windows long ended: `shrink` reclaims the key's word.
    limiter.shrink();
    let peek = limiter.peek(&"a");
    assert_eq!(
        (peek.remaining(), peek.resets_in()),
        (2, Duration::from_secs(1))
    );
}

#[test]
fn a_limit_lowered_below_the_count_leaves_none() {
    let limiter = RateLimiter::of("peek", 4, Duration::from_secs(1))
        .unwrap()
        .with_clock(ManualClock::new());
    for _ in 0..3 {
        limiter.try_acquire().unwrap();
    }
    limiter.set_limit(2).unwrap();
    assert_eq!(limiter.peek(), Peek::new(0, 2, Duration::from_secs(1)));
}

#[test]
fn a_window_that_never_ends_resets_in_duration_max() {
    let clock = ManualClock::starting_at(Instant::from_nanos(1));
    let limiter = RateLimiter::of("peek", 1, Duration::MAX)
        .unwrap()
        .with_clock(clock);
    assert_eq!(limiter.peek().resets_in(), Duration::MAX);
}
