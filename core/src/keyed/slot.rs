//! One key's state word, and the protocol that creates and reclaims it.
//!
//! A key's word is the plain limiter's state word ((window index, used), in the encoding the
//! configuration picks), stored in the table as a bare atomic, so the claim loop is the same
//! code for every key and for the plain limiter. What is new is how a word begins and ends:
//!
//! - A live word always has `used ≥ 1`, since every claim adds one. So the encodings of
//!   (0, 0) and (1, 0) never appear on a live word, and are free to mean **empty** and
//!   **reclaimed**.
//! - A key is added with an empty word, and its first permit is claimed from it by the same
//!   loop as every other: to the loop an empty word reads as the horizon's window, unused (see
//!   [`Sweep`](super::sweep::Sweep)). The horizon is read *after* the empty word is found in
//!   the table, so after every removal that the word's insertion followed: a key re-created
//!   after its word was reclaimed never counts in a window the reclaimed word counted in, even
//!   when the caller's reading is older than that word (a reading taken before the key was
//!   last added, say, or a clock that stepped back).
//! - A sweep reclaims a word only by compare-and-set from the exact word it found to have
//!   ended. A claim made in between changes the word, the compare-and-set fails, and the key
//!   stays. Once reclaimed, a word never changes again: every later claim on it fails, and the
//!   caller looks the key up afresh (adding it anew once the reclaimed word is out of the
//!   table). So no claim is ever lost to a removal. Empty words are never reclaimed: their
//!   inserter is about to claim from them.
//! - To the claim loop a reclaimed word reads as the last window of the timeline, full: the
//!   loop then answers `Rejected` with `retry_after` of `Duration::MAX` without writing (its
//!   count is `u32::MAX`, full under any limit `set_limit` can set), which
//!   is how the keyed limiter learns it must look again. A genuine last window never ends, so
//!   it is never reclaimed, and the two cannot be confused.

use crate::state::{Cell, FAILURE, SUCCESS};
use crate::sync::atomic::{AtomicU64, AtomicU128, Ordering};

/// A bare atomic state word as the table stores it: 64 bits for the packed encoding, 128 for
/// the wide one.
pub(crate) trait Word: Send + Sync + 'static {
    /// The word as loaded.
    type Raw: Copy + Eq;

    fn new(raw: Self::Raw) -> Self;

    fn load(&self) -> Self::Raw;

    /// Replaces `current` with `new`; on failure (which may be spurious) returns the word found.
    fn compare_exchange(&self, current: Self::Raw, new: Self::Raw) -> Result<(), Self::Raw>;
}

impl Word for AtomicU64 {
    type Raw = u64;

    fn new(raw: u64) -> Self {
        AtomicU64::new(raw)
    }

    #[inline]
    fn load(&self) -> u64 {
        AtomicU64::load(self, FAILURE)
    }

    #[inline]
    fn compare_exchange(&self, current: u64, new: u64) -> Result<(), u64> {
        self.compare_exchange_weak(current, new, SUCCESS, FAILURE)
            .map(drop)
    }
}

impl Word for AtomicU128 {
    type Raw = u128;

    fn new(raw: u128) -> Self {
        AtomicU128::new(raw)
    }

    #[inline]
    fn load(&self) -> u128 {
        AtomicU128::load(self, FAILURE)
    }

    #[inline]
    fn compare_exchange(&self, current: u128, new: u128) -> Result<(), u128> {
        self.compare_exchange_weak(current, new, SUCCESS, FAILURE)
            .map(drop)
    }
}

/// The raw values of the two states no live word holds.
#[derive(Clone, Copy)]
pub(crate) struct Marks<R> {
    /// (0, 0): a key just added, whose first permit is still to be claimed.
    pub(crate) empty: R,
    /// (1, 0): a key whose word a sweep has reclaimed.
    pub(crate) reclaimed: R,
}

impl<R> Marks<R> {
    /// The marks in `codec`'s encoding.
    pub(crate) fn of<P: Cell<Raw = R>>(codec: &P) -> Marks<R> {
        Marks {
            empty: codec.encode(0, 0),
            reclaimed: codec.encode(1, 0),
        }
    }
}

/// One key's word seen through the configuration's encoding, as the claim loop sees a state
/// word.
pub(crate) struct Slot<'a, P: Cell, W> {
    codec: &'a P,
    marks: Marks<P::Raw>,
    word: &'a W,
    /// The sweep's horizon: the earliest window an empty word may start in.
    horizon: &'a AtomicU64,
    /// The last window of the timeline, which a reclaimed word reads as.
    last_index: u64,
}

impl<'a, P: Cell<Raw = W::Raw>, W: Word> Slot<'a, P, W> {
    /// `word` encoded as `codec` encodes, for a limiter whose last window is `last_index`,
    /// with the sweep's `horizon`.
    #[inline]
    pub(crate) fn new(
        codec: &'a P,
        marks: Marks<P::Raw>,
        word: &'a W,
        horizon: &'a AtomicU64,
        last_index: u64,
    ) -> Self {
        Slot {
            codec,
            marks,
            word,
            horizon,
            last_index,
        }
    }

    /// Whether the word has been reclaimed; once it has, it stays so.
    #[inline]
    pub(crate) fn is_reclaimed(&self) -> bool {
        self.word.load() == self.marks.reclaimed
    }

    /// Reclaims the word if its window is before `current` (the window of a reading some call
    /// has made, so the word's window has ended): one compare-and-set from the exact word
    /// found. Whether the word is now reclaimed (by this call or an earlier one).
    pub(crate) fn reclaim_before(&self, current: u64) -> bool {
        let found = self.word.load();
        if found == self.marks.reclaimed {
            return true;
        }
        if found == self.marks.empty {
            return false;
        }
        let (index, _) = self.codec.decode(found);
        // A failed (or spurious) compare-and-set keeps the key: a claim may have just moved
        // it on, and a later sweep will look again.
        index < current
            && self
                .word
                .compare_exchange(found, self.marks.reclaimed)
                .is_ok()
    }
}

impl<P: Cell<Raw = W::Raw>, W: Word> Cell for Slot<'_, P, W> {
    type Raw = W::Raw;

    #[inline]
    fn load(&self) -> W::Raw {
        self.word.load()
    }

    #[inline]
    fn compare_exchange(&self, current: W::Raw, new: W::Raw) -> Result<(), W::Raw> {
        self.word.compare_exchange(current, new)
    }

    #[inline]
    fn decode(&self, raw: W::Raw) -> (u64, u32) {
        if raw == self.marks.empty {
            (self.horizon.load(Ordering::Acquire), 0)
        } else if raw == self.marks.reclaimed {
            // Full under any limit, however far it is raised.
            (self.last_index, u32::MAX)
        } else {
            self.codec.decode(raw)
        }
    }

    #[inline]
    fn encode(&self, index: u64, used: u32) -> W::Raw {
        self.codec.encode(index, used)
    }
}
