//! Properties over random configurations and random clock steps, checked against a tiny model
//! of the rules that shares no code with the crate (it counts in `u128`, so it cannot
//! overflow where the crate must not).

use core::time::Duration;
use std::collections::BTreeMap;

use fixed_window::{Clock, Instant, ManualClock, RateLimiter};
use proptest::prelude::*;

/// The rules, written as plainly as possible.
struct Model {
    origin: u128,
    period: u128,
    limit: u32,
    window: u128,
    used: u32,
}

impl Model {
    fn new(origin: u64, period: u64, limit: u32) -> Model {
        Model {
            origin: origin.into(),
            period: period.into(),
            limit,
            window: 0,
            used: 0,
        }
    }

    /// `Ok(remaining)` or `Err(retry_after in ns, None if the next window never opens)`.
    fn try_acquire(&mut self, now: u64) -> Result<u32, Option<u128>> {
        let now = u128::from(now);
        if now >= self.origin + (self.window + 1) * self.period {
            self.window = (now - self.origin) / self.period;
            self.used = 0;
        }
        if self.used < self.limit {
            self.used += 1;
            return Ok(self.limit - self.used);
        }
        let next = self.origin + (self.window + 1) * self.period;
        Err((next <= u128::from(u64::MAX)).then(|| next - now))
    }
}

#[derive(Debug, Clone)]
enum Step {
    Forward(u64),
    Back(u64),
    Acquire(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..3_000u64).prop_map(Step::Forward),
        1 => any::<u64>().prop_map(Step::Forward),
        1 => (0..3_000u64).prop_map(Step::Back),
        6 => (1..8u8).prop_map(Step::Acquire),
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_outcome_matches_the_model(
        limit in 1..6u32,
        period in period(),
        start in start(),
        steps in proptest::collection::vec(step(), 1..60),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let limiter = RateLimiter::of("prop", limit, Duration::from_nanos(period))
            .unwrap()
            .with_clock(clock.clone());
        let mut model = Model::new(start, period, limit);
        let mut now = start;
        for step in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d),
                Step::Back(d) => now = now.saturating_sub(d),
                Step::Acquire(n) => {
                    for _ in 0..n {
                        let actual = limiter.try_acquire().map(|permit| permit.remaining()).map_err(|err| {
                            let retry = err.retry_after();
                            (retry != Duration::MAX).then_some(retry.as_nanos())
                        });
                        prop_assert_eq!(actual, model.try_acquire(now), "at {}", now);
                    }
                }
            }
            clock.set(Instant::from_nanos(now));
        }
    }

    #[test]
    fn forward_clocks_grant_the_first_limit_calls_of_every_window_and_no_more(
        limit in 1..6u32,
        period in 1..1_000u64,
        start in start(),
        steps in proptest::collection::vec((0..2_500u64, 0..9u32), 1..60),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let limiter = RateLimiter::of("prop", limit, Duration::from_nanos(period))
            .unwrap()
            .with_clock(clock.clone());
        // Per window index (computed here from origin and period): (calls, permits).
        let mut windows: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
        for (forward, calls) in steps {
            clock.advance(Duration::from_nanos(forward));
            let now = clock.now().as_nanos();
            let window = windows.entry((now - start) / period).or_default();
            for _ in 0..calls {
                window.0 += 1;
                window.1 += u32::from(limiter.try_acquire().is_ok());
            }
        }
        for (index, (calls, permits)) in windows {
            prop_assert_eq!(permits, calls.min(limit), "window {}", index);
        }
    }
}
