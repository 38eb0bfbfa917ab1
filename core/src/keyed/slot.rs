//! One key's state word, and the protocol that reclaims it.
//!
//! A key's word is the plain limiter's state word ((window index, used), in the encoding the
//! configuration picks), stored in the table as a bare atomic, so the claim loop is the same
//! code for every key and for the plain limiter. What is new is its end:
//!
//! - A stored word always has `used ≥ 1`: a key's word is created already holding its first
//!   permit, and every claim adds one. So the encoding of (0, 0) never appears on a live word,
//!   and is free to mean **reclaimed**.
//! - A sweep reclaims a word only by compare-and-set from the exact word it found to have
//!   ended. A claim made in between changes the word, the compare-and-set fails, and the key
//!   stays. Once reclaimed, a word never changes again: every later claim on it fails, and the
//!   caller looks the key up afresh (and adds a new word once the reclaimed one is out of the
//!   table). So no claim is ever lost to a removal, and a key's count never restarts within a
//!   window it has used (see [`Sweep`](super::sweep::Sweep) for the window new words start in).
//! - To the shared claim loop a reclaimed word reads as the last window of the timeline, full:
//!   the loop then answers `Rejected` with `retry_after` of `Duration::MAX` without writing,
//!   which is how the keyed limiter learns it must look again. A genuine last window never
//!   ends, so it is never reclaimed, and the two cannot be confused.

use crate::state::{Cell, FAILURE, SUCCESS};
use crate::sync::atomic::{AtomicU64, AtomicU128};

/// A bare atomic state word as the table stores it: 64 bits for the packed encoding, 128 for
/// the wide one.
pub(crate) trait Word: Send + Sync + 'static {
    /// The word as loaded.
    type Raw: Copy + Eq;

    /// The encoding of (0, 0), which no live word holds: the word of a reclaimed key.
    const RECLAIMED: Self::Raw;

    fn new(raw: Self::Raw) -> Self;

    fn load(&self) -> Self::Raw;

    /// Replaces `current` with `new`; on failure (which may be spurious) returns the word found.
    fn compare_exchange(&self, current: Self::Raw, new: Self::Raw) -> Result<(), Self::Raw>;
}

impl Word for AtomicU64 {
    type Raw = u64;
    const RECLAIMED: u64 = 0;

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
    const RECLAIMED: u128 = 0;

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

/// One key's word seen through the configuration's encoding, as the claim loop sees a state
/// word.
pub(crate) struct Slot<'a, P, W> {
    codec: &'a P,
    word: &'a W,
    /// The last window of the timeline, which a reclaimed word reads as.
    last_index: u64,
    limit: u32,
}

impl<'a, P: Cell<Raw = W::Raw>, W: Word> Slot<'a, P, W> {
    /// `word` encoded as `codec` encodes, for a limiter of `limit` whose last window is
    /// `last_index`.
    #[inline]
    pub(crate) fn new(codec: &'a P, word: &'a W, last_index: u64, limit: u32) -> Self {
        Slot {
            codec,
            word,
            last_index,
            limit,
        }
    }

    /// Whether the word has been reclaimed; once it has, it stays so.
    #[inline]
    pub(crate) fn is_reclaimed(&self) -> bool {
        self.word.load() == W::RECLAIMED
    }

    /// Reclaims the word if its window is before `current` (the window of a reading some call
    /// has made, so the word's window has ended): one compare-and-set from the exact word
    /// found. Whether the word is now reclaimed (by this call or an earlier one).
    pub(crate) fn reclaim_before(&self, current: u64) -> bool {
        let found = self.word.load();
        if found == W::RECLAIMED {
            return true;
        }
        let (index, _) = self.codec.decode(found);
        // A failed (or spurious) compare-and-set keeps the key: a claim may have just moved
        // it on, and a later sweep will look again.
        index < current && self.word.compare_exchange(found, W::RECLAIMED).is_ok()
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
        if raw == W::RECLAIMED {
            (self.last_index, self.limit)
        } else {
            self.codec.decode(raw)
        }
    }

    #[inline]
    fn encode(&self, index: u64, used: u32) -> W::Raw {
        self.codec.encode(index, used)
    }
}
