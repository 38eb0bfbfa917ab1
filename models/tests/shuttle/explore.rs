//! Running a model under shuttle: seed, iterations and PCT depth from the environment, or the
//! replay of one schedule.

use std::sync::Arc;

use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};

/// How a suite explores; every field has an environment variable (see `models/README.md`).
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Seed of both schedulers: the same seed explores the same schedules.
    pub seed: u64,
    /// Schedules per scheduler.
    pub iterations: usize,
    /// PCT's bug depth: how many priority changes a schedule may have.
    pub pct_depth: usize,
}

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a valid number")),
        Err(_) => default,
    }
}

impl Budget {
    /// The budget for the suites over core: `FIXED_WINDOW_SHUTTLE_SEED`,
    /// `FIXED_WINDOW_SHUTTLE_ITERATIONS` and `FIXED_WINDOW_SHUTTLE_PCT_DEPTH`, defaulting to
    /// 10,000 schedules per scheduler, depth 3.
    pub fn from_env() -> Budget {
        Budget {
            seed: env("FIXED_WINDOW_SHUTTLE_SEED", 0x00f1_0ed0_517d_0e5e),
            iterations: env("FIXED_WINDOW_SHUTTLE_ITERATIONS", 10_000),
            pct_depth: env("FIXED_WINDOW_SHUTTLE_PCT_DEPTH", 3),
        }
    }

    /// A fixed budget for the planted limiters, so whether a checker catches each bug does
    /// not depend on the environment.
    pub fn fixed() -> Budget {
        Budget {
            seed: 7,
            iterations: 2_000,
            pct_depth: 3,
        }
    }
}

/// Runs `test` under the random scheduler, then PCT, for `budget`; or, if
/// `FIXED_WINDOW_SHUTTLE_SCHEDULE` is set, replays that one schedule. Returns the number of
/// schedules run.
pub fn explore(budget: Budget, test: impl Fn() + Send + Sync + 'static) -> usize {
    let test = Arc::new(test);
    let shared = move || {
        let test = Arc::clone(&test);
        move || test()
    };
    if let Ok(schedule) = std::env::var("FIXED_WINDOW_SHUTTLE_SCHEDULE") {
        // As printed, the string is quoted and wrapped over several lines.
        let schedule: String = schedule
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '"')
            .collect();
        shuttle::replay(shared(), &schedule);
        return 1;
    }
    let random = Runner::new(
        RandomScheduler::new_from_seed(budget.seed, budget.iterations),
        Config::default(),
    )
    .run(shared());
    let pct = Runner::new(
        PctScheduler::new_from_seed(budget.seed, budget.pct_depth, budget.iterations),
        Config::default(),
    )
    .run(shared());
    random + pct
}
