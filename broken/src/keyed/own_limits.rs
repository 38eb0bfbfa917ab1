//! Limits of their own for some keys of a planted keyed limiter, as `KeyedRateLimiter`'s
//! `set_key_limit` and `clear_key_limit` give them (`docs/rules.md`: Limits per key): the
//! limiter's limit is every other key's.

use std::collections::BTreeMap;

use fixed_window::ConfigError;

use crate::sync::Mutex;

/// The keys' own limits, under one lock: a change is rare, and the lock orders it with every
/// claim that reads it after loading its count.
pub(super) struct OwnLimits(Mutex<BTreeMap<u64, u32>>);

impl OwnLimits {
    /// No key has a limit of its own.
    pub(super) fn new() -> OwnLimits {
        OwnLimits(Mutex::new(BTreeMap::new()))
    }

    /// `key`'s own limit, if it has one.
    pub(super) fn of(&self, key: u64) -> Option<u32> {
        self.lock().get(&key).copied()
    }

    /// Gives `key` the limit `limit`, or takes its own away (`None`).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] for `Some(0)`; the key's limit is then unchanged.
    pub(super) fn set(&self, key: u64, limit: Option<u32>) -> Result<(), ConfigError> {
        let mut own = self.lock();
        match limit {
            Some(0) => return Err(ConfigError::ZeroLimit),
            Some(limit) => own.insert(key, limit),
            None => own.remove(&key),
        };
        Ok(())
    }

    fn lock(&self) -> impl core::ops::DerefMut<Target = BTreeMap<u64, u32>> + '_ {
        // Every change is one insert or remove: a poisoned map is still whole.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
