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
//! (see [`sweep`](super::sweep)); every shard shares one collector, so a thread keeps one set
//! of reclamation state whichever shards it reaches. A key is hashed once, by the limiter's
//! hasher: the shard comes from bits of that hash that `papaya` does not use within a shard,
//! and the shard's slot from the same hash, passed through (see [`hashed`](super::hashed)).

use std::sync::Arc;

use papaya::HashMap;
use seize::Collector;

use super::hashed::{Hashed, PassThrough, Probe};
use super::slot::Word;

/// The number of shards: a sweep visits one at a time, so a call that sweeps pays for about
/// 1/64 of the table, while the constant cost of an empty shard stays small.
pub(crate) const SHARDS: usize = 64;

/// One shard of the table, pinned: a guard held for as long as a call uses references into it.
///
/// A call touches one key, so one shard: pinning that shard's map directly (rather than
/// passing a guard to each operation) spares every operation `papaya`'s check that the guard
/// belongs to the map's collector.
pub(crate) struct Pinned<'t, K, W> {
    map: papaya::HashMapRef<'t, Hashed<K>, W, PassThrough, papaya::LocalGuard<'t>>,
}

/// Keys and their state words, in [`SHARDS`] shards.
pub(crate) struct Table<K, W> {
    /// A fixed-size array, so that choosing a shard by six bits of the hash needs no bounds
    /// check.
    shards: Box<[HashMap<Hashed<K>, W, PassThrough>; SHARDS]>,
}

impl<K, W> Table<K, W>
where
    K: Eq + Clone + Send + Sync + 'static,
    W: Word,
{
    /// An empty table; shards allocate nothing until their first key.
    pub(crate) fn new() -> Self {
        let collector = Arc::new(Collector::new());
        let shards: Box<[_; SHARDS]> = core::array::from_fn(|_| {
            HashMap::builder()
                .hasher(PassThrough)
                .shared_collector(Arc::clone(&collector))
                .build()
        })
        .into();
        Table { shards }
    }

    /// The shard holding keys of this hash, pinned.
    #[inline]
    pub(crate) fn pin(&self, hash: u64) -> Pinned<'_, K, W> {
        Pinned {
            map: self.shards[Self::shard_of(hash)].pin(),
        }
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

    /// Removes every key of shard `shard` whose word fails `keep`; how many it removed.
    pub(crate) fn retain(&self, shard: usize, mut keep: impl FnMut(&W) -> bool) -> usize {
        let mut removed = 0;
        self.shards[shard].pin().retain(|_, word| {
            let kept = keep(word);
            removed += usize::from(!kept);
            kept
        });
        removed
    }

    /// How many keys the table holds (exact when no call is in flight).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(HashMap::len).sum()
    }
}

impl<K, W> Pinned<'_, K, W>
where
    K: Eq + Clone + Send + Sync + 'static,
    W: Word,
{
    /// `key`'s word, if the shard holds one.
    #[inline]
    pub(crate) fn get(&self, hash: u64, key: &K) -> Option<&W> {
        self.map.get(&Probe { hash, key })
    }

    /// Adds `word` for `key` (a clone) unless the shard already holds one.
    pub(crate) fn insert(&self, hash: u64, key: &K, word: W) {
        let stored = Hashed {
            hash,
            key: key.clone(),
        };
        // Occupied means another call added the key first; the caller claims from its word.
        let _ = self.map.try_insert(stored, word);
    }

    /// Removes `key` if its word satisfies `remove`.
    pub(crate) fn remove_if(&self, hash: u64, key: &K, mut remove: impl FnMut(&W) -> bool) {
        let _ = self
            .map
            .remove_if(&Probe { hash, key }, |_, word| remove(word));
    }
}
