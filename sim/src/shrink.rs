//! Shrinking: a failing scenario cut down to fewer callers (and so a shorter horizon), and then
//! to single permits, its origin at creation, a steady clock and a lower limit ([`Cuts`]),
//! while it still fails the same way.

use std::cell::Cell;

use crate::oracle::{Invariant, check};
use crate::scenario::{Cuts, ScenarioId};
use crate::simulation::{Target, run};

/// At most this many runs are spent shrinking one scenario.
const MOST_RUNS: usize = 400;

/// Cuts the scenario `id` down to a smaller one on which `target` still breaks `invariant`,
/// and returns its id (which replays it exactly). Returns `id` itself if nothing smaller
/// fails.
///
/// First the shortest prefix of the arrivals that still fails is found, then callers are
/// dropped one at a time while the failure stays; then each of the [`Cuts`] is kept if the
/// failure stays (one permit per call, the origin at creation, a steady clock, the lowest
/// limit found), and callers are dropped again.
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
    let fails = |kept: &[u32], cuts: Cuts| {
        runs.set(runs.get() + 1);
        let candidate = ScenarioId {
            seed: id.seed,
            kept: Some(kept.to_vec()),
            cuts,
        };
        let scenario = target.scenario(&candidate);
        run(&scenario, target).is_ok_and(|trace| {
            check(&scenario, &trace)
                .iter()
                .any(|violation| violation.invariant == invariant)
        })
    };
    let mut cuts = id.cuts;
    // The shortest failing prefix: double until one fails, then bisect below it.
    let mut length = 1;
    while length < all.len() && !fails(&all[..length], cuts) {
        length *= 2;
    }
    let mut kept = if length < all.len() {
        let (mut low, mut high) = (length / 2, length);
        while low + 1 < high {
            let middle = usize::midpoint(low, high);
            if fails(&all[..middle], cuts) {
                high = middle;
            } else {
                low = middle;
            }
        }
        all[..high].to_vec()
    } else {
        all
    };
    drop_callers(&mut kept, cuts, &fails, &runs);
    // Then the rest of the scenario, each cut kept if the failure stays: one permit per call,
    // the origin at creation, a steady clock, the smallest limit.
    let simpler: [fn(&mut Cuts); 4] = [
        |cuts| cuts.single_permits = true,
        |cuts| cuts.creation_origin = true,
        |cuts| cuts.steady_clock = true,
        |cuts| cuts.fixed_limit = true,
    ];
    for simplify in simpler {
        let mut candidate = cuts;
        simplify(&mut candidate);
        if candidate != cuts && runs.get() < MOST_RUNS && fails(&kept, candidate) {
            cuts = candidate;
        }
    }
    let limit = target
        .scenario(&ScenarioId {
            seed: id.seed,
            kept: Some(kept.clone()),
            cuts,
        })
        .config
        .limit;
    if let Some(lower) = lowest_failing_limit(limit, |limit| {
        runs.get() < MOST_RUNS
            && fails(
                &kept,
                Cuts {
                    limit: Some(limit),
                    ..cuts
                },
            )
    }) {
        cuts.limit = Some(lower);
    }
    // A simpler scenario may need fewer callers.
    drop_callers(&mut kept, cuts, &fails, &runs);
    if fails(&kept, cuts) {
        ScenarioId {
            seed: id.seed,
            kept: Some(kept),
            cuts,
        }
    } else {
        id.clone()
    }
}

/// Drops callers one at a time, latest first, while the failure stays.
fn drop_callers(
    kept: &mut Vec<u32>,
    cuts: Cuts,
    fails: &impl Fn(&[u32], Cuts) -> bool,
    runs: &Cell<usize>,
) {
    let mut i = kept.len();
    while i > 0 && runs.get() < MOST_RUNS {
        i -= 1;
        let mut fewer = kept.clone();
        fewer.remove(i);
        if !fewer.is_empty() && fails(&fewer, cuts) {
            *kept = fewer;
        }
    }
}

/// The lowest limit below `limit` that `fails`: 1, 2 and 3 first, then by halving from the
/// top; `None` if none does.
fn lowest_failing_limit(limit: u32, fails: impl Fn(u32) -> bool) -> Option<u32> {
    if let Some(small) = (1..limit.min(4)).find(|&small| fails(small)) {
        return Some(small);
    }
    let mut lowest = None;
    let mut candidate = limit / 2;
    while candidate >= 4 && fails(candidate) {
        lowest = Some(candidate);
        candidate /= 2;
    }
    lowest
}
