//! The simulated server's keyspace: string values with Redis's expiry rule on the server's
//! clock, and the log of recent writes a lagging replica has not received.

use std::collections::{HashMap, VecDeque};

/// The most writes a replica may lag behind by: the undo log keeps this many.
pub(crate) const MOST_LAG: usize = 16;

/// One stored value and when it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The value, as a Redis string.
    pub(crate) value: Box<str>,
    /// The last server millisecond the key lives in (Redis's `when`: the key is expired once
    /// the server's time in milliseconds is past it); `None` lives until deleted.
    pub(crate) expires_at_ms: Option<u64>,
}

/// A write the server made: which request wrote which key, and what the key held before, so
/// that a failover to a lagging replica can undo it.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    /// The request whose script wrote.
    pub(crate) request: u32,
    /// The key written.
    pub(crate) key: Box<str>,
    /// What it held before (`None`: absent).
    pub(crate) before: Option<Entry>,
    /// Its place in the stream of writes the replica receives (the replication offset after
    /// it): 1 for the first.
    pub(crate) offset: u64,
}

/// A key the server found expired when a command touched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expired {
    /// The key.
    pub(crate) key: Box<str>,
    /// The last millisecond it lived in.
    pub(crate) expires_at_ms: u64,
}

/// A deterministic hasher: nothing iterates the map in its own order (keys are sorted first),
/// but a fixed hasher keeps even its layout the same from run to run. Foldhash rather than
/// the standard `SipHash`: a script's commands hash a key each, and `SipHash` costs several times
/// as much.
type Map = HashMap<Box<str>, Entry, foldhash::fast::FixedState>;

/// The keyspace: expiry is lazy (a key past its time is dropped when a command touches it),
/// as Redis does between its active expiry cycles; the simulation has no other way to observe
/// a key, so the difference cannot show.
#[derive(Debug, Default)]
pub(crate) struct Keyspace {
    entries: Map,
    /// The latest writes, oldest first, at most [`MOST_LAG`].
    log: VecDeque<Write>,
    /// Keys found expired since the server last took them.
    expired: Vec<Expired>,
    /// The writes made so far: the replication offset.
    written: u64,
    /// The log keeps every write until the server says its replica acknowledged it
    /// ([`acknowledged`](Keyspace::acknowledged)), rather than the latest [`MOST_LAG`].
    replicated: bool,
}

/// Redis's rule: a key is expired once the time is past its `when`.
fn is_expired(entry: &Entry, now_ms: u64) -> bool {
    entry.expires_at_ms.is_some_and(|when| now_ms > when)
}

impl Keyspace {
    /// The value of `key` at server millisecond `now_ms`, dropping it if it expired.
    pub(crate) fn get(&mut self, key: &str, now_ms: u64) -> Option<&str> {
        if self.entries.get(key).is_some_and(|e| is_expired(e, now_ms)) {
            if let Some((key, entry)) = self.entries.remove_entry(key) {
                self.expired.push(Expired {
                    key,
                    expires_at_ms: entry.expires_at_ms.unwrap_or(u64::MAX),
                });
            }
            return None;
        }
        self.entries.get(key).map(|entry| &*entry.value)
    }

    /// The expiry of `key` at `now_ms` (dropping it if it expired): `None` if it is absent or
    /// lives until deleted.
    pub(crate) fn expiry(&mut self, key: &str, now_ms: u64) -> Option<u64> {
        self.get(key, now_ms)?;
        self.entries.get(key).and_then(|entry| entry.expires_at_ms)
    }

    /// Whether `key` exists at `now_ms` (dropping it if it expired).
    pub(crate) fn exists(&mut self, key: &str, now_ms: u64) -> bool {
        self.get(key, now_ms).is_some()
    }

    /// Stores `value` at `key` for `request`, replacing its expiry (a plain `SET` makes a key
    /// live forever, as in Redis), and logs the write.
    pub(crate) fn set(&mut self, request: u32, key: &str, value: &str, expires_at_ms: Option<u64>) {
        let entry = Entry {
            value: value.into(),
            expires_at_ms,
        };
        let (key, before) = if let Some(held) = self.entries.get_mut(key) {
            (key.into(), Some(std::mem::replace(held, entry)))
        } else {
            let key: Box<str> = key.into();
            self.entries.insert(key.clone(), entry);
            (key, None)
        };
        if self.log.len() == MOST_LAG && !self.replicated {
            self.log.pop_front();
        }
        self.written += 1;
        self.log.push_back(Write {
            request,
            key,
            before,
            offset: self.written,
        });
    }

    /// Stores `value` at `key` for good without logging the write: a key a test keeps in step
    /// with the server (the script's time key), which no replica lags behind on.
    pub(crate) fn keep(&mut self, key: &str, value: &str) {
        let entry = Entry {
            value: value.into(),
            expires_at_ms: None,
        };
        self.entries.insert(key.into(), entry);
    }

    /// Forgets everything: a restart without persistence.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.log.clear();
        self.expired.clear();
    }

    /// Undoes the latest `lag` writes (at most those logged), newest first: what a replica
    /// that lags by `lag` writes holds. Returns the writes undone, newest first.
    pub(crate) fn undo(&mut self, lag: usize) -> Vec<Write> {
        let mut undone = Vec::new();
        while undone.len() < lag {
            let Some(write) = self.log.pop_back() else {
                break;
            };
            match &write.before {
                Some(entry) => {
                    self.entries.insert(write.key.clone(), entry.clone());
                }
                None => {
                    self.entries.remove(&write.key);
                }
            }
            undone.push(write);
        }
        // The replica now is the primary: earlier writes are no longer anyone's lag.
        self.log.clear();
        undone
    }

    /// A keyspace whose log keeps every write until its replica acknowledges it.
    pub(crate) fn replicated() -> Keyspace {
        Keyspace {
            replicated: true,
            ..Keyspace::default()
        }
    }

    /// The replication offset: the writes made so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// The replica acknowledged the writes up to `offset`: a failover no longer undoes them.
    pub(crate) fn acknowledged(&mut self, offset: u64) {
        while self.log.front().is_some_and(|write| write.offset <= offset) {
            self.log.pop_front();
        }
    }

    /// Undoes every write after `offset`, newest first: what a replica that received the
    /// writes up to `offset` holds. Returns the writes undone, newest first.
    pub(crate) fn undo_after(&mut self, offset: u64) -> Vec<Write> {
        let lag = self
            .log
            .iter()
            .rev()
            .take_while(|write| write.offset > offset)
            .count();
        self.undo(lag)
    }

    /// Takes out at most `most` of the live keys `moves` picks at `now_ms`, in key order,
    /// with their values and expiries, as `MIGRATE` moves keys one at a time; the writes
    /// logged on them go with them. A key found expired on the way is dropped instead, as the
    /// source's lookup drops it, and reported by [`take_expired`](Keyspace::take_expired). The
    /// writes logged on keys that leave, or that are no longer here, leave the log: a failover
    /// of this node no longer undoes them.
    pub(crate) fn extract_live(
        &mut self,
        mut moves: impl FnMut(&str) -> bool,
        most: usize,
        now_ms: u64,
    ) -> Vec<(Box<str>, Entry)> {
        let mut keys: Vec<Box<str>> = self.entries.keys().filter(|k| moves(k)).cloned().collect();
        keys.sort_unstable();
        let mut taken = Vec::new();
        for key in keys {
            if taken.len() == most {
                break;
            }
            if self.exists(&key, now_ms) {
                taken.extend(self.entries.remove_entry(&key));
            }
        }
        // A key taken, found expired or dropped here earlier is the target's from now on (the
        // source answers ASK for it): the writes logged on it leave with its slot.
        let entries = &self.entries;
        self.log
            .retain(|write| !moves(&write.key) || entries.contains_key(&write.key));
        taken
    }

    /// Puts `key` in with `entry` as it was elsewhere (a key `MIGRATE` brought), unlogged.
    pub(crate) fn import(&mut self, key: Box<str>, entry: Entry) {
        self.entries.insert(key, entry);
    }

    /// The keys found expired since the last call, in the order found.
    pub(crate) fn take_expired(&mut self) -> Vec<Expired> {
        std::mem::take(&mut self.expired)
    }

    /// Whether any key was found expired since the last [`take_expired`](Keyspace::take_expired).
    pub(crate) fn has_expired(&self) -> bool {
        !self.expired.is_empty()
    }

    /// Every live key at `now_ms` with its expiry, sorted by key.
    pub(crate) fn live(&self, now_ms: u64) -> Vec<(Box<str>, Option<u64>)> {
        let mut live: Vec<_> = self
            .entries
            .iter()
            .filter(|(_, entry)| !is_expired(entry, now_ms))
            .map(|(key, entry)| (key.clone(), entry.expires_at_ms))
            .collect();
        live.sort_unstable();
        live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_lives_through_its_last_millisecond_and_not_after() {
        let mut keys = Keyspace::default();
        keys.set(0, "a", "1", Some(10));
        assert_eq!(keys.get("a", 10), Some("1"));
        assert!(!keys.has_expired());
        assert_eq!(keys.get("a", 11), None);
        assert_eq!(
            keys.take_expired(),
            [Expired {
                key: "a".into(),
                expires_at_ms: 10
            }]
        );
        keys.set(1, "b", "2", None);
        assert_eq!(keys.get("b", u64::MAX), Some("2"));
    }

    #[test]
    fn a_lagging_replica_lacks_the_latest_writes() {
        let mut keys = Keyspace::default();
        keys.set(0, "a", "1", None);
        keys.set(1, "a", "2", Some(5));
        keys.set(2, "b", "3", None);
        let undone = keys.undo(2);
        assert_eq!(undone.iter().map(|w| w.request).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(keys.get("a", 100), Some("1"));
        assert_eq!(keys.get("b", 0), None);
        // Nothing older is undone by a later failover.
        assert!(keys.undo(5).is_empty());
        assert_eq!(keys.live(0), [("a".into(), None)]);
    }

    #[test]
    fn the_log_keeps_only_the_most_lag_latest_writes() {
        let mut keys = Keyspace::default();
        for request in 0..40 {
            keys.set(request, "k", &request.to_string(), None);
        }
        assert_eq!(keys.undo(100).len(), MOST_LAG);
        assert_eq!(keys.get("k", 0), Some("23"));
    }

    #[test]
    fn a_replicated_log_keeps_the_writes_not_acknowledged_and_undoes_them() {
        let mut keys = Keyspace::replicated();
        for request in 0..40 {
            keys.set(request, "k", &request.to_string(), None);
        }
        keys.acknowledged(10);
        assert_eq!(keys.written(), 40);
        let undone = keys.undo_after(12);
        assert_eq!(undone.len(), 28);
        assert_eq!(undone[0].request, 39);
        assert_eq!(keys.get("k", 0), Some("11"));
        assert!(keys.undo_after(0).is_empty());
    }

    /// A key whose slot migrates leaves the node with the writes logged on it, whether it is
    /// moved, found expired on the way, or dropped as expired before: a failover of the node
    /// afterwards undoes none of them (the key is the target's).
    #[test]
    fn a_migrating_keys_writes_leave_the_log_with_it() {
        let mut keys = Keyspace::default();
        keys.set(1, "moved", "1", Some(100));
        keys.set(2, "expired", "1", Some(10));
        keys.set(3, "dropped", "1", Some(10));
        keys.set(4, "stays", "1", Some(100));
        assert_eq!(keys.get("dropped", 20), None);
        let taken = keys.extract_live(|key| key != "stays", 8, 20);
        assert_eq!(taken.len(), 1);
        assert_eq!(&*taken[0].0, "moved");
        let undone = keys.undo(MOST_LAG);
        assert_eq!(undone.iter().map(|w| w.request).collect::<Vec<_>>(), [4]);
    }
}
