//! The keys' state words: one per key, claimed by the plain limiter's claim, in a table that
//! reclaims the words of ended windows as it is used.

use core::borrow::Borrow;
use core::fmt;
use core::hash::Hash;

use crate::budget::{Budget, Claim, Outcome};
use crate::event::RateLimiterEvent;
use crate::instant::Instant;
use crate::peek::Peek;
use crate::policy::Source;
use crate::state::{Cell, Packed, State, Wide};
use crate::sync::atomic::{AtomicU64, AtomicU128};
use crate::weight::Weight;

use super::own_limits::{KeyLimit, OwnLimits};
use super::slot::{Marks, Slot, Word};
use super::sweep::Sweep;
use super::table::{Pinned, SHARDS, Table};

/// A subscriber to a keyed limiter's events, told the key of each.
pub(crate) type KeyedListener<K> = Box<dyn Fn(&K, &RateLimiterEvent) + Send + Sync>;

/// The words of every key, for one [`Budget`], which holds the rules they are claimed by.
pub(crate) struct KeyedWords<K> {
    words: Words<K>,
    sweep: Sweep,
    /// The keys' own limits, outside their words' entries.
    limits: OwnLimits<K>,
}

/// The keys' words, in the encoding the budget picks (as a [`State`] does for the plain
/// limiter), with that encoding's codec.
enum Words<K> {
    Packed(Packed, Table<K, AtomicU64>),
    Wide(Wide, Table<K, AtomicU128>),
}

/// One key's word, as a step claims from it: the source a keyed limiter hands to the policy.
pub(crate) struct KeyWord<'a, K> {
    words: &'a KeyedWords<K>,
    /// The key's hash under the limiter's hasher, computed once per call.
    hash: u64,
    key: &'a K,
}

impl<K> KeyedWords<K> {
    /// The keys' own limits.
    pub(crate) fn limits(&self) -> &OwnLimits<K> {
        &self.limits
    }

    /// The limits, handed back to a builder.
    pub(crate) fn into_limits(self) -> OwnLimits<K> {
        self.limits
    }
}

impl<K> KeyedWords<K>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    /// No keys yet, for words claimed by `budget`, some keys having the limits of their own
    /// that `limits` gives.
    pub(crate) fn new(budget: &Budget, limits: OwnLimits<K>) -> KeyedWords<K> {
        // The words count up to the largest limit given at build, so that every such limit
        // fits; the codec's own word is never used: each key has its own, in the table.
        let largest = budget.limit().max(limits.largest());
        let words = match State::new(largest, budget.grid().last_index()) {
            State::Packed(codec) => Words::Packed(codec, Table::new()),
            State::Wide(codec) => Words::Wide(codec, Table::new()),
        };
        KeyedWords {
            words,
            sweep: Sweep::new(budget.grid()),
            limits,
        }
    }

    /// The limit in force for `key`: its own, or `budget`'s.
    #[inline]
    pub(crate) fn limit_of(&self, budget: &Budget, key: &K) -> u32 {
        self.limits
            .limit_of(key, || self.ceiling(), || budget.limit())
    }

    /// The largest limit the keys' words can count up to (see [`State::ceiling`]).
    pub(crate) fn ceiling(&self) -> u32 {
        match &self.words {
            Words::Packed(codec, _) => codec.ceiling(),
            Words::Wide(..) => u32::MAX,
        }
    }

    /// The word of `key`, whose hash is `hash`, as a source for the step.
    #[inline]
    pub(crate) fn word_of<'a>(&'a self, hash: u64, key: &'a K) -> KeyWord<'a, K> {
        KeyWord {
            words: self,
            hash,
            key,
        }
    }

    /// Claims a permit for `key` (whose hash is `hash`) from the window holding `now`; first,
    /// if a new window's sweeping has a turn left, this call takes it.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn claim<G: Weight>(
        &self,
        budget: &Budget,
        hash: u64,
        key: &K,
        now: Instant,
        weight: G,
    ) -> Claim {
        if self.sweep.is_due(now) {
            self.take_turn(budget, now);
        }
        match &self.words {
            Words::Packed(codec, table) => {
                self.claim_in(budget, codec, table, hash, key, now, weight)
            }
            Words::Wide(codec, table) => {
                self.claim_in(budget, codec, table, hash, key, now, weight)
            }
        }
    }

    /// The hot path: the key is in the table, with a live word. Anything else (a key not yet
    /// added, or a word reclaimed under this call) goes to [`claim_afresh`](Self::claim_afresh),
    /// kept out of line so that this path stays small.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    #[expect(
        clippy::too_many_arguments,
        reason = "the hot path's state, in registers"
    )]
    fn claim_in<P, W, G>(
        &self,
        budget: &Budget,
        codec: &P,
        table: &Table<K, W>,
        hash: u64,
        key: &K,
        now: Instant,
        weight: G,
    ) -> Claim
    where
        P: Cell<Raw = W::Raw>,
        W: Word,
        G: Weight,
    {
        let shard = table.pin(hash);
        let reclaimed = match shard.get(hash, key) {
            // A reference under papaya, an `Arc` under the model checkers' stand-in.
            Some(found) => {
                match self.claim_word::<P, W, G>(budget, codec, found.borrow(), key, now, weight) {
                    Some(claim) => return claim,
                    None => true,
                }
            }
            None => false,
        };
        self.claim_afresh(budget, codec, &shard, hash, key, now, reclaimed, weight)
    }

    /// Claims from a key's word, found in the table; `None` if the word has been reclaimed (the
    /// caller must look the key up again).
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn claim_word<P, W, G>(
        &self,
        budget: &Budget,
        codec: &P,
        word: &W,
        key: &K,
        now: Instant,
        weight: G,
    ) -> Option<Claim>
    where
        P: Cell<Raw = W::Raw>,
        W: Word,
        G: Weight,
    {
        let slot = Slot::new(
            codec,
            Marks::of(codec),
            word,
            self.sweep.horizon(),
            budget.grid().last_index(),
        );
        let limit = KeyLimit { words: self, key };
        let claim = budget.claim_cell(&slot, now, weight, limit);
        match claim.outcome() {
            Outcome::Full { wait: None, .. } if slot.is_reclaimed() => None,
            _ => Some(claim),
        }
    }

    /// Claims for a key that the hot path did not find live: if `reclaimed`, it found the key's
    /// word reclaimed, and first helps take that word out of the table. Then, until a claim
    /// lands on a live word: a key absent gets an empty word (unless another call just added
    /// one, or the claim takes no permit), claimed from as from any; a word reclaimed meanwhile
    /// is taken out again.
    #[cold]
    #[inline(never)]
    #[expect(
        clippy::too_many_arguments,
        reason = "the hot path's state, handed on whole"
    )]
    fn claim_afresh<P, W, G>(
        &self,
        budget: &Budget,
        codec: &P,
        shard: &Pinned<'_, K, W>,
        hash: u64,
        key: &K,
        now: Instant,
        mut reclaimed: bool,
        weight: G,
    ) -> Claim
    where
        P: Cell<Raw = W::Raw>,
        W: Word,
        G: Weight,
    {
        let marks = Marks::of(codec);
        loop {
            if reclaimed {
                shard.remove_if(hash, key, |word| word.load() == marks.reclaimed);
            }
            if let Some(found) = shard.get(hash, key) {
                if let Some(claim) =
                    self.claim_word::<P, W, G>(budget, codec, found.borrow(), key, now, weight)
                {
                    return claim;
                }
                reclaimed = true;
            } else {
                // A claim of no permit, or of more than the limit lets a window hold, is
                // decided on an empty count that is never added: an added one would record no
                // window, so no sweep would ever reclaim it and the key would stay past the
                // memory bound.
                if weight.takes_nothing() || weight.fits(self.limit_of(budget, key)).is_err() {
                    let empty = W::new(marks.empty);
                    // Full on an empty count: the weight is above the limit the claim read.
                    // Otherwise, unless it takes nothing, the limit was raised since it was
                    // read: claimed below on an added word, the empty one's claim forgotten.
                    if let Some(claim) =
                        self.claim_word::<P, W, G>(budget, codec, &empty, key, now, weight)
                        && (weight.takes_nothing()
                            || matches!(claim.outcome(), Outcome::Full { .. }))
                    {
                        return claim;
                    }
                }
                shard.insert(hash, key, W::new(marks.empty));
                reclaimed = false;
            }
        }
    }

    #[cold]
    fn take_turn(&self, budget: &Budget, now: Instant) {
        if let Some(turn) = self.sweep.take(budget.grid(), now) {
            self.reclaim(budget, turn.shard, turn.window);
        }
    }

    /// Removes the keys of `shard` whose window is before `window`; how many.
    fn reclaim(&self, budget: &Budget, shard: usize, window: u64) -> usize {
        self.sweep.raise_horizon(window);
        match &self.words {
            Words::Packed(codec, table) => self.reclaim_in(budget, codec, table, shard, window),
            Words::Wide(codec, table) => self.reclaim_in(budget, codec, table, shard, window),
        }
    }

    fn reclaim_in<P, W>(
        &self,
        budget: &Budget,
        codec: &P,
        table: &Table<K, W>,
        shard: usize,
        window: u64,
    ) -> usize
    where
        P: Cell<Raw = W::Raw>,
        W: Word,
    {
        let last_index = budget.grid().last_index();
        let marks = Marks::of(codec);
        let horizon = self.sweep.horizon();
        table.retain(shard, |word| {
            !Slot::new(codec, marks, word, horizon, last_index).reclaim_before(window)
        })
    }

    /// Removes every key whose window ended before the window holding `now`; how many.
    pub(crate) fn shrink(&self, budget: &Budget, now: Instant) -> usize {
        let window = budget.grid().index_of(now);
        (0..SHARDS)
            .map(|shard| self.reclaim(budget, shard, window))
            .sum()
    }

    /// What a claim for `key` (whose hash is `hash`) at `now` would find, without writing
    /// and without adding the key: a key absent, or whose word has been reclaimed (its window
    /// ended), answers as an empty window. Takes no sweeping turn.
    pub(crate) fn peek(&self, budget: &Budget, hash: u64, key: &K, now: Instant) -> Peek {
        match &self.words {
            Words::Packed(codec, table) => self.peek_in(budget, codec, table, hash, key, now),
            Words::Wide(codec, table) => self.peek_in(budget, codec, table, hash, key, now),
        }
    }

    fn peek_in<P, W>(
        &self,
        budget: &Budget,
        codec: &P,
        table: &Table<K, W>,
        hash: u64,
        key: &K,
        now: Instant,
    ) -> Peek
    where
        P: Cell<Raw = W::Raw>,
        W: Word,
    {
        let marks = Marks::of(codec);
        let shard = table.pin(hash);
        match shard.get(hash, key) {
            // A reference under papaya, an `Arc` under the model checkers' stand-in.
            Some(found) => self.look_word::<P, W>(budget, codec, found.borrow(), key, now),
            None => self.look_word::<P, W>(budget, codec, &W::new(marks.empty), key, now),
        }
    }

    /// What a claim at `now` would find in `word`, without writing.
    fn look_word<P, W>(&self, budget: &Budget, codec: &P, word: &W, key: &K, now: Instant) -> Peek
    where
        P: Cell<Raw = W::Raw>,
        W: Word,
    {
        let marks = Marks::of(codec);
        let slot = Slot::new(
            codec,
            marks,
            word,
            self.sweep.horizon(),
            budget.grid().last_index(),
        );
        // One load: a reclaimed word reads as full forever (so that a claim looks the key up
        // again), but its window has ended, and it holds what an absent key holds.
        let mut current = slot.load();
        if current == marks.reclaimed {
            current = marks.empty;
        }
        budget.look(&slot, current, now, KeyLimit { words: self, key })
    }

    /// How many keys hold a word.
    pub(crate) fn len(&self) -> usize {
        match &self.words {
            Words::Packed(_, table) => table.len(),
            Words::Wide(_, table) => table.len(),
        }
    }
}

impl<K> Source for KeyWord<'_, K>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    type Listener = KeyedListener<K>;

    #[inline]
    fn claim<G: Weight>(&self, budget: &Budget, now: Instant, weight: G) -> Outcome {
        self.words
            .claim(budget, self.hash, self.key, now, weight)
            .outcome()
    }

    /// Reads first: the word is found only after the sweep, which needs the reading, has had
    /// its turn.
    #[inline]
    fn claim_reading<G: Weight>(
        &self,
        budget: &Budget,
        read: impl FnOnce() -> Instant,
        weight: G,
    ) -> (Instant, Outcome) {
        let now = read();
        (now, self.claim(budget, now, weight))
    }

    #[inline]
    fn notify(&self, listener: &KeyedListener<K>, event: &RateLimiterEvent) {
        listener(self.key, event);
    }
}

impl<K> fmt::Debug for KeyedWords<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let encoding = match self.words {
            Words::Packed(..) => "packed u64",
            Words::Wide(..) => "wide u128",
        };
        f.debug_struct("KeyedWords")
            .field("encoding", &encoding)
            .finish_non_exhaustive()
    }
}
