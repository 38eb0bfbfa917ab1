//! Properties over random configurations and random clock steps, checked against the rules as
//! `fixed-window-spec` models them: exact in `u128`, sharing no code with the crate, so it
//! cannot overflow where the crate must not, nor repeat the crate's bugs.

use core::num::NonZeroU128;
use core::time::Duration;
use std::collections::BTreeMap;

use fixed_window::{
    Clock, ConfigError, Instant, ManualClock, Origin, RateLimiter, WeightedRejection,
};
use fixed_window_spec::{Count, Decision, Grid, NEVER, Rules};
use proptest::prelude::*;

/// A `try_acquire` as the spec decides it.
struct Model {
    rules: Rules,
    count: Count,
}

impl Model {
    fn new(origin: u64, period: u64, limit: u32) -> Option<Model> {
        let rules = Rules::new(origin.into(), limit, period.into(), 0)?;
        Some(Model {
            rules,
            count: Count::new(),
        })
    }

    /// The model of a limiter built at `start` on the grid with a boundary at `boundary`.
    fn through(boundary: u64, start: u64, period: u64, limit: u32) -> Option<Model> {
        let period = NonZeroU128::new(period.into())?;
        let grid = Grid::through(boundary.into(), false, period, start.into());
        Some(Model {
            rules: Rules {
                grid,
                limit,
                max_wait: 0,
            },
            count: Count::new(),
        })
    }

    /// `Ok(remaining)` or `Err(retry_after in ns, None if the next window never opens)`.
    fn try_acquire(&mut self, now: u64) -> Result<u32, Option<u128>> {
        let now = u128::from(now);
        // `try_acquire` never waits: its deadline is its reading.
        let decision = self.rules.decide(&self.count, now, now);
        self.count.apply(decision);
        match decision {
            Decision::Permit { remaining, .. } => Ok(remaining),
            Decision::Reject { retry_after } => Err((retry_after != NEVER).then_some(retry_after)),
            Decision::Wait { until } => Err(Some(until - now)),
            Decision::TooMany { limit } => {
                unreachable!("one permit is more than the limit {limit}")
            }
        }
    }
}

impl Model {
    /// A `drain()`: the time until the window holding `now` ends.
    fn drain(&mut self, now: u64) -> Duration {
        let now = u128::from(now);
        self.count.drain(&self.rules.grid, self.rules.limit, now);
        let grid = self.rules.grid;
        grid.end(grid.index_of(now)).map_or(Duration::MAX, |end| {
            Duration::from_nanos(u64::try_from(end - now).unwrap_or(u64::MAX))
        })
    }

    /// A `set_limit(limit)` the limiter took: the rules change, the count stays.
    fn set_limit(&mut self, limit: u32) -> Result<(), ConfigError> {
        self.rules = self.rules.with_limit(limit).ok_or(ConfigError::ZeroLimit)?;
        Ok(())
    }

    /// A `try_acquire_n(n)`: `Err(None)` also for `n` above the limit, which is refused.
    fn try_acquire_n(&mut self, now: u64, n: u32) -> Result<u32, Option<u128>> {
        let now = u128::from(now);
        let decision = self.rules.decide_n(&self.count, now, now, n);
        self.count.apply_n(decision, n);
        match decision {
            Decision::Permit { remaining, .. } => Ok(remaining),
            Decision::Reject { retry_after } => Err((retry_after != NEVER).then_some(retry_after)),
            Decision::Wait { until } => Err(Some(until - now)),
            Decision::TooMany { .. } => Err(None),
        }
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

/// Takes `steps` on `limiter` and `model` from clock reading `start`: every `try_acquire` must
/// have the model's outcome.
fn follow(
    limiter: &RateLimiter<ManualClock>,
    clock: &ManualClock,
    model: &mut Model,
    start: u64,
    steps: Vec<Step>,
) -> Result<(), TestCaseError> {
    let mut now = start;
    for step in steps {
        match step {
            Step::Forward(d) => now = now.saturating_add(d),
            Step::Back(d) => now = now.saturating_sub(d),
            Step::Acquire(n) => {
                for _ in 0..n {
                    let actual = limiter
                        .try_acquire()
                        .map(|permit| permit.remaining())
                        .map_err(|err| {
                            let retry = err.retry_after();
                            (retry != Duration::MAX).then_some(retry.as_nanos())
                        });
                    prop_assert_eq!(actual, model.try_acquire(now), "at {}", now);
                }
            }
        }
        clock.set(Instant::from_nanos(now));
    }
    Ok(())
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
        let mut model = Model::new(start, period, limit).unwrap();
        follow(&limiter, &clock, &mut model, start, steps)?;
    }

    #[test]
    fn weighted_outcomes_and_drains_match_the_model(
        limit in 1..12u32,
        period in period(),
        start in start(),
        steps in proptest::collection::vec((step(), 0..14u32), 1..60),
    ) {
        // A weight of 13 stands for a drain: the rest of the window, whatever is left.
        const DRAIN: u32 = 13;
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let limiter = RateLimiter::of("prop", limit, Duration::from_nanos(period))
            .unwrap()
            .with_clock(clock.clone());
        let mut model = Model::new(start, period, limit).unwrap();
        let mut now = start;
        for (step, n) in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d),
                Step::Back(d) => now = now.saturating_sub(d),
                Step::Acquire(_) if n == DRAIN => {
                    prop_assert_eq!(limiter.drain(), model.drain(now), "drain at {}", now);
                }
                Step::Acquire(calls) => {
                    for _ in 0..calls {
                        let actual = limiter.try_acquire_n(n).map(|permit| permit.remaining()).map_err(|err| match err {
                            WeightedRejection::TooMany { .. } => None,
                            WeightedRejection::Full(rejection) => {
                                let retry = rejection.retry_after();
                                (retry != Duration::MAX).then_some(retry.as_nanos())
                            }
                        });
                        prop_assert_eq!(actual, model.try_acquire_n(now, n), "{} at {}", n, now);
                    }
                }
            }
            clock.set(Instant::from_nanos(now));
        }
    }

    #[test]
    fn set_limit_between_weighted_calls_drains_and_clock_moves_matches_the_model(
        limit in 1..12u32,
        period in period(),
        start in start(),
        steps in proptest::collection::vec((step(), 0..16u32), 1..80),
    ) {
        // A weight of 13 stands for a drain, 14 and 15 for a `set_limit` (to 0..14, so zero
        // and limits beyond the smallest ceilings are drawn too).
        const DRAIN: u32 = 13;
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let limiter = RateLimiter::of("prop", limit, Duration::from_nanos(period))
            .unwrap()
            .with_clock(clock.clone());
        let mut model = Model::new(start, period, limit).unwrap();
        let mut now = start;
        for (step, n) in steps {
            match step {
                Step::Forward(d) => now = now.saturating_add(d),
                Step::Back(d) => now = now.saturating_sub(d),
                Step::Acquire(_) if n == DRAIN => {
                    prop_assert_eq!(limiter.drain(), model.drain(now), "drain at {}", now);
                }
                Step::Acquire(calls) if n > DRAIN => {
                    let new_limit = u32::from(calls) * (n - DRAIN) - 1;
                    let ceiling = limiter.limit_ceiling();
                    let expected = if new_limit > ceiling {
                        Err(ConfigError::LimitAboveCeiling { limit: new_limit, ceiling })
                    } else {
                        model.set_limit(new_limit)
                    };
                    prop_assert_eq!(limiter.set_limit(new_limit), expected, "set_limit({}) at {}", new_limit, now);
                    prop_assert_eq!(limiter.limit(), model.rules.limit);
                }
                Step::Acquire(calls) => {
                    for _ in 0..calls {
                        let outcome = limiter.try_acquire_n(n);
                        if let Err(rejection) = outcome {
                            let limit = rejection.limit();
                            // Errors name the limit the decision used: the one in force.
                            prop_assert_eq!(limit, model.rules.limit);
                        }
                        let actual = outcome.map(|permit| permit.remaining()).map_err(|err| match err {
                            WeightedRejection::TooMany { .. } => None,
                            WeightedRejection::Full(rejection) => {
                                let retry = rejection.retry_after();
                                (retry != Duration::MAX).then_some(retry.as_nanos())
                            }
                        });
                        prop_assert_eq!(actual, model.try_acquire_n(now, n), "{} at {}", n, now);
                    }
                }
            }
            clock.set(Instant::from_nanos(now));
        }
    }

    #[test]
    fn a_chosen_origin_matches_the_model_on_its_grid(
        limit in 1..6u32,
        period in period(),
        origin in start(),
        start in start(),
        steps in proptest::collection::vec(step(), 1..60),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let limiter = RateLimiter::builder("prop", limit, Duration::from_nanos(period))
            .unwrap()
            .clock(clock.clone())
            .origin(Origin::At(Instant::from_nanos(origin)))
            .build();
        let mut model = Model::through(origin, start, period, limit).unwrap();
        follow(&limiter, &clock, &mut model, start, steps)?;
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
        // Per window index (from the spec's grid): (calls, permits).
        let grid = Grid::checked(start.into(), period.into()).unwrap();
        let mut windows: BTreeMap<u128, (u32, u32)> = BTreeMap::new();
        for (forward, calls) in steps {
            clock.advance(Duration::from_nanos(forward));
            let window = windows.entry(grid.index_of(clock.now().as_nanos().into())).or_default();
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
