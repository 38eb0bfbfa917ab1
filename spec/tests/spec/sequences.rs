//! Properties of any sequence of attempts: the rules checked against each other, not against
//! a second copy of themselves.

use std::collections::BTreeMap;

use fixed_window_spec::{Count, Decision, END_OF_TIME, Keyed, NEVER, Next, Rules, Waiting};
use proptest::prelude::*;

fn rules() -> impl Strategy<Value = Rules> {
    (0..1_000u128, 1..5u32, 1..50u128, 0..120u128).prop_map(|(origin, limit, period, max_wait)| {
        Rules::new(origin, limit, period, max_wait).expect("a valid configuration")
    })
}

proptest! {
    #[test]
    fn no_window_grants_more_than_its_limit(
        rules in rules(),
        readings in proptest::collection::vec(0..3_000u128, 1..200),
    ) {
        let mut count = Count::new();
        let mut per_window: BTreeMap<u128, u32> = BTreeMap::new();
        let mut latest = 0;
        for now in readings {
            let decision = rules.decide(&count, now, rules.deadline(now));
            if let Decision::Permit { index, remaining } = decision {
                // Windows never move backwards, whatever the clock does.
                prop_assert!(index >= latest);
                latest = index;
                let used = per_window.entry(index).or_default();
                *used += 1;
                prop_assert!(*used <= rules.limit);
                prop_assert_eq!(remaining, rules.limit - *used);
            }
            count.apply(decision);
        }
    }

    #[test]
    fn waits_and_rejections_end_on_boundaries_by_their_rules(
        rules in rules(),
        readings in proptest::collection::vec(0..3_000u128, 1..200),
    ) {
        let mut count = Count::new();
        let mut sorted = readings;
        sorted.sort_unstable();
        for now in sorted {
            let deadline = rules.deadline(now);
            let decision = rules.decide(&count, now, deadline);
            match decision {
                Decision::Permit { .. } => {}
                Decision::Wait { until } => {
                    prop_assert!(until <= deadline && until > now);
                    prop_assert!(rules.grid.on_boundary(until));
                }
                Decision::Reject { retry_after } => {
                    prop_assert!(now + retry_after > deadline);
                    prop_assert!(rules.grid.on_boundary(now + retry_after));
                }
                Decision::TooMany { limit } => {
                    prop_assert!(false, "one permit refused as more than the limit {}", limit);
                }
            }
            count.apply(decision);
        }
    }

    #[test]
    fn a_waiting_call_on_a_moving_clock_ends_with_a_permit_or_by_its_deadline(
        rules in rules(),
        start in 0..3_000u128,
        taken in 0..10u32,
    ) {
        let mut count = Count::new();
        for _ in 0..taken {
            count.apply(rules.decide(&count, start, start));
        }
        let mut call = Waiting::new(rules.deadline(start));
        let mut now = start;
        loop {
            let decision = rules.decide(&count, now, call.deadline());
            count.apply(decision);
            match call.next(decision, now) {
                Next::Permit { .. } => break,
                Next::Reject { retry_after } => {
                    prop_assert!(retry_after == NEVER || now + retry_after > call.deadline());
                    break;
                }
                Next::Sleep { until } => {
                    prop_assert!(until <= call.deadline() && until <= END_OF_TIME);
                    now = until;
                }
                Next::TooMany { limit } => {
                    prop_assert!(false, "one permit refused as more than the limit {}", limit);
                }
            }
        }
    }

    #[test]
    fn keys_are_independent_limiters(
        rules in rules(),
        attempts in proptest::collection::vec((0..4u8, 0..3_000u128), 1..200),
    ) {
        let mut keyed = Keyed::new(rules);
        let mut alone: BTreeMap<u8, Count> = BTreeMap::new();
        for (key, now) in attempts {
            let count = alone.entry(key).or_default();
            let expected = rules.decide(count, now, now);
            count.apply(expected);
            prop_assert_eq!(keyed.attempt(&key, now, now), expected);
        }
    }
}
