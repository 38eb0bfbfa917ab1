//! Limits of their own for some keys: a map given at build and changed live, and a function of
//! the key; every other key has the limiter's limit, its default.
//!
//! A key's own limit is not stored in its state word's entry, which stays as small as without
//! one: it is looked up on every round of the claim, after the word is loaded, as the
//! limiter's limit is (see `Budget::round`). A limiter that gives no key a limit of its own
//! pays one atomic load a round for it, and takes no lock: under callgrind, per call on the
//! manual clock with 1,000 keys (`benches/examples/keyed_hot_path.rs`), the keyed permit took
//! 218 instructions against 211 before own limits, the rejection 265 against 249. The
//! ceiling a rule's answer is held to is worked out only when a rule answers: worked out for
//! every claim, it cost the permit 8 instructions more (226) and the rejection 2 (267).

use core::fmt;
use core::hash::Hash;
use core::num::NonZeroU32;
use std::collections::HashMap;

use crate::budget::{Budget, LimitOf};
use crate::error::ConfigError;
use crate::sync::Mutex;
use crate::sync::atomic::{AtomicU32, Ordering};

use super::hasher::KeyHasher;
use super::words::KeyedWords;

/// A rule giving some keys a limit of their own: `None` leaves a key the default.
pub(crate) type LimitRule<K> = Box<dyn Fn(&K) -> Option<NonZeroU32> + Send + Sync>;

/// The ordering of `active`'s loads and stores: sequentially consistent, for the argument of
/// `Budget::round` (a round reads the limit after loading the word, and a change is stored
/// before any claim that reads it).
const ACTIVE: Ordering = Ordering::SeqCst;

/// The keys' own limits, as a keyed limiter holds them.
pub(crate) struct OwnLimits<K> {
    /// Limits set for single keys, at build or by `set_key_limit`. A lock, not a lock-free
    /// map: changes are rare, and a limiter without own limits never takes it (`active`).
    map: Mutex<HashMap<K, u32, KeyHasher>>,
    /// A function of the key, asked when the map has no limit for it.
    rule: Option<LimitRule<K>>,
    /// Non-zero while some key may have a limit of its own (the map is not empty, or there is
    /// a rule): while it is zero, a round reads the default without taking the lock. Written
    /// under the lock, after the map.
    active: AtomicU32,
}

impl<K> OwnLimits<K> {
    /// No key has a limit of its own.
    pub(crate) fn new() -> OwnLimits<K> {
        OwnLimits {
            map: Mutex::new(HashMap::with_hasher(KeyHasher::default())),
            rule: None,
            active: AtomicU32::new(0),
        }
    }

    /// Asks `rule` for the limit of every key the map has none for.
    pub(crate) fn set_rule(&mut self, rule: LimitRule<K>) {
        self.rule = Some(rule);
        self.active.store(1, ACTIVE);
    }
}

impl<K: Hash + Eq> OwnLimits<K> {
    /// Gives `key` the limit `limit`, unchecked against the ceiling (the builder's entries,
    /// which the encoding is then chosen to hold).
    pub(crate) fn insert(&mut self, key: K, limit: NonZeroU32) {
        self.lock().insert(key, limit.get());
        self.active.store(1, ACTIVE);
    }

    /// The largest limit the map holds, 0 if none: the encoding of the keys' words must count
    /// up to it.
    pub(crate) fn largest(&self) -> u32 {
        self.lock().values().copied().max().unwrap_or(0)
    }

    /// Puts `limit` in force for `key`, on words that count up to `ceiling`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0, [`ConfigError::LimitAboveCeiling`] if it is
    /// above `ceiling`; the key's limit is then unchanged.
    pub(crate) fn set(&self, key: K, limit: u32, ceiling: u32) -> Result<(), ConfigError> {
        if limit == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        if limit > ceiling {
            return Err(ConfigError::LimitAboveCeiling { limit, ceiling });
        }
        let mut map = self.lock();
        map.insert(key, limit);
        self.active.store(1, ACTIVE);
        Ok(())
    }

    /// Takes `key`'s limit out of the map; the limit it had there.
    pub(crate) fn remove(&self, key: &K) -> Option<u32> {
        let mut map = self.lock();
        let removed = map.remove(key);
        if map.is_empty() && self.rule.is_none() {
            self.active.store(0, ACTIVE);
        }
        removed
    }

    /// The limit in force for `key`: the map's, else the rule's (at most what `ceiling`
    /// says the words count up to), else `default`. The ceiling is worked out only for a
    /// rule's answer, off the path of a limiter without own limits.
    #[inline]
    pub(crate) fn limit_of(
        &self,
        key: &K,
        ceiling: impl FnOnce() -> u32,
        default: impl FnOnce() -> u32,
    ) -> u32 {
        if self.active.load(ACTIVE) == 0 {
            return default();
        }
        self.own(key, ceiling).unwrap_or_else(default)
    }

    /// The key's own limit, if it has one.
    #[cold]
    fn own(&self, key: &K, ceiling: impl FnOnce() -> u32) -> Option<u32> {
        if let Some(&limit) = self.lock().get(key) {
            return Some(limit);
        }
        self.rule
            .as_ref()
            .and_then(|rule| rule(key))
            .map(|limit| limit.get().min(ceiling()))
    }

    /// The map, whatever a panic while it was held left: every write is one insert or
    /// remove, so a poisoned map is still whole.
    fn lock(&self) -> crate::sync::MutexGuard<'_, HashMap<K, u32, KeyHasher>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One key's limit, read by each round of its claim.
pub(crate) struct KeyLimit<'a, K> {
    pub(crate) words: &'a KeyedWords<K>,
    pub(crate) key: &'a K,
}

impl<K> Clone for KeyLimit<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for KeyLimit<'_, K> {}

impl<K: Hash + Eq + Clone + Send + Sync + 'static> LimitOf for KeyLimit<'_, K> {
    #[inline]
    fn load(self, budget: &Budget) -> u32 {
        self.words.limit_of(budget, self.key)
    }
}

impl<K> fmt::Debug for OwnLimits<K> {
    // Counts only: keys need not be `Debug`, and a tenant's key may not belong in a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let own = self
            .map
            .lock()
            .map_or_else(|poisoned| poisoned.into_inner().len(), |map| map.len());
        f.debug_struct("OwnLimits")
            .field("own", &own)
            .field("rule", &self.rule.is_some())
            .field("active", &self.active.load(Ordering::Relaxed))
            .finish()
    }
}
