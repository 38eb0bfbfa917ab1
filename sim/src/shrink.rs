//! Shrinking: a failing scenario cut down to fewer callers (and so a shorter horizon) that
//! still fails the same way.

use std::cell::Cell;

use crate::oracle::{Invariant, check};
use crate::scenario::ScenarioId;
use crate::simulation::{Target, run};

/// At most this many runs are spent shrinking one scenario.
const MOST_RUNS: usize = 400;

/// Cuts the scenario `id` down to a smaller one on which `target` still breaks `invariant`,
/// and returns its id (which replays it exactly). Returns `id` itself if nothing smaller
/// fails.
///
/// First the shortest prefix of the arrivals that still fails is found, then callers are
/// dropped one at a time while the failure stays.
///
/// # Examples
///
/// A limiter that refuses the last permit of every window, caught on a smaller scenario.
///
/// ```
/// use fixed_window_sim::{PlantedBug, Invariant, Scenario, ScenarioId, Target, check, run, shrink};
///
/// let target = Target::Planted(PlantedBug::FalseRejection);
/// let id = (0..)
///     .map(ScenarioId::seed)
///     .find(|id| {
///         let scenario = Scenario::generate(id);
///         run(&scenario, target).is_ok_and(|trace| {
///             check(&scenario, &trace).iter().any(|v| v.invariant == Invariant::FalseRejection)
///         })
///     })
///     .unwrap();
/// let small = shrink(&id, target, Invariant::FalseRejection);
/// assert!(Scenario::generate(&small).callers.len() <= Scenario::generate(&id).callers.len());
/// ```
pub fn shrink(id: &ScenarioId, target: Target, invariant: Invariant) -> ScenarioId {
    let full = target.scenario(&ScenarioId::seed(id.seed));
    let all: Vec<u32> = match &id.kept {
        Some(kept) => kept.clone(),
        None => (0..u32::try_from(full.callers.len()).unwrap_or(u32::MAX)).collect(),
    };
    let runs = Cell::new(0);
    let fails = |kept: &[u32]| {
        runs.set(runs.get() + 1);
        let candidate = ScenarioId {
            seed: id.seed,
            kept: Some(kept.to_vec()),
        };
        let scenario = target.scenario(&candidate);
        run(&scenario, target).is_ok_and(|trace| {
            check(&scenario, &trace)
                .iter()
                .any(|violation| violation.invariant == invariant)
        })
    };
    // The shortest failing prefix: double until one fails, then bisect below it.
    let mut length = 1;
    while length < all.len() && !fails(&all[..length]) {
        length *= 2;
    }
    let mut kept = if length < all.len() {
        let (mut low, mut high) = (length / 2, length);
        while low + 1 < high {
            let middle = usize::midpoint(low, high);
            if fails(&all[..middle]) {
                high = middle;
            } else {
                low = middle;
            }
        }
        all[..high].to_vec()
    } else {
        all
    };
    // Then drop callers one at a time, latest first.
    let mut i = kept.len();
    while i > 0 && runs.get() < MOST_RUNS {
        i -= 1;
        let mut fewer = kept.clone();
        fewer.remove(i);
        if !fewer.is_empty() && fails(&fewer) {
            kept = fewer;
        }
    }
    let shrunk = ScenarioId {
        seed: id.seed,
        kept: Some(kept),
    };
    let scenario = target.scenario(&shrunk);
    let still_fails = run(&scenario, target).is_ok_and(|trace| {
        check(&scenario, &trace)
            .iter()
            .any(|violation| violation.invariant == invariant)
    });
    if still_fails { shrunk } else { id.clone() }
}
