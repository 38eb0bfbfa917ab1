//! The concurrent maps considered for the keyed limiter's table, each driven the way the limiter
//! drives its table, so that choosing one is a measurement.
//!
//! A keyed limiter keeps one state word per key. Its hot path finds the word of a key that is
//! already there and claims from it with a compare-and-set, in place; its cold paths add a key
//! (the first call of a new key) and remove one (a key whose window has ended). Every
//! candidate here stores `u64` keys and `AtomicU64` words, hashed with the same hasher, so the
//! figures compare the tables and nothing else.

use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The hasher every candidate uses, so the comparison is of the tables alone.
pub type Hasher = foldhash::fast::RandomState;

/// A concurrent table of `u64` keys and `AtomicU64` words, as the keyed limiter uses one.
///
/// # Examples
///
/// ```
/// use fixed_window_benches::map_candidates::{Papaya, Table};
///
/// let table = Papaya::filled(10);
/// assert!(table.claim(3));
/// assert!(!table.claim(10));
/// table.replace(3, 10);
/// assert!(table.claim(10) && !table.claim(3));
/// ```
pub trait Table: Sync {
    /// The name criterion reports it under.
    const NAME: &'static str;

    /// A table holding keys `0..keys`, each with the word 0.
    fn filled(keys: u64) -> Self;

    /// The hot path: finds `key`'s word and claims from it with one compare-and-set, in place.
    /// Whether the key was there.
    fn claim(&self, key: u64) -> bool;

    /// The cold paths: removes `old` and adds `new`, as a key whose window ended leaves and a
    /// new one arrives.
    fn replace(&self, old: u64, new: u64);
}

/// Claims from `word` once, as the limiter does when it finds room.
#[inline]
fn cas(word: &AtomicU64) {
    let current = word.load(Ordering::Acquire);
    let _ = word.compare_exchange(current, current + 1, Ordering::AcqRel, Ordering::Acquire);
}

/// `papaya::HashMap`: lock-free reads under an epoch guard; each entry is its own allocation,
/// so a word never moves while a guard holds a reference to it.
pub type Papaya = papaya::HashMap<u64, AtomicU64, Hasher>;

impl Table for Papaya {
    const NAME: &'static str = "papaya";

    fn filled(keys: u64) -> Self {
        let map = papaya::HashMap::with_hasher(Hasher::default());
        {
            let pinned = map.pin();
            for key in 0..keys {
                pinned.insert(key, AtomicU64::new(0));
            }
        }
        map
    }

    #[inline]
    fn claim(&self, key: u64) -> bool {
        let pinned = self.pin();
        pinned.get(&key).map(cas).is_some()
    }

    fn replace(&self, old: u64, new: u64) {
        let pinned = self.pin();
        pinned.remove(&old);
        pinned.insert(new, AtomicU64::new(0));
    }
}

/// `scc::HashMap`: entries stored inline in buckets; a read holds the bucket's shared lock while
/// the word is claimed.
pub type SccMap = scc::HashMap<u64, AtomicU64, Hasher>;

impl Table for SccMap {
    const NAME: &'static str = "scc-hashmap";

    fn filled(keys: u64) -> Self {
        let map = scc::HashMap::with_hasher(Hasher::default());
        for key in 0..keys {
            let _ = map.insert_sync(key, AtomicU64::new(0));
        }
        map
    }

    #[inline]
    fn claim(&self, key: u64) -> bool {
        self.read_sync(&key, |_, word| cas(word)).is_some()
    }

    fn replace(&self, old: u64, new: u64) {
        let _ = self.remove_sync(&old);
        let _ = self.insert_sync(new, AtomicU64::new(0));
    }
}

/// `scc::HashIndex`: lock-free reads under an epoch guard. Its values may be cloned when the
/// index reorganises, so an in-place word needs its own allocation (`Arc`) to stay the one
/// word every caller claims from.
pub type SccIndex = scc::HashIndex<u64, Arc<AtomicU64>, Hasher>;

impl Table for SccIndex {
    const NAME: &'static str = "scc-hashindex";

    fn filled(keys: u64) -> Self {
        let map = scc::HashIndex::with_hasher(Hasher::default());
        for key in 0..keys {
            let _ = map.insert_sync(key, Arc::new(AtomicU64::new(0)));
        }
        map
    }

    #[inline]
    fn claim(&self, key: u64) -> bool {
        self.peek_with(&key, |_, word| cas(word)).is_some()
    }

    fn replace(&self, old: u64, new: u64) {
        let _ = self.remove_sync(&old);
        let _ = self.insert_sync(new, Arc::new(AtomicU64::new(0)));
    }
}

/// `dashmap::DashMap` (governor's keyed store): shards of `hashbrown` tables, each behind a
/// reader-writer lock that a read takes while the word is claimed.
pub type Dash = dashmap::DashMap<u64, AtomicU64, Hasher>;

impl Table for Dash {
    const NAME: &'static str = "dashmap";

    fn filled(keys: u64) -> Self {
        let map = dashmap::DashMap::with_hasher(Hasher::default());
        for key in 0..keys {
            map.insert(key, AtomicU64::new(0));
        }
        map
    }

    #[inline]
    fn claim(&self, key: u64) -> bool {
        self.get(&key).map(|word| cas(&word)).is_some()
    }

    fn replace(&self, old: u64, new: u64) {
        self.remove(&old);
        self.insert(new, AtomicU64::new(0));
    }
}
