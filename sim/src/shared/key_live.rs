//! The live changes of one key's limit a scenario makes while its callers run: at drawn
//! virtual times, a drawn process calls `set_key_limit` (a drawn limit for one of the keys
//! callers use most) or `clear_key_limit` (back to the configuration's limit), as the real
//! limiter does, over its connection, so faults reach it. In such a scenario every process
//! reads the live limits with the configuration (`Protocol::limits_call`): when it registers,
//! in its background read, and when a reply tells it of a newer version.
//!
//! Drawn from a generator of their own, so every other draw of the seed stays what it was;
//! on one node and on a cluster, and only in scenarios the oracle's model of one stored
//! version with one set of live limits per version follows: no loss of the live limits (a restart or failover of the one
//! server, or on a cluster a failover to a replica lacking writes of a primary that owns the
//! configuration's slot at some time: each loses the live limits, which the processes keep).
//! Changes of the limiter's limit (`set_limit`) and peeks may come with them (both kinds of
//! change bump the one version, and a live change keeps the limiter's limit stored), and so
//! may leases (whose share the script computes from the key's limit in force), hand-backs and
//! local shares (`FailPolicy::Local`: each process's share follows the live limit it has
//! adopted, the oracle judging it by the version the process held when it decided).
//!
//! A process configured apart for one key (`KeyLimits::apart`, another limit for it than the
//! others give it) may be among them: the key's live limit overrides every process's
//! configured one, so the disagreement ends at the version a change stored, and comes back
//! after a `clear_key_limit`, the key's window then counted by whichever process writes it
//! first. So may a process configured apart for the limiter (another limit or period), which
//! is answered a conflict and counts nothing; it never makes a change (the first process
//! configured alike makes the one drawn for it).

use core::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use fixed_window_redis::Config;

use crate::shared::cluster::key_slot;
use crate::shared::faults::Fault;
use crate::shared::scenario::{SHARED_NAME, SharedScenario};

/// The share of the eligible scenarios that change keys' limits live.
const LIVE_SHARE: f64 = 0.6;

/// Scenarios that change keys' limits live do so at most this many times.
const MOST_CHANGES: usize = 5;

/// A `set_key_limit` or `clear_key_limit` a scenario makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct KeyLimitChange {
    /// Virtual time of the call (if its process has no limiter then, as soon as it has one).
    pub at: u64,
    /// The process that calls it.
    pub process: u16,
    /// The key (an index into the scenario's keys).
    pub key: u16,
    /// The limit set live, or `None` for a `clear_key_limit`.
    pub limit: Option<u32>,
}

impl SharedScenario {
    /// If change `change` is a live change of a key's limit, its index among those
    /// ([`key_live`](SharedScenario::key_live)): a run numbers its changes (their events,
    /// requests and round trips) the limiter's limit's first, then these.
    pub(crate) fn live_change(&self, change: u32) -> Option<u32> {
        change.checked_sub(self.first_live_change())
    }

    /// The number of the first live change of a key's limit among all the changes.
    pub(crate) fn first_live_change(&self) -> u32 {
        u32::try_from(self.limit_changes.len()).unwrap_or(u32::MAX)
    }

    /// Whether the oracle's model follows live changes of keys' limits in this scenario (see
    /// the module's text).
    fn follows_live_changes(&self) -> bool {
        let lost = self.faults.planned.iter().any(|(_, fault)| {
            matches!(
                fault,
                Fault::Restart { .. } | Fault::Failover { .. } | Fault::RestartWithoutUser { .. }
            )
        });
        // On a cluster the live limits share the configuration's slot (its hash tag).
        let config_slot = Config::of(
            SHARED_NAME,
            self.limit,
            Duration::from_micros(self.period_us),
        )
        .map_or(0, |config| key_slot(config.config_key()));
        let lost_on_cluster = self
            .cluster
            .as_ref()
            .is_some_and(|cluster| cluster.may_lose_writes_of(config_slot));
        !lost_on_cluster && !lost
    }
}

/// The live changes of keys' limits of `scenario`, drawn over the virtual times `until`
/// (the last arrival of its callers before any cut, so a shrink keeps them). In order of time.
pub(crate) fn pick_key_live(scenario: &SharedScenario, until: u64) -> Vec<KeyLimitChange> {
    let mut rng = ChaCha8Rng::seed_from_u64(scenario.id.seed ^ 0x0_11FE_C1A1_7000);
    if scenario.keys.is_empty()
        || scenario.processes.is_empty()
        || !scenario.follows_live_changes()
        || !rng.random_bool(LIVE_SHARE)
    {
        return Vec::new();
    }
    let eligible: Vec<usize> = (0..scenario.processes.len())
        .filter(|&p| scenario.processes[p].misconfigured.is_none())
        .collect();
    if eligible.is_empty() {
        return Vec::new();
    }
    let limit = scenario.limit;
    let from = scenario
        .processes
        .iter()
        .map(|p| p.start)
        .min()
        .unwrap_or(0);
    let until = until.max(from);
    // Among the first keys: the hot ones, where traffic meets.
    let first = scenario.keys.len().min(3);
    let mut changes: Vec<KeyLimitChange> = (0..rng.random_range(1..=MOST_CHANGES))
        .map(|_| {
            let drawn = rng.random_range(0..scenario.processes.len());
            // A process configured apart for the limiter is refused the change (a conflict);
            // the first one configured alike makes it instead.
            let process = if scenario.processes[drawn].misconfigured.is_none() {
                drawn
            } else {
                eligible.first().copied().unwrap_or(drawn)
            };
            let start = scenario.processes[process].start;
            let key = rng.random_range(0..first);
            let new = match rng.random_range(0..100) {
                0..30 if limit > 1 => Some(rng.random_range(1..limit)),
                0..60 => {
                    Some(rng.random_range(limit.saturating_add(1)..=limit.saturating_mul(3).max(2)))
                }
                60..70 => Some(1),
                _ => None,
            };
            KeyLimitChange {
                at: rng.random_range(from.max(start)..=until.max(start)),
                process: u16::try_from(process).unwrap_or(0),
                key: u16::try_from(key).unwrap_or(0),
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
    use crate::shared::peeks::Peeks;
    use crate::shared::scenario::SharedScenario;

    #[test]
    fn some_scenarios_change_keys_limits_live_set_and_cleared_on_one_node_and_clusters() {
        let scenarios: Vec<SharedScenario> = (0..2_000)
            .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
            .collect();
        let live: Vec<&SharedScenario> = scenarios
            .iter()
            .filter(|s| !s.key_live.is_empty())
            .collect();
        assert!(live.len() > 30, "{}", live.len());
        let clustered = live.iter().filter(|s| s.cluster.is_some()).count();
        assert!(clustered > 10 && live.len() - clustered > 10, "{clustered}");
        // Beside changes of the limiter's limit, and peeks.
        let with_set_limit = live.iter().filter(|s| !s.limit_changes.is_empty()).count();
        let with_peeks = live.iter().filter(|s| Peeks::draw(s.id.seed).any()).count();
        assert!(
            with_set_limit > 5 && with_peeks > 5,
            "{with_set_limit} {with_peeks}"
        );
        let (mut set, mut cleared) = (0, 0);
        for scenario in live {
            assert!(scenario.follows_live_changes());
            assert!(scenario.key_live.is_sorted_by_key(|c| c.at));
            for change in &scenario.key_live {
                assert!((change.process as usize) < scenario.processes.len());
                assert!((change.key as usize) < scenario.keys.len().min(3));
                match change.limit {
                    Some(limit) => {
                        assert!(limit > 0);
                        set += 1;
                    }
                    None => cleared += 1,
                }
            }
        }
        assert!(set > 30 && cleared > 10, "{set} {cleared}");
        // Beside a process configured apart for one of the keys changed.
        let apart = scenarios
            .iter()
            .filter(|s| {
                s.key_limits
                    .apart
                    .is_some_and(|(_, key, _)| s.key_live.iter().any(|c| c.key == key))
            })
            .count();
        assert!(apart > 5, "{apart}");
        // And beside a process configured apart for the limiter, which never makes one.
        let misconfigured = scenarios
            .iter()
            .filter(|s| !s.key_live.is_empty())
            .filter(|s| s.processes.iter().any(|p| p.misconfigured.is_some()))
            .inspect(|s| {
                for change in &s.key_live {
                    let process = &s.processes[change.process as usize];
                    assert!(process.misconfigured.is_none());
                }
            })
            .count();
        assert!(misconfigured > 5, "{misconfigured}");
    }
}
