//! The keyed limiter's table under a model checker (`--cfg fixed_window_loom` or
//! `--cfg fixed_window_shuttle`): a stand-in for the `papaya` shards built from the checker's
//! own `Mutex` and `Arc`.
//!
//! The checkers cannot see inside `papaya` (its atomics are not theirs, and `seize` keeps
//! per-thread state that the checkers' threads would share). What the keyed limiter relies on
//! is the map's contract, and the stand-in keeps exactly that contract:
//!
//! - `get`, `insert` (if absent), `remove_if` and `retain` on one key are linearizable: here
//!   each is one critical section of the checker's mutex, which it schedules like any other
//!   synchronisation point;
//! - a reference found by `get` stays valid, and still points at the same word, after the
//!   key is removed (papaya frees a removed entry only when every guard that could see it is
//!   dropped): here the reference is an `Arc` of the word.
//!
//! So the models explore every interleaving of the table's operations with the claims,
//! sweeps and reclaiming compare-and-sets on the words themselves, which is where the
//! removal-versus-claim race lives. They do not explore `papaya`'s own algorithm (its resizes
//! and internal orderings), which its authors test. Keys are kept in a list, in insertion
//! order: models hold a handful, and a fixed order keeps every execution replayable.

use crate::sync::{Arc, Mutex, MutexGuard};

use super::slot::Word;

/// One shard: a model needs no more.
pub(crate) const SHARDS: usize = 1;

/// Keys and their state words.
pub(crate) struct Table<K, W> {
    entries: Mutex<Vec<(K, Arc<W>)>>,
}

/// The table as a call uses it: under the models a call holds nothing while it uses
/// references into the table (each is an `Arc`).
pub(crate) struct Pinned<'t, K, W> {
    table: &'t Table<K, W>,
}

impl<K, W> Table<K, W>
where
    K: Eq + Clone + Send + Sync + 'static,
    W: Word,
{
    pub(crate) fn new() -> Self {
        Table {
            entries: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn pin(&self, _hash: u64) -> Pinned<'_, K, W> {
        Pinned { table: self }
    }

    fn entries(&self) -> MutexGuard<'_, Vec<(K, Arc<W>)>> {
        // The list is never left half-updated by a panic, so a poisoned lock is still sound.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn retain(&self, _shard: usize, mut keep: impl FnMut(&W) -> bool) -> usize {
        let mut entries = self.entries();
        let before = entries.len();
        entries.retain(|(_, word)| keep(word));
        before - entries.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries().len()
    }
}

impl<K, W> Pinned<'_, K, W>
where
    K: Eq + Clone + Send + Sync + 'static,
    W: Word,
{
    pub(crate) fn get(&self, _hash: u64, key: &K) -> Option<Arc<W>> {
        self.table
            .entries()
            .iter()
            .find(|(stored, _)| stored == key)
            .map(|(_, word)| Arc::clone(word))
    }

    pub(crate) fn insert(&self, _hash: u64, key: &K, word: W) {
        let mut entries = self.table.entries();
        if !entries.iter().any(|(stored, _)| stored == key) {
            entries.push((key.clone(), Arc::new(word)));
        }
    }

    pub(crate) fn remove_if(&self, _hash: u64, key: &K, mut remove: impl FnMut(&W) -> bool) {
        let mut entries = self.table.entries();
        if let Some(at) = entries
            .iter()
            .position(|(stored, word)| stored == key && remove(word))
        {
            entries.remove(at);
        }
    }
}
