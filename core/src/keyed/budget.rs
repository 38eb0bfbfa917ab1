//! The keyed budget: one state word per key, claimed by the plain limiter's loop, in a table
//! that reclaims the words of ended windows as it is used.

use core::borrow::Borrow;
use core::fmt;
use core::num::NonZeroU32;
use core::time::Duration;

use crate::attempt::Attempt;
use crate::backoff::Backoff;
use crate::budget::Rules;
use crate::instant::Instant;
use crate::state::{Cell, Packed, State, Wide};
use crate::sync::atomic::{AtomicU64, AtomicU128};

use super::slot::{Marks, Slot, Word};
use super::sweep::Sweep;
use super::table::{SHARDS, Table};

/// The keys' words, in the encoding the configuration picks (as a [`State`] does for the plain
/// limiter), with that encoding's codec.
enum Words<K> {
    Packed(Packed, Table<K, AtomicU64>),
    Wide(Wide, Table<K, AtomicU128>),
}

/// `limit` permits per window of the grid, for each key.
pub(crate) struct KeyedBudget<K> {
    rules: Rules,
    words: Words<K>,
    sweep: Sweep,
}

impl<K> KeyedBudget<K>
where
    K: Eq + Clone + Send + Sync + 'static,
{
    pub(crate) fn new(
        origin: Instant,
        period: Duration,
        limit: NonZeroU32,
        backoff: Backoff,
    ) -> KeyedBudget<K> {
        let rules = Rules::new(origin, period, limit, backoff);
        // The codec's own word is never used: each key has its own, in the table.
        let words = match State::new(limit.get(), rules.grid().last_index()) {
            State::Packed(codec) => Words::Packed(codec, Table::new()),
            State::Wide(codec) => Words::Wide(codec, Table::new()),
        };
        KeyedBudget {
            sweep: Sweep::new(rules.grid()),
            rules,
            words,
        }
    }

    pub(crate) fn backoff(&self) -> Backoff {
        self.rules.backoff()
    }

    /// One acquire step for `key` (whose hash is `hash`) at `now`, for a call whose wait must end
    /// by `deadline`; first, if a new window's sweeping has a turn left, this call takes it.
    #[inline]
    pub(crate) fn attempt(&self, hash: u64, key: &K, now: Instant, deadline: Instant) -> Attempt {
        if self.sweep.is_due(now) {
            self.take_turn(now);
        }
        match &self.words {
            Words::Packed(codec, table) => self.attempt_in(codec, table, hash, key, now, deadline),
            Words::Wide(codec, table) => self.attempt_in(codec, table, hash, key, now, deadline),
        }
    }

    #[inline]
    fn attempt_in<P, W>(
        &self,
        codec: &P,
        table: &Table<K, W>,
        hash: u64,
        key: &K,
        now: Instant,
        deadline: Instant,
    ) -> Attempt
    where
        P: Cell<Raw = W::Raw>,
        W: Word,
    {
        let grid = self.rules.grid();
        let limit = self.rules.limit();
        let marks = Marks::of(codec);
        let guard = table.pin();
        loop {
            if let Some(found) = table.get(hash, key, &guard) {
                // A reference under papaya, an `Arc` under the model checkers' stand-in.
                let word: &W = found.borrow();
                let slot = Slot::new(
                    codec,
                    marks,
                    word,
                    self.sweep.horizon(),
                    grid.last_index(),
                    limit,
                );
                match self.rules.attempt_on(&slot, now, deadline) {
                    // The word was reclaimed: help take it out of the table, then look again.
                    Attempt::Rejected {
                        retry_after: Duration::MAX,
                    } if slot.is_reclaimed() => {
                        table.remove_if(hash, key, &guard, |word| word.load() == marks.reclaimed);
                    }
                    attempt => return attempt,
                }
            } else {
                // The key's first call, or its first since its word was reclaimed: add an empty
                // word (unless another call just added one), then claim from it as from any.
                table.insert(hash, key, W::new(marks.empty), &guard);
            }
        }
    }

    #[cold]
    fn take_turn(&self, now: Instant) {
        if let Some(turn) = self.sweep.take(self.rules.grid(), now) {
            self.reclaim(turn.shard, turn.window);
        }
    }

    /// Removes the keys of `shard` whose window is before `window`; how many.
    fn reclaim(&self, shard: usize, window: u64) -> usize {
        self.sweep.raise_horizon(window);
        match &self.words {
            Words::Packed(codec, table) => self.reclaim_in(codec, table, shard, window),
            Words::Wide(codec, table) => self.reclaim_in(codec, table, shard, window),
        }
    }

    fn reclaim_in<P, W>(&self, codec: &P, table: &Table<K, W>, shard: usize, window: u64) -> usize
    where
        P: Cell<Raw = W::Raw>,
        W: Word,
    {
        let last_index = self.rules.grid().last_index();
        let limit = self.rules.limit();
        let marks = Marks::of(codec);
        let horizon = self.sweep.horizon();
        let guard = table.pin();
        table.retain(shard, &guard, |word| {
            !Slot::new(codec, marks, word, horizon, last_index, limit).reclaim_before(window)
        })
    }

    /// Removes every key whose window ended before the window holding `now`; how many.
    pub(crate) fn shrink(&self, now: Instant) -> usize {
        let window = self.rules.grid().index_of(now);
        (0..SHARDS).map(|shard| self.reclaim(shard, window)).sum()
    }

    /// How many keys hold a word.
    pub(crate) fn len(&self) -> usize {
        match &self.words {
            Words::Packed(_, table) => table.len(),
            Words::Wide(_, table) => table.len(),
        }
    }

    /// Compare-and-set attempts lost to another caller, over all keys.
    #[cfg(feature = "stats")]
    pub(crate) fn cas_retries(&self) -> u64 {
        self.rules.cas_retries()
    }
}

impl<K> fmt::Debug for KeyedBudget<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let encoding = match self.words {
            Words::Packed(..) => "packed u64",
            Words::Wide(..) => "wide u128",
        };
        f.debug_struct("KeyedBudget")
            .field("rules", &self.rules)
            .field("encoding", &encoding)
            .finish_non_exhaustive()
    }
}
