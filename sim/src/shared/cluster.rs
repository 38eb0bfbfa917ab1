//! A simulated Redis Cluster: Redis's key-slot rule (CRC16 of the key, or of its `{hash tag}`,
//! modulo 16,384), a cluster's shape (two or three primaries, each owning a share of the
//! slots) and its faults (a slot range migrating to another primary, a primary failing over
//! to a replica that lacks its latest writes), drawn for one shared scenario in four.
//!
//! The nodes themselves, each a simulated server with its own keyspace and script cache, and
//! their answers (`MOVED`, `ASK`, `TRYAGAIN`, `CROSSSLOT`) are in [`nodes`].
//!
//! ```
//! use fixed_window_sim::shared::key_slot;
//!
//! assert_eq!(key_slot("foo"), 12_182);
//! assert_eq!(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
//! ```

use fixed_window_redis::Config;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::shared::faults::{Fault, Faults};
use crate::shared::process::ProcessSpec;

pub(crate) mod nodes;

/// The slots of a Redis Cluster.
pub const SLOTS: u16 = 16_384;

/// The share of shared scenarios that run on a cluster.
const CLUSTER_SHARE: f64 = 0.25;

/// The share of cluster scenarios in which primaries stall.
const STALL_SHARE: f64 = 0.4;

/// CRC16-XMODEM (CCITT polynomial `0x1021`, initial value 0, no reflection): the checksum
/// Redis Cluster hashes keys with.
///
/// ```
/// use fixed_window_sim::shared::crc16;
///
/// assert_eq!(crc16(b"123456789"), 0x31C3);
/// ```
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 == 0 {
                crc << 1
            } else {
                (crc << 1) ^ 0x1021
            };
        }
    }
    crc
}

/// The hash slot of `key`, by Redis Cluster's rule: if the key holds a `{` followed later by
/// a `}` with at least one byte between them, only the bytes between the first `{` and the
/// first `}` after it are hashed (the hash tag); otherwise the whole key.
///
/// ```
/// use fixed_window_sim::shared::key_slot;
///
/// assert_eq!(key_slot("123456789"), 12_739);
/// assert_eq!(key_slot("fixed-window:api:{client-7}"), key_slot("client-7"));
/// assert_eq!(key_slot("a{}b"), key_slot("a{}b")); // an empty tag: the whole key
/// ```
pub fn key_slot(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tag = bytes.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &bytes[open + 1..];
        let close = rest.iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &rest[..close])
    });
    crc16(tag.unwrap_or(bytes)) % SLOTS
}

/// The primary that owns `slot` when a cluster of `nodes` primaries starts: equal ranges, in
/// order, as `redis-cli --cluster create` assigns them.
pub fn initial_owner(slot: u16, nodes: u8) -> u8 {
    let owner = u32::from(slot) * u32::from(nodes.max(1)) / u32::from(SLOTS);
    u8::try_from(owner).unwrap_or(0)
}

/// A fault of one primary of a cluster, or of its slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClusterFault {
    /// Slots `first..=last` (all owned by one primary then) move to primary `to` in phases,
    /// as `redis-cli --cluster reshard` moves them: the slots are marked `MIGRATING` on their
    /// owner and `IMPORTING` on `to` (`CLUSTER SETSLOT … MIGRATING/IMPORTING`); every
    /// `step_ns` after that, `per_move` of their keys move (`MIGRATE`, each key at once, with
    /// its value and expiry), `moves` times, the last time all that are left, and then the
    /// slots' owner changes (`CLUSTER SETSLOT … NODE`): a client that sends to the old owner
    /// afterwards gets `MOVED`. Meanwhile the old owner answers `ASK` for a call whose keys
    /// it no longer holds, and `TRYAGAIN` for one whose keys it holds only some of.
    Migrate {
        /// The first slot.
        first: u16,
        /// The last slot.
        last: u16,
        /// The primary that takes them.
        to: u8,
        /// The `MIGRATE` steps, the owner changing at the last (at least 1).
        moves: u8,
        /// Keys moved at each step but the last (at least 1).
        per_move: u8,
        /// Time between the marks and the first step, and between steps.
        step_ns: u64,
    },
    /// Primary `node` fails: for `down_ns` connections to it are refused, then its replica,
    /// lacking the primary's last `lag` writes (and its scripts unless `keeps_scripts`),
    /// takes over its slots.
    Failover {
        /// The primary.
        node: u8,
        /// Writes its replica lacks (at most 16).
        lag: u8,
        /// Whether the replica has the scripts.
        keeps_scripts: bool,
        /// How long the slots have no primary.
        down_ns: u64,
    },
    /// Primary `node` stalls for `stall_ns`, as a process stopped with `SIGSTOP`: it reads
    /// nothing meanwhile, then runs what reached it in order. Its calls wait (their attempts
    /// may time out); the other primaries serve as before.
    Stall {
        /// The primary.
        node: u8,
        /// How long it reads nothing.
        stall_ns: u64,
    },
}

/// A cluster a scenario runs on: its primaries and the faults of its slots and primaries, by
/// virtual time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClusterSpec {
    /// Primaries: 2 or 3.
    pub nodes: u8,
    /// The faults, by virtual time.
    pub faults: Vec<(u64, ClusterFault)>,
}

impl ClusterSpec {
    /// Whether a failover may forget writes of `slot`: one to a replica lacking writes
    /// (`lag` above 0) of a primary that owns the slot at some time of the run (its first
    /// owner, or one a migration of the slot moves it to).
    pub(crate) fn may_lose_writes_of(&self, slot: u16) -> bool {
        let mut owners = vec![initial_owner(slot, self.nodes)];
        for (_, fault) in &self.faults {
            if let ClusterFault::Migrate {
                first, last, to, ..
            } = *fault
                && (first..=last).contains(&slot)
            {
                owners.push(to);
            }
        }
        self.faults.iter().any(|(_, fault)| {
            matches!(*fault, ClusterFault::Failover { node, lag, .. } if lag > 0 && owners.contains(&node))
        })
    }
}

/// What a cluster scenario needs of the rest of its scenario.
pub(crate) struct Drawn<'a> {
    pub(crate) seed: u64,
    pub(crate) config: Option<Config>,
    pub(crate) keys: &'a [String],
    pub(crate) processes: &'a [ProcessSpec],
    pub(crate) span: u64,
}

/// `spec` with primaries stalling, in [`STALL_SHARE`] of the cluster scenarios, from a
/// generator of their own, so that the scenario's other draws stay as they were: one or two
/// stalls of one primary each, from a hundredth of `timeout` to three, anywhere in the run;
/// its faults in order of time.
fn with_stalls(mut spec: ClusterSpec, drawn: &Drawn<'_>, timeout: u64) -> ClusterSpec {
    let mut rng = ChaCha8Rng::seed_from_u64(drawn.seed ^ 0x57A1_1ED0_0DE5);
    if rng.random_bool(STALL_SHARE) {
        for _ in 0..rng.random_range(1..=2) {
            let t = rng.random_range(0..=drawn.span);
            let node = rng.random_range(0..spec.nodes);
            let stall_ns = rng.random_range(timeout / 100..=timeout.saturating_mul(3));
            spec.faults
                .push((t, ClusterFault::Stall { node, stall_ns }));
        }
    }
    spec.faults.sort_by_key(|&(t, _)| t);
    spec
}

/// Draws whether a scenario runs on a cluster (one in four), from a generator of its own, and
/// if so its shape and faults. A failover the scenario's faults planned becomes the failover
/// of one primary (which one drawn), and is taken out of `faults`.
pub(crate) fn pick_cluster(drawn: &Drawn<'_>, faults: &mut Faults) -> Option<ClusterSpec> {
    let mut rng = ChaCha8Rng::seed_from_u64(drawn.seed ^ 0xC105_7E25_1075);
    if !rng.random_bool(CLUSTER_SHARE) {
        return None;
    }
    let nodes = rng.random_range(2..=3_u8);
    let timeout = drawn
        .processes
        .iter()
        .map(|p| u64::try_from(p.timeout.as_nanos()).unwrap_or(u64::MAX))
        .max()
        .unwrap_or(1_000_000);
    let mut spec = ClusterSpec {
        nodes,
        faults: Vec::new(),
    };
    // The planned failovers, each of one primary now.
    let planned = std::mem::take(&mut faults.planned);
    for (t, fault) in planned {
        match fault {
            Fault::Failover { lag, keeps_scripts } => {
                let node = rng.random_range(0..nodes);
                let down_ns = rng.random_range(0..=timeout.saturating_mul(2));
                spec.faults.push((
                    t,
                    ClusterFault::Failover {
                        node,
                        lag,
                        keeps_scripts,
                        down_ns,
                    },
                ));
            }
            other => faults.planned.push((t, other)),
        }
    }
    // Slots migrating, in half the cluster scenarios: each time the slots around a key the
    // callers use (or the configuration key), early in the run or anywhere in it.
    let names: Vec<String> = match &drawn.config {
        Some(config) => drawn
            .keys
            .iter()
            .map(|key| config.cluster_counter_key(key))
            .chain(core::iter::once(config.config_key().to_owned()))
            .collect(),
        None => Vec::new(),
    };
    if !names.is_empty() && rng.random_bool(0.5) {
        let mut owners: Vec<u8> = (0..SLOTS).map(|s| initial_owner(s, nodes)).collect();
        let mut times: Vec<u64> = (0..rng.random_range(1..=3))
            .map(|_| {
                if rng.random_bool(0.5) {
                    rng.random_range(0..=drawn.span / 8)
                } else {
                    rng.random_range(0..=drawn.span)
                }
            })
            .collect();
        times.sort_unstable();
        for t in times {
            let slot = key_slot(&names[rng.random_range(0..names.len())]);
            let from = owners[usize::from(slot)];
            let reach = rng.random_range(0..=256_u16);
            let mut first = slot;
            while first > 0 && slot - first < reach && owners[usize::from(first - 1)] == from {
                first -= 1;
            }
            let mut last = slot;
            while last + 1 < SLOTS && last - slot < reach && owners[usize::from(last + 1)] == from {
                last += 1;
            }
            let to = (from + rng.random_range(1..nodes)) % nodes;
            for owner in &mut owners[usize::from(first)..=usize::from(last)] {
                *owner = to;
            }
            spec.faults.push((
                t,
                ClusterFault::Migrate {
                    first,
                    last,
                    to,
                    moves: 1,
                    per_move: 1,
                    step_ns: 0,
                },
            ));
        }
        // The phases of each migration, from a generator of their own, so that the draws above
        // stay as they were: up to four steps, each up to two timeouts apart.
        let mut phases = ChaCha8Rng::seed_from_u64(drawn.seed ^ 0xA5C1_4600_5E75);
        for (_, fault) in &mut spec.faults {
            if let ClusterFault::Migrate {
                moves,
                per_move,
                step_ns,
                ..
            } = fault
            {
                *moves = phases.random_range(1..=4);
                *per_move = phases.random_range(1..=3);
                *step_ns = phases.random_range(timeout / 4..=timeout.saturating_mul(2));
            }
        }
    }
    Some(with_stalls(spec, drawn, timeout))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioId;
    use crate::shared::scenario::SharedScenario;

    #[test]
    fn crc16_and_key_slots_match_redis() {
        // CRC16-XMODEM's check value, and `CLUSTER KEYSLOT` answers.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot("123456789"), 12_739);
        assert_eq!(key_slot("foo"), 12_182);
        assert_eq!(key_slot("somekey"), 11_058);
        assert_eq!(key_slot("foo{hash_tag}"), 2_515);
        assert_eq!(key_slot("bar{hash_tag}"), 2_515);
        assert_eq!(
            key_slot("{user1000}.following"),
            key_slot("{user1000}.followers")
        );
        // Only the first tag counts; an empty one hashes the whole key.
        assert_eq!(key_slot("foo{bar}{zap}"), key_slot("bar"));
        assert_eq!(key_slot("foo{}{bar}"), crc16(b"foo{}{bar}") % SLOTS);
        assert_eq!(key_slot("foo{{bar}}zap"), key_slot("{bar"));
        assert_eq!(key_slot(""), 0);
    }

    #[test]
    fn the_initial_slots_are_split_evenly_and_in_order() {
        for nodes in 2..=3 {
            let owners: Vec<u8> = (0..SLOTS).map(|s| initial_owner(s, nodes)).collect();
            assert!(owners.is_sorted());
            assert_eq!(owners[0], 0);
            assert_eq!(owners[usize::from(SLOTS - 1)], nodes - 1);
            for node in 0..nodes {
                let share: usize = owners.iter().map(|&o| usize::from(o == node)).sum();
                assert!(share.abs_diff(usize::from(SLOTS) / usize::from(nodes)) <= 1);
            }
        }
    }

    #[test]
    fn one_scenario_in_four_runs_on_a_cluster_with_its_faults() {
        let scenarios: Vec<SharedScenario> = (0..800)
            .map(|seed| SharedScenario::generate(&ScenarioId::seed(seed)))
            .collect();
        let clusters: Vec<&ClusterSpec> = scenarios
            .iter()
            .filter_map(|s| s.cluster.as_ref())
            .collect();
        assert!((150..250).contains(&clusters.len()), "{}", clusters.len());
        assert!(clusters.iter().all(|c| (2..=3).contains(&c.nodes)));
        let migrations = clusters
            .iter()
            .flat_map(|c| &c.faults)
            .filter(|(_, f)| matches!(f, ClusterFault::Migrate { .. }))
            .count();
        let failovers = clusters
            .iter()
            .flat_map(|c| &c.faults)
            .filter(|(_, f)| matches!(f, ClusterFault::Failover { .. }))
            .count();
        assert!(
            migrations > 50 && failovers > 10,
            "{migrations} {failovers}"
        );
        // Processes configured apart are drawn on a cluster as on one node.
        let apart = scenarios
            .iter()
            .filter(|s| s.cluster.is_some())
            .filter(|s| s.processes.iter().any(|p| p.misconfigured.is_some()))
            .count();
        assert!(apart > 10, "{apart}");
        for scenario in scenarios.iter().filter(|s| s.cluster.is_some()) {
            assert!(!scenario.time_key);
            assert!(scenario.origin.is_some());
            assert!(
                scenario
                    .faults
                    .planned
                    .iter()
                    .all(|(_, f)| !matches!(f, Fault::Failover { .. }))
            );
        }
    }
}
