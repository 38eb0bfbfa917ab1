//! Limits per key against one plain limiter per key, on random single-threaded sequences: a
//! key with a limit of its own (from the map given at build, a function of the key, or a
//! live change) behaves exactly as its own plain limiter with that limit, the limit changed
//! by `set_limit` whenever the key's changes, its count kept.

use core::num::NonZeroU32;
use core::time::Duration;
use std::collections::BTreeMap;

use fixed_window::{ConfigError, Instant, KeyedRateLimiter, ManualClock, RateLimiter};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    Forward(u64),
    /// `count` attempts for `key`, each with a deadline `wait` nanoseconds away.
    Attempt {
        key: u8,
        count: u8,
        wait: u64,
    },
    /// `n` permits at once for `key`, never waiting.
    Weighted {
        key: u8,
        n: u32,
    },
    Shrink,
    /// `set_limit`: the default, for every key without a limit of its own.
    SetLimit(u32),
    SetKeyLimit {
        key: u8,
        limit: u32,
    },
    ClearKeyLimit(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..3_000u64).prop_map(Step::Forward),
        8 => (0..6u8, 1..5u8, prop_oneof![Just(0u64), 0..3_000u64])
            .prop_map(|(key, count, wait)| Step::Attempt { key, count, wait }),
        2 => (0..6u8, 0..8u32).prop_map(|(key, n)| Step::Weighted { key, n }),
        1 => Just(Step::Shrink),
        1 => (0..8u32).prop_map(Step::SetLimit),
        2 => (0..6u8, 0..8u32).prop_map(|(key, limit)| Step::SetKeyLimit { key, limit }),
        1 => (0..6u8).prop_map(Step::ClearKeyLimit),
    ]
}

/// The function of the key the keyed limiter is built with: key 5 has six permits.
fn rule(key: u8) -> Option<u32> {
    (key == 5).then_some(6)
}

/// What the test expects of the keyed limiter's limits, kept independently of it.
struct Limits {
    default: u32,
    own: BTreeMap<u8, u32>,
}

impl Limits {
    fn of(&self, key: u8) -> u32 {
        self.own
            .get(&key)
            .copied()
            .or_else(|| rule(key))
            .unwrap_or(self.default)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_key_behaves_as_its_own_plain_limiter_under_its_own_limit(
        default in 1..5u32,
        built in proptest::collection::btree_map(0..6u8, 1..8u32, 0..3),
        // Periods of a microsecond or more leave every limit drawn below the ceiling.
        period in prop_oneof![1_000..1_000_000u64, any::<u64>().prop_map(|p| p.max(1_000))],
        start in 0..10_000u64,
        steps in proptest::collection::vec(step(), 1..80),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let mut builder = KeyedRateLimiter::builder("prop", default, Duration::from_nanos(period))
            .unwrap()
            .key_limits(|key: &u8| rule(*key).and_then(NonZeroU32::new));
        for (&key, &limit) in &built {
            builder = builder.key_limit(key, limit).unwrap();
        }
        let keyed = builder.clock(clock.clone()).build();
        let mut limits = Limits { default, own: built };
        let mut plain: BTreeMap<u8, RateLimiter<ManualClock>> = BTreeMap::new();
        let mut now = start;
        for step in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d),
                Step::Shrink => {
                    keyed.shrink();
                }
                Step::SetLimit(limit) => {
                    let result = keyed.set_limit(limit);
                    prop_assert_eq!(result.is_ok(), limit > 0);
                    if result.is_ok() {
                        limits.default = limit;
                    }
                }
                Step::SetKeyLimit { key, limit } => {
                    let result = keyed.set_key_limit(key, limit);
                    if limit == 0 {
                        prop_assert_eq!(result, Err(ConfigError::ZeroLimit));
                    } else {
                        prop_assert_eq!(result, Ok(()));
                        limits.own.insert(key, limit);
                    }
                }
                Step::ClearKeyLimit(key) => {
                    prop_assert_eq!(keyed.clear_key_limit(&key), limits.own.remove(&key));
                }
                Step::Attempt { key, count, wait } => {
                    let reading = Instant::from_nanos(now);
                    let deadline = Instant::from_nanos(now.saturating_add(wait));
                    for _ in 0..count {
                        let expected = own_plain(&mut plain, key, limits.of(key), start, period)
                            .attempt(reading, deadline);
                        prop_assert_eq!(keyed.attempt(&key, reading, deadline), expected, "key {} at {}", key, now);
                    }
                }
                Step::Weighted { key, n } => {
                    clock.set(Instant::from_nanos(now));
                    let limiter = own_plain(&mut plain, key, limits.of(key), start, period);
                    limiter.clock().set(Instant::from_nanos(now));
                    let expected = limiter.try_acquire_n(n).map(|permit| permit.remaining()).map_err(|error| error.to_string());
                    let found = keyed.try_acquire_n(&key, n).map(|permit| permit.remaining()).map_err(|error| error.error().to_string());
                    prop_assert_eq!(found, expected, "key {} at {}", key, now);
                }
            }
            prop_assert_eq!(keyed.limit(), limits.default);
            for key in 0..6u8 {
                prop_assert_eq!(keyed.key_limit(&key), limits.of(key), "key {}", key);
            }
            clock.set(Instant::from_nanos(now));
        }
    }
}

/// The plain limiter of `key`, made with the keyed limiter's origin the first time the key is
/// used, with `limit` put in force: the key's limit now.
fn own_plain(
    plain: &mut BTreeMap<u8, RateLimiter<ManualClock>>,
    key: u8,
    limit: u32,
    origin: u64,
    period: u64,
) -> &RateLimiter<ManualClock> {
    let limiter = plain.entry(key).or_insert_with(|| {
        RateLimiter::of("prop", limit, Duration::from_nanos(period))
            .unwrap()
            .with_clock(ManualClock::starting_at(Instant::from_nanos(origin)))
    });
    limiter.set_limit(limit).unwrap();
    limiter
}

#[test]
fn a_limit_above_the_ceiling_is_refused_and_a_rules_answer_is_held_to_it() {
    // A microsecond period leaves few bits to count in: the ceiling is small.
    let limiter = KeyedRateLimiter::builder("tiny", 1, Duration::from_micros(1))
        .unwrap()
        .key_limits(|_: &u8| NonZeroU32::new(u32::MAX))
        .clock(ManualClock::new())
        .build();
    let ceiling = limiter.limit_ceiling();
    assert!(ceiling < u32::MAX);
    assert_eq!(
        limiter.set_key_limit(1, ceiling + 1),
        Err(ConfigError::LimitAboveCeiling {
            limit: ceiling + 1,
            ceiling
        })
    );
    assert_eq!(limiter.key_limit(&1), ceiling);
    assert_eq!(limiter.set_key_limit(1, ceiling), Ok(()));
}

#[test]
fn a_limit_given_at_build_above_the_defaults_ceiling_widens_the_words() {
    let narrow = KeyedRateLimiter::<u8>::of("tiny", 1, Duration::from_micros(1)).unwrap();
    let above = narrow.limit_ceiling() + 1;
    let limiter = KeyedRateLimiter::builder("tiny", 1, Duration::from_micros(1))
        .unwrap()
        .key_limit(7_u8, above)
        .unwrap()
        .clock(ManualClock::new())
        .build();
    assert!(limiter.limit_ceiling() >= above);
    assert_eq!(
        limiter
            .try_acquire_n(&7, above)
            .map(|permit| permit.remaining()),
        Ok(0)
    );
}
