//! The keyed limiter's table: its keys' state words in `papaya` maps, one per shard.
//!
//! `papaya` was chosen by measurement (the `keyed-map-*` benchmarks, against `scc` and
//! `dashmap`): finding a key is lock-free and writes no shared memory, so callers on different
//! keys never contend on a lock word, and each entry is its own allocation, so a word never
//! moves while a caller holds a reference to it and claims from it in place. Entries removed
//! while a caller still holds such a reference are freed only once its guard is dropped (epoch
//! reclamation), which is what lets the claim and the removal race on the word itself, as
//! [`slot`](super::slot) describes.
//!
//! The table is split into [`SHARDS`] maps so that reclamation can proceed a shard at a time
//! (see [`sweep`](super::sweep)); every shard shares one collector, so one guard serves a call
//! whichever shard it reaches. A key is hashed once, by the limiter's hasher: the shard comes
//! from bits of that hash that `papaya` does not use within a shard, and the shard's slot from
//! the same hash, passed through (see [`hashed`](super::hashed)).

use std::sync::Arc;

use papaya::HashMap;
use seize::Collector;

use super::hashed::{Hashed, PassThrough, Probe};
use super::slot::Word;

/// The number of shards: a sweep visits one at a time, so a call that sweeps pays for about
/// 1/64 of the table, while the constant cost of an empty shard stays small.
pub(crate) const SHARDS: usize = 64;

/// The guard a call holds while it uses references into the table.
pub(crate) type Guard<'t> = papaya::LocalGuard<'t>;

/// Keys and their state words, in [`SHARDS`] shards.
pub(crate) struct Table<K, W> {
    shards: Box<[HashMap<Hashed<K>, W, PassThrough>]>,
}

impl<K, W> Table<K, W>
where
    K: Eq + Clone + Send + Sync + 'static,
    W: Word,
{
    /// An empty table; shards allocate nothing until their first key.
    pub(crate) fn new() -> Self {
        let collector = Arc::new(Collector::new());
        let shards = (0..SHARDS)
            .map(|_| {
                HashMap::builder()
                    .hasher(PassThrough)
                    .shared_collector(Arc::clone(&collector))
                    .build()
            })
            .collect();
        Table { shards }
    }

    /// A guard for references into any shard.
    #[inline]
    pub(crate) fn pin(&self) -> Guard<'_> {
        self.shards[0].guard()
    }

    /// The shard holding keys of this hash. `papaya` takes a slot from the low bits of the
    /// hash and a tag from its top seven, so the shard comes from the bits in between.
    #[inline]
    fn shard_of(hash: u64) -> usize {
        // The mask keeps six bits, so the narrowing is exact.
        #[allow(clippy::cast_possible_truncation)]
        let shard = (hash >> 32) as usize & (SHARDS - 1);
        shard
    }

    /// `key`'s word, if the table holds one.
    #[inline]
    pub(crate) fn get<'g>(&self, hash: u64, key: &K, guard: &'g Guard<'_>) -> Option<&'g W> {
        self.shards[Self::shard_of(hash)].get(&Probe { hash, key }, guard)
    }

    /// Adds `word` for `key` (a clone) unless the table already holds one.
    pub(crate) fn insert(&self, hash: u64, key: &K, word: W, guard: &Guard<'_>) {
        let stored = Hashed {
            hash,
            key: key.clone(),
        };
        // Occupied means another call added the key first; the caller claims from its word.
        let _ = self.shards[Self::shard_of(hash)].try_insert(stored, word, guard);
    }

    /// Removes `key` if its word satisfies `remove`.
    pub(crate) fn remove_if(
        &self,
        hash: u64,
        key: &K,
        guard: &Guard<'_>,
        mut remove: impl FnMut(&W) -> bool,
    ) {
        let _ = self.shards[Self::shard_of(hash)].remove_if(
            &Probe { hash, key },
            |_, word| remove(word),
            guard,
        );
    }

    /// Removes every key of shard `shard` whose word fails `keep`; how many it removed.
    pub(crate) fn retain(
        &self,
        shard: usize,
        guard: &Guard<'_>,
        mut keep: impl FnMut(&W) -> bool,
    ) -> usize {
        let mut removed = 0;
        self.shards[shard].retain(
            |_, word| {
                let kept = keep(word);
                removed += usize::from(!kept);
                kept
            },
            guard,
        );
        removed
    }

    /// How many keys the table holds (exact when no call is in flight).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(HashMap::len).sum()
    }
}
