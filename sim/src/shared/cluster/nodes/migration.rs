//! A slot migration, the one fault that changes which primary owns a slot while the cluster
//! runs. It is kept apart from the nodes' answers because it is the operator's side of the
//! cluster: its steps (`CLUSTER SETSLOT … MIGRATING` and `IMPORTING`, `MIGRATE` a few keys at
//! a time, `CLUSTER SETSLOT … NODE`) come from the scenario's faults, not from the calls, and
//! the `ASK` and `TRYAGAIN` answers of [`Cluster::execute`] only read the state they leave.

use crate::shared::cluster::key_slot;
use crate::shared::cluster::nodes::Cluster;
use crate::shared::keyspace::Expired;

/// A slot range migrating: `MIGRATING` on `from`, `IMPORTING` on `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Migration {
    /// The cluster fault it is (an index into the scenario's).
    pub(crate) fault: u32,
    /// The first slot.
    pub(crate) first: u16,
    /// The last slot.
    pub(crate) last: u16,
    /// The owner of `first`, marked `MIGRATING` (every owner of a slot of the range is).
    pub(crate) from: u8,
    /// The primary marked `IMPORTING`.
    pub(crate) to: u8,
}

impl Migration {
    pub(super) fn holds(&self, slot: u16) -> bool {
        (self.first..=self.last).contains(&slot)
    }
}

/// A migration that ended: the keys its last step moved, and those it found expired.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) migration: Migration,
    pub(crate) keys: Vec<Box<str>>,
    pub(crate) expired: Vec<Expired>,
}

impl Cluster {
    /// Slots `first..=last` begin to migrate to primary `to` (cluster fault `fault`): marked
    /// `MIGRATING` on their owner, `IMPORTING` on `to`. A migration still under way ends
    /// first, all its keys moving at once (as an operator finishes one before the next);
    /// that one and the keys it moved come back, as [`finish`](Cluster::finish) gives them.
    pub(crate) fn begin_migration(
        &mut self,
        fault: u32,
        first: u16,
        last: u16,
        to: u8,
        t: u64,
    ) -> (Migration, Option<Finished>) {
        let finished = self.finish(t);
        let to = to.min(u8::try_from(self.nodes.len() - 1).unwrap_or(0));
        let from = self.tables[self.latest()][usize::from(first)];
        let migration = Migration {
            fault,
            first,
            last,
            from,
            to,
        };
        self.migration = Some(migration);
        (migration, finished)
    }

    /// The slot range migrating, if one is.
    pub(crate) fn migrating(&self) -> Option<Migration> {
        self.migration
    }

    /// At `t`, up to `most` live keys of the migrating slots move from their owners to the
    /// importing primary, in key order, each at once (`MIGRATE`): the keys moved, and those
    /// found expired on the way (dropped, as the owner's lookup drops them).
    pub(crate) fn move_keys(&mut self, most: usize, t: u64) -> (Vec<Box<str>>, Vec<Expired>) {
        let Some(migration) = self.migration else {
            return (Vec::new(), Vec::new());
        };
        let (mut entries, mut expired) = (Vec::new(), Vec::new());
        for (index, node) in self.nodes.iter_mut().enumerate() {
            if index == usize::from(migration.to) || entries.len() == most {
                continue;
            }
            let now_ms = node.server.now_us(t) / 1_000;
            let keyspace = node.server.keyspace_mut();
            let holds = |key: &str| migration.holds(key_slot(key));
            entries.extend(keyspace.extract_live(holds, most - entries.len(), now_ms));
            expired.append(&mut keyspace.take_expired());
        }
        let target = self.nodes[usize::from(migration.to)].server.keyspace_mut();
        let mut moved = Vec::new();
        for (key, entry) in entries {
            moved.push(key.clone());
            target.import(key, entry);
        }
        (moved, expired)
    }

    /// At `t`, the migration under way ends: its keys left move, then the slots' owner
    /// changes (`CLUSTER SETSLOT … NODE`).
    pub(crate) fn finish(&mut self, t: u64) -> Option<Finished> {
        let migration = self.migration?;
        let (keys, expired) = self.move_keys(usize::MAX, t);
        self.migration = None;
        let mut table = self.tables[self.latest()].clone();
        for owner in &mut table[usize::from(migration.first)..=usize::from(migration.last)] {
            *owner = migration.to;
        }
        self.tables.push(table);
        Some(Finished {
            migration,
            keys,
            expired,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use fixed_window_redis::Protocol;

    use crate::shared::cluster::nodes::tests::{acquire, cluster, integers};
    use crate::shared::cluster::nodes::{ALL_PRIMARIES, Redirect, Route, redirect};
    use crate::shared::cluster::{initial_owner, key_slot};
    use crate::shared::engine::Reply;
    use crate::shared::server::{Command, Script};

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
            asking: None,
        };
        cluster.execute(&route, 1, &command, 0, true);
        let to = (owner + 1) % 3;
        let (migration, _) = cluster.begin_migration(0, slot, slot, to, 0);
        assert_eq!((migration.from, migration.to), (owner, to));
        let finished = cluster.finish(0).expect("under way");
        let key: Box<str> = call.counter_key(0).expect("a key").into();
        assert_eq!(finished.keys, [key]);
        assert!(cluster.migrating().is_none());
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
            asking: None,
        };
        let (reply, _) = cluster.execute(&route, 2, &command, 0, true);
        assert_eq!(integers(&reply)[..2], [1, 0], "{reply:?}");
        // A failover of the new owner loses that write, and refuses meanwhile.
        let undone = cluster.failover(to, (1, true), 0, 5);
        assert_eq!(undone.len(), 1);
        assert!(cluster.down(to, 4) && !cluster.down(to, 5));
        assert!(cluster.down(ALL_PRIMARIES, 4));
    }

    /// Two keys whose counters share a slot.
    fn two_keys_in_one_slot(protocol: &Protocol, script: &Rc<Script>) -> (String, String) {
        let slot_of = |key: &str| {
            let (call, _) = acquire(protocol, script, key);
            key_slot(call.counter_key(0).expect("a key"))
        };
        let mut seen: std::collections::HashMap<u16, String> = std::collections::HashMap::new();
        for k in 0..100_000 {
            let key = format!("k{k}");
            if let Some(other) = seen.insert(slot_of(&key), key.clone()) {
                return (other, key);
            }
        }
        panic!("no two keys in one slot");
    }

    #[test]
    fn a_migrating_slot_answers_ask_tryagain_and_moved_until_its_owner_changes() {
        let (mut cluster, protocol, script) = cluster();
        let load = Command::ScriptLoad(Rc::clone(&script));
        cluster.execute(&Route::default(), 0, &load, 0, true);
        let (a, b) = two_keys_in_one_slot(&protocol, &script);
        let (call_a, command_a) = acquire(&protocol, &script, &a);
        let (call_b, command_b) = acquire(&protocol, &script, &b);
        let slot = key_slot(call_a.counter_key(0).expect("a key"));
        let owner = initial_owner(slot, 3);
        let to = (owner + 1) % 3;
        let at = |node: u8, asking: bool| Route {
            node,
            strays: Vec::new(),
            asking: asking.then_some(0),
        };
        // One permit of each key, on the owner.
        for command in [&command_a, &command_b] {
            let (reply, _) = cluster.execute(&at(owner, false), 1, command, 0, true);
            assert_eq!(integers(&reply)[..2], [1, 1], "{reply:?}");
        }
        // One call for both keys.
        let mut both = (*call_a).clone();
        assert!(both.join((*call_b).clone()).is_ok());
        let both = Command::EvalSha {
            script: Rc::clone(&script),
            call: Rc::new(both),
            extra: Vec::new(),
        };
        cluster.begin_migration(0, slot, slot, to, 0);
        // Nothing moved yet: the owner serves both keys.
        let (reply, effects) = cluster.execute(&at(owner, false), 2, &both, 0, true);
        assert!(effects.ran_script, "{reply:?}");
        let (moved, expired) = cluster.move_keys(1, 0);
        assert_eq!(moved.len(), 1);
        assert!(expired.is_empty());
        let (gone, kept) = if *moved[0] == *call_a.counter_key(0).expect("a key") {
            (&command_a, &command_b)
        } else {
            (&command_b, &command_a)
        };
        // The key gone: ASK, to the target.
        let (reply, effects) = cluster.execute(&at(owner, false), 3, gone, 0, true);
        assert!(!effects.ran_script);
        let Reply::Error(message) = &reply else {
            panic!("{reply:?}")
        };
        assert!(message.starts_with(&format!("ASK {slot} ")), "{message}");
        assert_eq!(redirect(message), Some(Redirect::Ask(to)));
        // Both keys, one of them gone: TRYAGAIN.
        let (reply, effects) = cluster.execute(&at(owner, false), 4, &both, 0, true);
        assert!(!effects.ran_script);
        assert!(
            matches!(&reply, Reply::Error(m) if redirect(m) == Some(Redirect::TryAgain)),
            "{reply:?}"
        );
        // The key kept: served where it is (the window now full).
        let (reply, _) = cluster.execute(&at(owner, false), 5, kept, 0, true);
        assert_eq!(integers(&reply)[0], 0, "{reply:?}");
        // The target: MOVED back to the owner without ASKING, served with it, the count moved
        // with the key.
        let (reply, effects) = cluster.execute(&at(to, false), 6, gone, 0, true);
        assert!(!effects.ran_script);
        assert!(
            matches!(&reply, Reply::Error(m) if redirect(m) == Some(Redirect::Moved(owner))),
            "{reply:?}"
        );
        let (reply, effects) = cluster.execute(&at(to, true), 7, gone, 0, true);
        assert!(effects.ran_script);
        assert_eq!(integers(&reply)[0], 0, "{reply:?}");
        // After ASKING too, a call of several keys lacking some: TRYAGAIN.
        let (reply, _) = cluster.execute(&at(to, true), 8, &both, 0, true);
        assert!(
            matches!(&reply, Reply::Error(m) if redirect(m) == Some(Redirect::TryAgain)),
            "{reply:?}"
        );
        // The last key moves and the owner changes: the old owner answers MOVED.
        let finished = cluster.finish(0).expect("under way");
        assert_eq!(finished.keys.len(), 1);
        let (reply, _) = cluster.execute(&at(owner, false), 9, kept, 0, true);
        assert!(
            matches!(&reply, Reply::Error(m) if redirect(m) == Some(Redirect::Moved(to))),
            "{reply:?}"
        );
        let (reply, effects) = cluster.execute(&at(to, false), 10, &both, 0, true);
        assert!(effects.ran_script, "{reply:?}");
    }

    #[test]
    fn a_key_never_written_is_asked_for_and_created_on_the_target() {
        let (mut cluster, protocol, script) = cluster();
        let load = Command::ScriptLoad(Rc::clone(&script));
        cluster.execute(&Route::default(), 0, &load, 0, true);
        let (call, command) = acquire(&protocol, &script, "fresh");
        let slot = key_slot(call.counter_key(0).expect("a key"));
        let owner = initial_owner(slot, 3);
        let to = (owner + 2) % 3;
        cluster.begin_migration(0, slot, slot, to, 0);
        let route = Route {
            node: owner,
            strays: Vec::new(),
            asking: None,
        };
        let (reply, _) = cluster.execute(&route, 1, &command, 0, true);
        assert!(
            matches!(&reply, Reply::Error(m) if redirect(m) == Some(Redirect::Ask(to))),
            "{reply:?}"
        );
        let asking = Route {
            node: to,
            strays: Vec::new(),
            asking: Some(0),
        };
        let (reply, _) = cluster.execute(&asking, 2, &command, 0, true);
        assert_eq!(integers(&reply)[..2], [1, 1], "{reply:?}");
        // Nothing left to move: the owner changes with no key.
        let finished = cluster.finish(0).expect("under way");
        assert!(finished.keys.is_empty());
        let (reply, _) = cluster.execute(&route, 3, &command, 0, true);
        assert!(matches!(&reply, Reply::Error(m) if redirect(m) == Some(Redirect::Moved(to))));
    }
}
