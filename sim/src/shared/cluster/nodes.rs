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
//! - `SCRIPT LOAD` goes to every primary (redis-rs routes it to all of them and needs every
//!   one to succeed);
//! - a primary that failed refuses connections until its replica takes over.
//!
//! All primaries share one clock: a step of the server's clock steps them all.

use std::rc::Rc;

use fixed_window_redis::ScriptCall;

use crate::shared::cluster::{ClusterSpec, SLOTS, initial_owner, key_slot};
use crate::shared::engine::Reply;
use crate::shared::keyspace::Write;
use crate::shared::server::{Command, Effects, Server};

/// Where a request goes: a primary (or every one, for `SCRIPT LOAD`), and calls a planted
/// client put in the same request although their keys are in other slots.
#[derive(Debug, Clone, Default)]
pub(crate) struct Route {
    /// The primary; [`ALL_PRIMARIES`] for `SCRIPT LOAD`.
    pub(crate) node: u8,
    /// Attempts sent in the same call, whose keys the node receives too.
    pub(crate) strays: Vec<Rc<ScriptCall>>,
}

/// The node of a request sent to every primary.
pub(crate) const ALL_PRIMARIES: u8 = u8::MAX;

/// One primary.
#[derive(Debug, Default)]
struct Node {
    server: Server,
    /// Until when (virtual time) it refuses connections: it failed and its replica has not
    /// taken over yet.
    down_until: u64,
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
}

/// The address a `MOVED` reply names for primary `node`.
fn address(node: u8) -> String {
    format!("node{node}:6379")
}

/// The primary a `MOVED` reply names: `MOVED <slot> node<n>:6379`.
pub(crate) fn moved_to(message: &str) -> Option<u8> {
    let address = message.strip_prefix("MOVED ")?.split(' ').nth(1)?;
    address
        .strip_prefix("node")?
        .split(':')
        .next()?
        .parse()
        .ok()
}

impl Cluster {
    /// The cluster of `spec`, for `processes` client processes.
    pub(crate) fn new(spec: &ClusterSpec, processes: usize) -> Cluster {
        Cluster {
            nodes: (0..spec.nodes).map(|_| Node::default()).collect(),
            tables: vec![(0..SLOTS).map(|s| initial_owner(s, spec.nodes)).collect()],
            maps: vec![None; processes],
            strays: vec![Vec::new(); processes],
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
        if check_owner && usize::from(owner) != node {
            let message = format!("MOVED {slot} {}", address(owner));
            return refusal(message, &self.nodes[node].server);
        }
        self.nodes[node].server.execute(request, command, t)
    }

    /// Slots `first..=last` move to primary `to`, their keys with them; the keys moved.
    pub(crate) fn migrate(&mut self, first: u16, last: u16, to: u8) -> Vec<Box<str>> {
        let to = to.min(u8::try_from(self.nodes.len() - 1).unwrap_or(0));
        let moving = |key: &str| (first..=last).contains(&key_slot(key));
        let mut moved = Vec::new();
        let mut entries = Vec::new();
        for (index, node) in self.nodes.iter_mut().enumerate() {
            if index != usize::from(to) {
                entries.extend(node.server.keyspace_mut().extract(moving));
            }
        }
        let target = self.nodes[usize::from(to)].server.keyspace_mut();
        for (key, entry) in entries {
            moved.push(key.clone());
            target.import(key, entry);
        }
        let mut table = self.tables[self.latest()].clone();
        for owner in &mut table[usize::from(first)..=usize::from(last)] {
            *owner = to;
        }
        self.tables.push(table);
        moved
    }

    /// Primary `node` fails at `t`: refused until `until`, then its replica, lacking its last
    /// `lag` writes (and its scripts unless `keeps_scripts`), serves its slots. The writes it
    /// lacks, newest first.
    pub(crate) fn failover(
        &mut self,
        node: u8,
        lag: u8,
        keeps_scripts: bool,
        until: u64,
    ) -> Vec<Write> {
        let Some(node) = self.nodes.get_mut(usize::from(node)) else {
            return Vec::new();
        };
        node.down_until = node.down_until.max(until);
        node.server.failover(usize::from(lag), keeps_scripts)
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

    fn cluster() -> (Cluster, Protocol, Rc<Script>) {
        let spec = ClusterSpec {
            nodes: 3,
            faults: Vec::new(),
        };
        let config = Config::of("api", 2, Duration::from_millis(10))
            .and_then(|c| c.with_origin(fixed_window::Origin::UnixEpoch))
            .expect("valid");
        (
            Cluster::new(&spec, 2),
            Protocol::for_cluster(config),
            Rc::new(Script::new(SCRIPT)),
        )
    }

    fn acquire(protocol: &Protocol, script: &Rc<Script>, key: &str) -> (Rc<ScriptCall>, Command) {
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

    fn integers(reply: &Reply) -> Vec<i64> {
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
        };
        let (reply, effects) = cluster.execute(&elsewhere, 1, &command, 0, true);
        assert!(!effects.ran_script);
        let Reply::Error(message) = &reply else {
            panic!("{reply:?}")
        };
        assert_eq!(moved_to(message), Some(owner), "{message}");
        assert!(message.starts_with(&format!("MOVED {slot} ")));
        let home = Route {
            node: owner,
            strays: Vec::new(),
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
        };
        let (reply, effects) = cluster.execute(&crossing, 4, &command, 0, true);
        assert!(matches!(&reply, Reply::Error(m) if m.starts_with("CROSSSLOT")));
        assert!(!effects.ran_script);
    }

    #[test]
    fn a_migration_moves_keys_and_slots_and_maps_follow_on_refresh() {
        let (mut cluster, protocol, script) = cluster();
        cluster.execute(
            &Route::default(),
            0,
            &Command::ScriptLoad(Rc::clone(&script)),
            0,
            true,
        );
        let (call, command) = acquire(&protocol, &script, "a");
        let slot = key_slot(call.counter_key(0).expect("a key"));
        let owner = cluster.mapped(0, slot);
        let route = Route {
            node: owner,
            strays: Vec::new(),
        };
        cluster.execute(&route, 1, &command, 0, true);
        let to = (owner + 1) % 3;
        let moved = cluster.migrate(slot, slot, to);
        let key: Box<str> = call.counter_key(0).expect("a key").into();
        assert_eq!(moved, [key]);
        assert!(
            cluster
                .slots_of(to)
                .iter()
                .any(|&(a, b)| a <= slot && slot <= b)
        );
        // Process 0's map is stale until it reads the table again; process 1 reads it now.
        assert_eq!(cluster.mapped(0, slot), owner);
        assert_eq!(cluster.mapped(1, slot), to);
        cluster.refresh(0);
        assert_eq!(cluster.mapped(0, slot), to);
        // The count moved with the key: the second permit leaves none.
        let route = Route {
            node: to,
            strays: Vec::new(),
        };
        let (reply, _) = cluster.execute(&route, 2, &command, 0, true);
        assert_eq!(integers(&reply)[..2], [1, 0], "{reply:?}");
        // A failover of the new owner loses that write, and refuses meanwhile.
        let undone = cluster.failover(to, 1, true, 5);
        assert_eq!(undone.len(), 1);
        assert!(cluster.down(to, 4) && !cluster.down(to, 5));
        assert!(cluster.down(ALL_PRIMARIES, 4));
    }
}
