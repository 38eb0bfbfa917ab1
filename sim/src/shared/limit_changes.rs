//! The changes of the shared limit a scenario makes while its callers run: at drawn virtual
//! times, a drawn process calls `set_limit` (the real client's call, over its connection, so
//! faults reach it) with a drawn limit: lower, higher or the same as the one before, now and
//! then the lowest (1, below most windows' counts), now and then 0 (refused without a write).
//!
//! Drawn from a generator of their own, so every other draw of the seed stays what it was.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::shared::process::ProcessSpec;
use crate::shared::scenario::SharedCaller;

/// The share of scenarios that change the limit.
const CHANGING_SHARE: f64 = 0.3;

/// Scenarios that change the limit do so at most this many times.
const MOST_CHANGES: usize = 4;

/// A `set_limit` a scenario makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct LimitChange {
    /// Virtual time of the call (if its process has no limiter then, as soon as it has one).
    pub at: u64,
    /// The process that calls it.
    pub process: u16,
    /// The limit asked for (0 is refused before anything is sent).
    pub limit: u32,
}

/// The limit changes of the scenario of `seed`, whose `processes` share `limit`, made by the
/// processes not configured apart while `callers` arrive. In order of time.
pub(crate) fn pick_limit_changes(
    seed: u64,
    limit: u32,
    processes: &[ProcessSpec],
    callers: &[SharedCaller],
) -> Vec<LimitChange> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5E7_11A1_7000);
    let eligible: Vec<u16> = (0_u16..)
        .zip(processes)
        .filter(|(_, p)| p.misconfigured.is_none())
        .map(|(index, _)| index)
        .collect();
    if eligible.is_empty() || !rng.random_bool(CHANGING_SHARE) {
        return Vec::new();
    }
    let from = processes.iter().map(|p| p.start).min().unwrap_or(0);
    let until = callers.last().map_or(from, |c| c.arrival).max(from);
    let mut last = limit;
    let mut changes: Vec<LimitChange> = (0..rng.random_range(1..=MOST_CHANGES))
        .map(|_| {
            let process = eligible[rng.random_range(0..eligible.len())];
            let start = processes[process as usize].start;
            let new = match rng.random_range(0..100) {
                // Lower, when there is room below.
                0..35 if last > 1 => rng.random_range(1..last),
                // Higher: up to twice as high (where there is room above).
                0..75 if last < u32::MAX => {
                    rng.random_range(last + 1..=last.saturating_mul(2).max(last + 1))
                }
                0..75 => rng.random_range(1..last),
                75..85 => last,
                85..95 => 1,
                _ => 0,
            };
            if new > 0 {
                last = new;
            }
            LimitChange {
                at: rng.random_range(from.max(start)..=until.max(start)),
                process,
                limit: new,
            }
        })
        .collect();
    changes.sort_by_key(|change| change.at);
    changes
}

#[cfg(test)]
mod tests {
    use crate::scenario::ScenarioId;
    use crate::shared::scenario::SharedScenario;

    #[test]
    fn about_one_scenario_in_three_changes_the_limit_every_way_on_one_node_and_on_a_cluster() {
        let scenarios: Vec<SharedScenario> = (0..1_000)
            .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
            .collect();
        for cluster in [false, true] {
            let drawn: Vec<&SharedScenario> = scenarios
                .iter()
                .filter(|s| s.cluster.is_some() == cluster)
                .collect();
            let changing = drawn.iter().filter(|s| !s.limit_changes.is_empty()).count();
            let share = changing * 1_000 / drawn.len();
            assert!((220..380).contains(&share), "{changing} of {}", drawn.len());
        }
        let mut kinds = [0; 4];
        for scenario in &scenarios {
            assert!(scenario.limit_changes.is_sorted_by_key(|c| c.at));
            let mut last = scenario.limit;
            for change in &scenario.limit_changes {
                assert!(!scenario.is_misconfigured(change.process));
                let kind = match change.limit {
                    0 => 0,
                    l if l < last => 1,
                    l if l > last => 2,
                    _ => 3,
                };
                kinds[kind] += 1;
                if change.limit > 0 {
                    last = change.limit;
                }
            }
        }
        assert!(kinds.iter().all(|&k| k > 10), "{kinds:?}");
    }
}
