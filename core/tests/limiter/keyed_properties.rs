//! The keyed limiter against one plain limiter per key, on random single-threaded sequences:
//! every outcome equal on clocks that never step back, whatever keys come and go and whenever
//! they are reclaimed; and on clocks that do step back, never more than `limit` permits a key
//! in any window its permits can count against.

use core::time::Duration;
use std::collections::BTreeMap;

use fixed_window::{Instant, KeyedRateLimiter, ManualClock, RateLimiter};
use proptest::prelude::*;

use crate::support::placeable;

#[derive(Debug, Clone)]
enum Step {
    Forward(u64),
    Back(u64),
    /// `count` attempts for `key`, each with a deadline `wait` nanoseconds away.
    Attempt {
        key: u8,
        count: u8,
        wait: u64,
    },
    Shrink,
    /// `set_limit` on the keyed limiter and on every key's plain limiter.
    SetLimit(u32),
}

fn forward_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..3_000u64).prop_map(Step::Forward),
        1 => any::<u64>().prop_map(Step::Forward),
        8 => (0..6u8, 1..5u8, prop_oneof![Just(0u64), 0..3_000u64]).prop_map(|(key, count, wait)| Step::Attempt { key, count, wait }),
        1 => Just(Step::Shrink),
    ]
}

fn limit_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => forward_step(),
        1 => (0..8u32).prop_map(Step::SetLimit),
    ]
}

fn any_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => forward_step(),
        1 => (0..3_000u64).prop_map(Step::Back),
    ]
}

fn start() -> impl Strategy<Value = u64> {
    prop_oneof![
        0..10_000u64,
        (0..10_000u64).prop_map(|back| u64::MAX - back)
    ]
}

fn period() -> impl Strategy<Value = u64> {
    prop_oneof![1..1_000u64, any::<u64>().prop_map(|p| p.max(1))]
}

struct Subjects {
    clock: ManualClock,
    keyed: KeyedRateLimiter<u8, ManualClock>,
    plain: BTreeMap<u8, RateLimiter<ManualClock>>,
    limit: u32,
    period: Duration,
}

impl Subjects {
    fn new(limit: u32, period: u64, start: u64) -> Subjects {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let period = Duration::from_nanos(period);
        let keyed = KeyedRateLimiter::of("prop", limit, period)
            .unwrap()
            .with_clock(clock.clone());
        Subjects {
            clock,
            keyed,
            plain: BTreeMap::new(),
            limit,
            period,
        }
    }

    /// `set_limit(limit)` on the keyed limiter and every plain one: the same outcome, and
    /// the plain limiters made later start with the limit in force.
    fn set_limit(&mut self, limit: u32) -> Result<(), TestCaseError> {
        let keyed = self.keyed.set_limit(limit);
        for plain in self.plain.values() {
            prop_assert_eq!(plain.set_limit(limit), keyed, "set_limit({})", limit);
        }
        if keyed.is_ok() {
            self.limit = limit;
        }
        prop_assert_eq!(self.keyed.limit(), self.limit);
        Ok(())
    }

    /// The plain limiter of `key`, created (lazily, but with the keyed limiter's origin)
    /// the first time the key is used.
    fn plain(&mut self, key: u8, origin: u64) -> &RateLimiter<ManualClock> {
        let (limit, period) = (self.limit, self.period);
        self.plain.entry(key).or_insert_with(|| {
            RateLimiter::of("prop", limit, period)
                .unwrap()
                .with_clock(ManualClock::starting_at(Instant::from_nanos(origin)))
        })
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_key_behaves_as_its_own_plain_limiter_on_forward_clocks(
        limit in 1..5u32,
        period in period(),
        start in start(),
        steps in proptest::collection::vec(forward_step(), 1..80),
    ) {
        let mut subjects = Subjects::new(limit, period, start);
        let mut now = start;
        // The window index of each key's latest permit, computed here from origin and period.
        let mut last_permit: BTreeMap<u8, u64> = BTreeMap::new();
        for step in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d),
                Step::Back(_) => unreachable!("forward clocks only"),
                Step::SetLimit(limit) => subjects.set_limit(limit)?,
                Step::Attempt { key, count, wait } => {
                    let reading = Instant::from_nanos(now);
                    let deadline = Instant::from_nanos(now.saturating_add(wait));
                    for _ in 0..count {
                        let keyed = subjects.keyed.attempt(&key, reading, deadline);
                        let plain = subjects.plain(key, start).attempt(reading, deadline);
                        prop_assert_eq!(keyed, plain, "key {} at {}", key, now);
                        if matches!(keyed, fixed_window::Attempt::Permitted { .. }) {
                            last_permit.insert(key, (now - start) / period);
                        }
                    }
                }
                Step::Shrink => {
                    subjects.keyed.shrink();
                    // Only keys that took a permit in the current window survive a shrink.
                    let current = (now - start) / period;
                    let live = last_permit.values().filter(|&&window| window >= current).count();
                    prop_assert_eq!(subjects.keyed.len(), live, "at {}", now);
                }
            }
            subjects.clock.set(Instant::from_nanos(now));
        }
    }

    #[test]
    fn every_key_behaves_as_its_own_plain_limiter_across_set_limit(
        limit in 1..5u32,
        // Periods of a microsecond or more leave every limit drawn below the ceiling.
        period in prop_oneof![1_000..1_000_000u64, any::<u64>().prop_map(|p| p.max(1_000))],
        start in start(),
        steps in proptest::collection::vec(limit_step(), 1..80),
    ) {
        let mut subjects = Subjects::new(limit, period, start);
        let mut now = start;
        // The window index of each key's latest permit, computed here from origin and period.
        let mut last_permit: BTreeMap<u8, u64> = BTreeMap::new();
        for step in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d),
                Step::Back(_) => unreachable!("forward clocks only"),
                Step::SetLimit(limit) => subjects.set_limit(limit)?,
                Step::Attempt { key, count, wait } => {
                    let reading = Instant::from_nanos(now);
                    let deadline = Instant::from_nanos(now.saturating_add(wait));
                    for _ in 0..count {
                        let keyed = subjects.keyed.attempt(&key, reading, deadline);
                        let plain = subjects.plain(key, start).attempt(reading, deadline);
                        prop_assert_eq!(keyed, plain, "key {} at {}", key, now);
                        if matches!(keyed, fixed_window::Attempt::Permitted { .. }) {
                            last_permit.insert(key, (now - start) / period);
                        }
                    }
                }
                Step::Shrink => {
                    subjects.keyed.shrink();
                    // Only keys that took a permit in the current window survive a shrink.
                    let current = (now - start) / period;
                    let live = last_permit.values().filter(|&&window| window >= current).count();
                    prop_assert_eq!(subjects.keyed.len(), live, "at {}", now);
                }
            }
            subjects.clock.set(Instant::from_nanos(now));
        }
    }

    #[test]
    fn clocks_stepping_back_never_give_a_key_more_than_limit_in_a_window(
        limit in 1..5u32,
        period in 1..1_000u64,
        start in 0..10_000u64,
        steps in proptest::collection::vec(any_step(), 1..80),
    ) {
        let subjects = Subjects::new(limit, period, start);
        let mut now = start;
        // A permit counts against a window between its reading's and the latest any call has
        // read (a reading behind the window in force counts against that window).
        let mut latest = 0;
        let mut permits: BTreeMap<u8, Vec<(u64, u64)>> = BTreeMap::new();
        for step in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d.min(1 << 40)),
                Step::Back(d) => now = now.saturating_sub(d),
                Step::Attempt { key, count, .. } => {
                    let window = now.saturating_sub(start) / period;
                    latest = latest.max(window);
                    for _ in 0..count {
                        if subjects.keyed.try_acquire(&key).is_ok() {
                            permits.entry(key).or_default().push((window, latest));
                        }
                    }
                }
                Step::SetLimit(_) => unreachable!("one limit throughout"),
                Step::Shrink => {
                    latest = latest.max(now.saturating_sub(start) / period);
                    subjects.keyed.shrink();
                }
            }
            subjects.clock.set(Instant::from_nanos(now));
        }
        for (key, permits) in permits {
            prop_assert!(placeable(permits, limit as usize), "key {}", key);
        }
    }
}
