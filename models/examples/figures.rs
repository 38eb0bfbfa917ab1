//! Prints the models' figures for the build it is compiled in:
//!
//! - normal build: linearizability check time of 1,000-operation real-thread histories;
//! - `--cfg fixed_window_shuttle`: schedules explored per minute on the eight-caller script;
//! - `--cfg fixed_window_loom`: run time and executions of each loom model at the default bound.
//!
//! `cargo run --release -p fixed-window-models --example figures` (with the cfg in
//! `RUSTFLAGS` and a separate `--target-dir` for the model builds; see `models/README.md`).

use std::time::Instant;

#[cfg(not(any(fixed_window_loom, fixed_window_shuttle)))]
fn main() {
    use fixed_window_models::{Target, linearizability, record_on_wall_clock};

    let mut times = Vec::new();
    for _ in 0..20 {
        let history = record_on_wall_clock(Target::Core, 4, 250);
        let start = Instant::now();
        let verdict = linearizability::check(&history);
        times.push(start.elapsed());
        assert_eq!(verdict, Ok(()), "core's history is not linearizable");
    }
    times.sort();
    println!(
        "linearizability, 1,000 operations on 4 threads: median {:?}, max {:?} (20 histories)",
        times[times.len() / 2],
        times[times.len() - 1]
    );
}

#[cfg(all(fixed_window_shuttle, not(fixed_window_loom)))]
fn main() {
    use fixed_window_models::Target;
    use fixed_window_models::scenario::{Checker, Script, play_and_check};
    use shuttle::scheduler::{PctScheduler, RandomScheduler};
    use shuttle::{Config, Runner};

    let test = || {
        play_and_check(
            Target::Core,
            &Script::stress(8),
            &[Checker::Invariants, Checker::Linearizability],
        );
    };
    let iterations = 20_000;
    let start = Instant::now();
    let random = Runner::new(
        RandomScheduler::new_from_seed(1, iterations),
        Config::default(),
    )
    .run(test);
    let random_rate = per_minute(random, start);
    let start = Instant::now();
    let pct = Runner::new(
        PctScheduler::new_from_seed(1, 3, iterations),
        Config::default(),
    )
    .run(test);
    let pct_rate = per_minute(pct, start);
    println!(
        "shuttle, 8 callers + clock mover, both checkers: random {random_rate:.0} schedules/min, \
         PCT {pct_rate:.0} schedules/min"
    );
}

#[cfg(all(fixed_window_shuttle, not(fixed_window_loom)))]
#[allow(clippy::cast_precision_loss)] // schedule counts are far below 2^52
fn per_minute(schedules: usize, start: Instant) -> f64 {
    schedules as f64 * 60.0 / start.elapsed().as_secs_f64()
}

#[cfg(fixed_window_loom)]
fn main() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use fixed_window::Backoff;
    use fixed_window_models::Target;
    use fixed_window_models::scenario::{Checker, Script, play_and_check};

    let bound = std::env::var("LOOM_MAX_PREEMPTIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(3);
    let models = [
        (
            "claim race, 2 threads",
            Target::Core,
            Script::claim_race(2, 1, 10),
        ),
        (
            "claim race, 3 threads",
            Target::Core,
            Script::claim_race(3, 2, 10),
        ),
        (
            "claim race, wide word",
            Target::Core,
            Script::claim_race(2, 1, 1),
        ),
        (
            "advance races a claim",
            Target::Core,
            Script::advance_race(),
        ),
        (
            "waiter at the boundary",
            Target::Core,
            Script::boundary_waiter(),
        ),
        (
            "spin then yield, 3 threads",
            Target::CoreWithBackoff(Backoff::new(1)),
            Script::claim_race(3, 3, 10),
        ),
    ];
    for (name, target, script) in models {
        let executions = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&executions);
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(bound);
        let start = Instant::now();
        builder.check(move || {
            counter.fetch_add(1, Ordering::Relaxed);
            play_and_check(
                target,
                &script,
                &[Checker::Invariants, Checker::Linearizability],
            );
        });
        println!(
            "loom, bound {bound}, {name}: {} executions in {:?}",
            executions.load(Ordering::Relaxed),
            start.elapsed()
        );
    }
}
