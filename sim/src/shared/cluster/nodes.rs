//! A simulated cluster's primaries at run time: each a simulated [`Server`] with its own
//! keyspace and script cache; the slot table (which primary owns each slot, after each
//! migration); each client process's map of it, as its cluster connection last read it; and
//! the answers Redis Cluster gives a call it cannot run where it arrived.
//!
//! The rules, as Redis applies them:
//! - `EVALSHA` is routed by its first key's slot (redis-rs's rule for scripts), and every key
//!   of the call must hash to that slot, or the node answers
//!   `CROSSSLOT Keys in request don't hash to the same slot` and runs nothing;
//! - a primary that does not own the slot answers `MOVED <slot> <address>` (the owner's) and
//!   runs nothing;
//! - while a slot migrates (marked `MIGRATING` on its owner, `IMPORTING` on the primary that
//!   takes it, its keys moving a few at a time), its owner runs a call whose declared keys it
//!   all holds, answers `ASK <slot> <address>` (the target's) for one whose keys it holds none
//!   of (moved, or not yet written), and `TRYAGAIN` for one whose keys it holds only some of;
//!   the target runs a call for the slot only on a connection that sent `ASKING` just before
//!   (`TRYAGAIN` again if the call declares several keys and lacks some), and answers `MOVED`
//!   to the owner otherwise;
//! - `SCRIPT LOAD` goes to every primary (redis-rs routes it to all of them and needs every
//!   one to succeed);
//! - a primary that failed refuses connections until its replica takes over.
//!
//! All primaries share one clock: a step of the server's clock steps them all.
//!
//! How a migration moves keys and changes the slot table is in [`migration`].

use std::rc::Rc;

use fixed_window_redis::ScriptCall;

use crate::shared::cluster::{ClusterSpec, SLOTS, initial_owner, key_slot};
use crate::shared::engine::Reply;
use crate::shared::keyspace::Write;
use crate::shared::replication::Replication;
use crate::shared::server::{Command, Effects, Server};

mod migration;
pub(crate) use self::migration::{Finished, Migration};

/// Where a request goes: a primary (or every one, for `SCRIPT LOAD`), and calls a planted
/// client put in the same request although their keys are in other slots.
#[derive(Debug, Clone, Default)]
pub(crate) struct Route {
    /// The primary; [`ALL_PRIMARIES`] for `SCRIPT LOAD`.
    pub(crate) node: u8,
    /// Attempts sent in the same call, whose keys the node receives too.
    pub(crate) strays: Vec<Rc<ScriptCall>>,
    /// `ASKING` went just before it on the connection: an `ASK` followed, answered during
    /// the migration that is cluster fault of this index. The importing primary serves it
    /// only while that migration is under way: a reverse migration of the slot begun while
    /// the call was on its way (which the simulation's migrations, drawn close together, could
    /// make, and no operator does) would let it run where the key is not.
    pub(crate) asking: Option<u32>,
}

/// What an error reply tells a cluster client to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// `MOVED`: the slot lives on this primary now.
    Moved(u8),
    /// `ASK`: the slot is migrating to this primary; send this call there, after `ASKING`.
    Ask(u8),
    /// `TRYAGAIN`: the call's keys are split between two primaries; send it again later.
    TryAgain,
}

/// Redis's answer to a call whose keys a migration has split between two primaries.
const TRYAGAIN: &str = "TRYAGAIN Multiple keys request during rehashing of slot";

/// The node of a request sent to every primary.
pub(crate) const ALL_PRIMARIES: u8 = u8::MAX;

/// One primary.
#[derive(Debug, Default)]
struct Node {
    server: Server,
    /// Until when (virtual time) it refuses connections: it failed and its replica has not
    /// taken over yet.
    down_until: u64,
    /// Until when (virtual time) it reads nothing: it is stalled.
    stalled_until: u64,
}

/// The cluster's primaries and slot table, and the processes' maps of it.
#[derive(Debug)]
pub(crate) struct Cluster {
    nodes: Vec<Node>,
    /// The slot table as it started and after each migration, the latest last.
    tables: Vec<Vec<u8>>,
    /// Each process's map: which of `tables` its connection last read; `None` until it
    /// connects.
    maps: Vec<Option<usize>>,
    /// Per process, the stray attempts of its batch in flight (a planted client's).
    pub(crate) strays: Vec<Vec<Rc<ScriptCall>>>,
    /// The slot range migrating, if one is.
    migration: Option<Migration>,
}

/// The address a `MOVED` reply names for primary `node`.
fn address(node: u8) -> String {
    format!("node{node}:6379")
}

/// What an error reply asks of a cluster client: `MOVED <slot> node<n>:6379`,
/// `ASK <slot> node<n>:6379` or `TRYAGAIN …`; `None` for any other error.
pub(crate) fn redirect(message: &str) -> Option<Redirect> {
    if message.starts_with("TRYAGAIN") {
        return Some(Redirect::TryAgain);
    }
    let node = |rest: &str| -> Option<u8> {
        let address = rest.split(' ').nth(1)?;
        address
            .strip_prefix("node")?
            .split(':')
            .next()?
            .parse()
            .ok()
    };
    if let Some(rest) = message.strip_prefix("MOVED ") {
        return node(rest).map(Redirect::Moved);
    }
    node(message.strip_prefix("ASK ")?).map(Redirect::Ask)
}

impl Cluster {
    /// The cluster of `spec`, for `processes` client processes.
    pub(crate) fn new(
        spec: &ClusterSpec,
        processes: usize,
        replication: Option<&Rc<Replication>>,
    ) -> Cluster {
        Cluster {
            nodes: (0..spec.nodes)
                .map(|_| Node {
                    server: replication.map_or_else(Server::default, |replication| {
                        Server::replicated(Rc::clone(replication))
                    }),
                    down_until: 0,
                    stalled_until: 0,
                })
                .collect(),
            tables: vec![(0..SLOTS).map(|s| initial_owner(s, spec.nodes)).collect()],
            maps: vec![None; processes],
            strays: vec![Vec::new(); processes],
            migration: None,
        }
    }

    fn latest(&self) -> usize {
        self.tables.len() - 1
    }

    /// The primary `process`'s map says owns `slot` (reading the cluster's table first if it
    /// has no map yet).
    pub(crate) fn mapped(&mut self, process: u16, slot: u16) -> u8 {
        let latest = self.latest();
        let map = *self.maps[process as usize].get_or_insert(latest);
        self.tables[map][usize::from(slot)]
    }

    /// `process`'s connection reads the slot table again (after `MOVED`, or reconnecting).
    pub(crate) fn refresh(&mut self, process: u16) {
        self.maps[process as usize] = Some(self.latest());
    }

    /// `process` crashed: it reads the table when it connects again.
    pub(crate) fn forget_map(&mut self, process: u16) {
        self.maps[process as usize] = None;
        self.strays[process as usize].clear();
    }

    /// Whether `node` (any primary, for [`ALL_PRIMARIES`]) refuses connections at `t`.
    pub(crate) fn down(&self, node: u8, t: u64) -> bool {
        if node == ALL_PRIMARIES {
            self.nodes.iter().any(|n| t < n.down_until)
        } else {
            self.nodes
                .get(usize::from(node))
                .is_some_and(|n| t < n.down_until)
        }
    }

    /// Until when `node` (the last of the primaries to continue, for [`ALL_PRIMARIES`]) reads
    /// nothing, if it is stalled at `t`.
    pub(crate) fn stalled(&self, node: u8, t: u64) -> Option<u64> {
        let until = if node == ALL_PRIMARIES {
            self.nodes.iter().map(|n| n.stalled_until).max()?
        } else {
            self.nodes.get(usize::from(node))?.stalled_until
        };
        (t < until).then_some(until)
    }

    /// `node` stalls until `until`.
    pub(crate) fn stall(&mut self, node: u8, until: u64) {
        if let Some(node) = self.nodes.get_mut(usize::from(node)) {
            node.stalled_until = node.stalled_until.max(until);
        }
    }

    /// Runs `command` of `request`, sent along `route`, at virtual time `t`. With
    /// `check_owner` false (a planted cluster), a primary runs a call for a slot it does not
    /// own instead of answering `MOVED`.
    pub(crate) fn execute(
        &mut self,
        route: &Route,
        request: u32,
        command: &Command,
        t: u64,
        check_owner: bool,
    ) -> (Reply, Effects) {
        let call = match command {
            Command::ScriptLoad(_) => {
                let mut answer = None;
                for node in &mut self.nodes {
                    let done = node.server.execute(request, command, t);
                    answer.get_or_insert(done);
                }
                return answer.unwrap_or((Reply::Nil, Effects::default()));
            }
            Command::EvalSha { call, .. } => call,
        };
        let node = usize::from(route.node).min(self.nodes.len() - 1);
        let refusal = |message: String, server: &Server| {
            let effects = Effects {
                server_us: server.now_us(t),
                ..Effects::default()
            };
            (Reply::Error(message.into()), effects)
        };
        let mut slots = call
            .keys()
            .chain(route.strays.iter().flat_map(|stray| stray.keys()))
            .map(key_slot);
        let slot = slots.next().unwrap_or(0);
        if slots.any(|other| other != slot) {
            let message = "CROSSSLOT Keys in request don't hash to the same slot".to_owned();
            return refusal(message, &self.nodes[node].server);
        }
        let owner = self.tables[self.latest()][usize::from(slot)];
        if !check_owner {
            return self.nodes[node].server.execute(request, command, t);
        }
        let migration = self.migration.filter(|m| m.holds(slot) && m.to != owner);
        let importing = migration.is_some_and(|m| usize::from(m.to) == node);
        let asked = migration.is_some_and(|m| route.asking == Some(m.fault));
        if usize::from(owner) != node && !(importing && asked) {
            let message = format!("MOVED {slot} {}", address(owner));
            return refusal(message, &self.nodes[node].server);
        }
        if let Some(migration) = migration {
            // The declared keys, as the node looks them up (an expired one is dropped).
            let server = &mut self.nodes[node].server;
            let now_ms = server.now_us(t) / 1_000;
            let keyspace = server.keyspace_mut();
            // A key declared twice is one key, as Redis counts them.
            let mut keys: Vec<&str> = call
                .keys()
                .chain(route.strays.iter().flat_map(|stray| stray.keys()))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let declared = keys.len();
            let held = keys
                .iter()
                .filter(|key| keyspace.exists(key, now_ms))
                .count();
            let expired = keyspace.take_expired();
            let message = if importing {
                // Served after `ASKING`, unless a call of several keys lacks some.
                (declared > 1 && held < declared).then(|| TRYAGAIN.to_owned())
            } else if held == declared {
                None
            } else if held == 0 {
                Some(format!("ASK {slot} {}", address(migration.to)))
            } else {
                Some(TRYAGAIN.to_owned())
            };
            if let Some(message) = message {
                let (reply, mut effects) = refusal(message, &self.nodes[node].server);
                effects.expired = expired;
                return (reply, effects);
            }
            let (reply, mut effects) = self.nodes[node].server.execute(request, command, t);
            let mut found = expired;
            found.append(&mut effects.expired);
            effects.expired = found;
            return (reply, effects);
        }
        self.nodes[node].server.execute(request, command, t)
    }

    /// Primary `node` fails at `t`: refused until `until`, then its replica, lacking its last
    /// `lag` writes (those it had not acknowledged by `t`, if its replication is modelled;
    /// and its scripts unless `keeps_scripts`), serves its slots. The writes it lacks, newest
    /// first.
    pub(crate) fn failover(
        &mut self,
        node: u8,
        (lag, keeps_scripts): (u8, bool),
        t: u64,
        until: u64,
    ) -> Vec<Write> {
        let Some(node) = self.nodes.get_mut(usize::from(node)) else {
            return Vec::new();
        };
        node.down_until = node.down_until.max(until);
        node.server.failover(usize::from(lag), keeps_scripts, t)
    }

    /// The epoch of primary `node` (of every primary, summed, for [`ALL_PRIMARIES`]): bumped
    /// at its every failover and restart.
    pub(crate) fn epoch(&self, node: u8) -> u32 {
        match self.nodes.get(usize::from(node)) {
            Some(node) => node.server.epoch(),
            None => self.nodes.iter().map(|n| n.server.epoch()).sum(),
        }
    }

    /// The slot ranges `node` owns now, in order.
    pub(crate) fn slots_of(&self, node: u8) -> Vec<(u16, u16)> {
        let table = &self.tables[self.latest()];
        let mut ranges: Vec<(u16, u16)> = Vec::new();
        for slot in 0..SLOTS {
            if table[usize::from(slot)] != node {
                continue;
            }
            match ranges.last_mut() {
                Some((_, last)) if *last + 1 == slot => *last = slot,
                _ => ranges.push((slot, slot)),
            }
        }
        ranges
    }

    /// Every primary restarts without persistence.
    pub(crate) fn restart(&mut self) {
        for node in &mut self.nodes {
            node.server.restart();
        }
    }

    /// `SCRIPT FLUSH` on every primary.
    pub(crate) fn flush_scripts(&mut self) {
        for node in &mut self.nodes {
            node.server.flush_scripts();
        }
    }

    /// The cluster's clock steps by `delta_ns`.
    pub(crate) fn step_clock(&mut self, delta_ns: i64) {
        for node in &mut self.nodes {
            node.server.step_clock(delta_ns);
        }
    }

    /// The live keys of every primary at `t`, sorted by key.
    pub(crate) fn live_keys(&self, t: u64) -> Vec<(Box<str>, Option<u64>)> {
        let mut keys: Vec<_> = self
            .nodes
            .iter()
            .flat_map(|node| node.server.live_keys(t))
            .collect();
        keys.sort();
        keys
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use fixed_window::Instant;
    use fixed_window_redis::{Begin, Config, Protocol, SCRIPT};

    use super::*;
    use crate::shared::server::Script;

    pub(super) fn cluster() -> (Cluster, Protocol, Rc<Script>) {
        let spec = ClusterSpec {
            nodes: 3,
            faults: Vec::new(),
        };
        let config = Config::of("api", 2, Duration::from_millis(10))
            .and_then(|c| c.with_origin(fixed_window::Origin::UnixEpoch))
            .expect("valid");
        (
            Cluster::new(&spec, 2, None),
            Protocol::for_cluster(config),
            Rc::new(Script::new(SCRIPT)),
        )
    }

    pub(super) fn acquire(
        protocol: &Protocol,
        script: &Rc<Script>,
        key: &str,
    ) -> (Rc<ScriptCall>, Command) {
        let Ok(Begin::Call(call)) = protocol.begin(key, Instant::ZERO, Instant::ZERO) else {
            panic!("a call");
        };
        let call = Rc::new(call);
        let command = Command::EvalSha {
            script: Rc::clone(script),
            call: Rc::clone(&call),
            extra: Vec::new(),
        };
        (call, command)
    }

    pub(super) fn integers(reply: &Reply) -> Vec<i64> {
        reply.integers().unwrap_or_default()
    }

    #[test]
    fn calls_run_on_their_slots_owner_others_answer_moved_or_crossslot() {
        let (mut cluster, protocol, script) = cluster();
        let load = Command::ScriptLoad(Rc::clone(&script));
        let (reply, _) = cluster.execute(&Route::default(), 0, &load, 0, true);
        assert!(matches!(reply, Reply::Bulk(_)), "{reply:?}");
        let (call, command) = acquire(&protocol, &script, "a");
        let slot = key_slot(call.counter_key(0).expect("a key"));
        let owner = initial_owner(slot, 3);
        let elsewhere = Route {
            node: (owner + 1) % 3,
            strays: Vec::new(),
            asking: None,
        };
        let (reply, effects) = cluster.execute(&elsewhere, 1, &command, 0, true);
        assert!(!effects.ran_script);
        let Reply::Error(message) = &reply else {
            panic!("{reply:?}")
        };
        assert_eq!(redirect(message), Some(Redirect::Moved(owner)), "{message}");
        assert!(message.starts_with(&format!("MOVED {slot} ")));
        let home = Route {
            node: owner,
            strays: Vec::new(),
            asking: None,
        };
        let (reply, effects) = cluster.execute(&home, 2, &command, 0, true);
        assert!(effects.ran_script);
        assert_eq!(integers(&reply)[0], 1, "{reply:?}");
        // A planted cluster runs it where it lands: a second counter, on the wrong primary.
        let (reply, _) = cluster.execute(&elsewhere, 3, &command, 0, false);
        assert_eq!(integers(&reply)[..2], [1, 1], "{reply:?}");
        // Keys of two slots in one call.
        let other = (0..1_000).map(|k| format!("b{k}")).find(|k| {
            let (c, _) = acquire(&protocol, &script, k);
            key_slot(c.counter_key(0).expect("a key")) != slot
        });
        let (stray, _) = acquire(&protocol, &script, &other.expect("another slot"));
        let crossing = Route {
            node: owner,
            strays: vec![stray],
            asking: None,
        };
        let (reply, effects) = cluster.execute(&crossing, 4, &command, 0, true);
        assert!(matches!(&reply, Reply::Error(m) if m.starts_with("CROSSSLOT")));
        assert!(!effects.ran_script);
    }
}
