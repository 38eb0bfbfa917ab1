//! The hand-backs a scenario makes: at drawn virtual times, a leasing process hands back the
//! unspent rest of every share it holds (the limiter's `hand_back`: the real client's calls,
//! one per key, over its connection, so faults reach them), mid-traffic or just before a
//! crash drawn for it (as a process would before it stops).
//!
//! Drawn from a generator of their own, so every other draw of the seed stays what it was.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::shared::faults::{Fault, Faults};
use crate::shared::process::ProcessSpec;
use crate::shared::scenario::SharedCaller;

/// The share of scenarios with leasing processes that hand back.
const HANDING_BACK_SHARE: f64 = 0.5;

/// Scenarios that hand back do so at most this many times (besides before crashes).
const MOST_HAND_BACKS: usize = 6;

/// A `hand_back` a scenario makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct HandBack {
    /// Virtual time of the call (nothing happens if its process has no limiter then).
    pub at: u64,
    /// The process that calls it.
    pub process: u16,
}

/// The hand-backs of the scenario of `seed`: by its leasing `processes` while `callers`
/// arrive, and some just before a crash `faults` draws for one of them. In order of time.
pub(crate) fn pick_hand_backs(
    seed: u64,
    processes: &[ProcessSpec],
    callers: &[SharedCaller],
    faults: &Faults,
) -> Vec<HandBack> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0000_4A2D_BAC4);
    let leasing: Vec<u16> = (0_u16..)
        .zip(processes)
        .filter(|(_, p)| p.lease.is_some())
        .map(|(index, _)| index)
        .collect();
    if leasing.is_empty() || !rng.random_bool(HANDING_BACK_SHARE) {
        return Vec::new();
    }
    let from = processes.iter().map(|p| p.start).min().unwrap_or(0);
    let until = callers.last().map_or(from, |c| c.arrival).max(from);
    let mut hand_backs: Vec<HandBack> = (0..rng.random_range(1..=MOST_HAND_BACKS))
        .map(|_| HandBack {
            at: rng.random_range(from..=until),
            process: leasing[rng.random_range(0..leasing.len())],
        })
        .collect();
    // Before a crash of a leasing process, now and then: close enough that its calls may be
    // in flight when it goes.
    for &(at, fault) in &faults.planned {
        if let Fault::Crash { process, .. } = fault
            && leasing.contains(&process)
            && rng.random_bool(0.5)
        {
            let before = processes[process as usize].link.delay_ns * rng.random_range(0..=4);
            hand_backs.push(HandBack {
                at: at.saturating_sub(before),
                process,
            });
        }
    }
    hand_backs.sort_by_key(|hand_back| hand_back.at);
    hand_backs
}

#[cfg(test)]
mod tests {
    use crate::scenario::ScenarioId;
    use crate::shared::scenario::SharedScenario;

    #[test]
    fn leasing_processes_hand_back_in_about_half_the_scenarios_that_lease() {
        let scenarios: Vec<SharedScenario> = (0..1_000)
            .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
            .collect();
        let leasing: Vec<&SharedScenario> = scenarios
            .iter()
            .filter(|s| s.processes.iter().any(|p| p.lease.is_some()))
            .collect();
        let handing = leasing.iter().filter(|s| !s.hand_backs.is_empty()).count();
        let share = handing * 1_000 / leasing.len();
        assert!(
            (400..600).contains(&share),
            "{handing} of {}",
            leasing.len()
        );
        for scenario in &scenarios {
            assert!(scenario.hand_backs.is_sorted_by_key(|h| h.at));
            for hand_back in &scenario.hand_backs {
                assert!(
                    scenario.processes[hand_back.process as usize]
                        .lease
                        .is_some()
                );
            }
        }
        assert!(
            scenarios
                .iter()
                .any(|s| s.cluster.is_some() && !s.hand_backs.is_empty())
        );
    }
}
