//! A planted keyed limiter's table: each key's count in a slot of its own, in shards swept one
//! at a time over the first calls of each new window, as `fixed-window` documents its keyed
//! limiter's reclamation; written independently of it, plainly, with a lock per shard.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};

use fixed_window_spec::{Count, Grid};

use crate::keyed::planted_bug::KeyedPlantedBug;
use crate::sync::Mutex;

/// Shards, and so turns in each round of sweeping.
pub(crate) const SHARDS: usize = 64;

/// One key's count; `None` once a sweep has reclaimed it, after which it takes no claim.
#[derive(Debug)]
pub(crate) struct Slot(Mutex<Option<Count>>);

impl Slot {
    pub(crate) fn load(&self) -> Option<Count> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces `current` with `new` if the slot still holds `current`; whether it did.
    pub(crate) fn compare_exchange(&self, current: Option<Count>, new: Option<Count>) -> bool {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let same = *held == current;
        if same {
            *held = new;
        }
        same
    }
}

/// Where sweeping stands: the round's window, the turns it has left, the reading from which a
/// call looks for a turn, the next shard, and the horizon (the latest window swept for, where
/// a key added anew starts).
#[derive(Debug)]
struct Rounds {
    round: u128,
    left: usize,
    due: u128,
    cursor: usize,
    horizon: u128,
}

/// The keys' slots in [`SHARDS`] shards, and the sweeping schedule.
#[derive(Debug)]
pub(crate) struct Table {
    shards: Vec<Mutex<BTreeMap<u64, Arc<Slot>>>>,
    rounds: Mutex<Rounds>,
}

/// Where window `index` ends; `u128::MAX`, which no reading reaches, if it never does.
fn end(grid: &Grid, index: u128) -> u128 {
    grid.end(index).unwrap_or(u128::MAX)
}

fn shard_of(key: u64) -> usize {
    // Fibonacci hashing: the top six bits of the product, so keys in a row spread out.
    usize::try_from(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58).unwrap_or(0)
}

impl Table {
    /// No keys; the first round is due when window 0 ends.
    pub(crate) fn new(grid: &Grid) -> Table {
        Table {
            shards: (0..SHARDS).map(|_| Mutex::new(BTreeMap::new())).collect(),
            rounds: Mutex::new(Rounds {
                round: 0,
                left: 0,
                due: end(grid, 0),
                cursor: 0,
                horizon: 0,
            }),
        }
    }

    fn shard(&self, key: u64) -> impl core::ops::DerefMut<Target = BTreeMap<u64, Arc<Slot>>> + '_ {
        self.shards[shard_of(key)]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `key`'s slot, added (nothing used, in the horizon's window) if the table has none; and
    /// whether it was added now.
    pub(crate) fn slot(&self, key: u64) -> (Arc<Slot>, bool) {
        let horizon = self
            .rounds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .horizon;
        let mut shard = self.shard(key);
        let mut added = false;
        let slot = shard.entry(key).or_insert_with(|| {
            added = true;
            Arc::new(Slot(Mutex::new(Some(Count::stored(horizon, 0)))))
        });
        (Arc::clone(slot), added)
    }

    /// `key`'s count as a claim would start from, without adding the key: its slot's, or, for
    /// a key the table does not hold or whose slot was reclaimed, nothing used in the
    /// horizon's window.
    pub(crate) fn count_of(&self, key: u64) -> Count {
        let horizon = self
            .rounds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .horizon;
        let slot = self.shard(key).get(&key).map(Arc::clone);
        slot.and_then(|slot| slot.load())
            .unwrap_or(Count::stored(horizon, 0))
    }

    /// Takes `key`'s reclaimed `slot` out of the table, unless it was replaced already.
    pub(crate) fn remove_reclaimed(&self, key: u64, slot: &Arc<Slot>) {
        let mut shard = self.shard(key);
        if shard.get(&key).is_some_and(|held| Arc::ptr_eq(held, slot)) {
            shard.remove(&key);
        }
    }

    /// How many keys the table holds.
    pub(crate) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.lock().unwrap_or_else(PoisonError::into_inner).len())
            .sum()
    }

    /// A call reading `now` takes its turn at sweeping, if its window's round has one left
    /// (starting that round if the reading is in a later window than the last round's).
    pub(crate) fn take_turn(&self, grid: &Grid, now: u128, bug: KeyedPlantedBug) {
        let (shard, window) = {
            let mut rounds = self.rounds.lock().unwrap_or_else(PoisonError::into_inner);
            if now < rounds.due {
                return;
            }
            let index = grid.index_of(now);
            if index > rounds.round {
                rounds.round = index;
                rounds.left = SHARDS;
            }
            if rounds.left == 0 {
                rounds.due = end(grid, rounds.round);
                return;
            }
            rounds.left -= 1;
            if rounds.left == 0 {
                rounds.due = end(grid, rounds.round);
            }
            let shard = rounds.cursor % SHARDS;
            rounds.cursor += 1;
            rounds.horizon = rounds.horizon.max(rounds.round);
            (shard, rounds.round)
        };
        self.sweep(shard, window, bug);
    }

    /// Removes the keys of `shard` whose window is before `window`.
    fn sweep(&self, shard: usize, window: u128, bug: KeyedPlantedBug) {
        if bug == KeyedPlantedBug::NeverReclaims {
            // The bug: nothing is ever taken out.
            return;
        }
        let mut keys = self.shards[shard]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        keys.retain(|_, slot| {
            let seen = slot.load();
            let Some(count) = seen else {
                return false;
            };
            let ended = match bug {
                // The bug: the round's own window, still running, counts as ended.
                KeyedPlantedBug::ReclaimLive => count.index() <= window,
                _ => count.index() < window,
            };
            if !ended {
                return true;
            }
            match bug {
                // The bug: removed as it was read, its slot left unmarked, so a claim on what
                // a caller read before still lands in the removed slot.
                KeyedPlantedBug::ClaimLostToRemoval => false,
                // A claim made since the read keeps the key.
                _ => !slot.compare_exchange(seen, None),
            }
        });
    }
}
