//! The limiter's one atomic state word: which window is current, and how many of its permits
//! are used.
//!
//! The pair is stored as (window index since the origin, used), not (window start, used): the
//! start is `origin + index·period`, so the index carries the same information in fewer bits,
//! and a window can never be stored misaligned.
//!
//! Two encodings, chosen once per limiter:
//!
//! - [`Packed`]: `index << used_bits | used` in an `AtomicU64`, where `used_bits` is every bit
//!   the largest index the limiter can reach (at most `(u64::MAX − origin) / period`) leaves
//!   free, capped at 32. It fits whenever those bits hold `limit`, which holds roughly whenever
//!   `2·limit ≤ period` in nanoseconds, i.e. for every practical configuration. The bits beyond
//!   `limit`'s own width are its [ceiling](State::ceiling): room to raise the limit while the
//!   limiter runs without changing the encoding. A 64-bit compare-and-set costs about half a
//!   128-bit one on x86-64.
//! - [`Wide`]: index and used side by side in a `u128`, for the rest (a one-nanosecond period
//!   over the whole timeline, say). `portable_atomic::AtomicU128` is lock-free on x86-64
//!   (`cmpxchg16b`) and aarch64, so the limiter keeps full range without a lock.
//!
//! Both keep the exact semantics; which one a limiter uses is invisible to callers, but for
//! the ceiling a running limiter's limit can be raised to.

use core::fmt;

use crate::sync::atomic::{AtomicU64, AtomicU128, Ordering};

/// Access to one encoding of the state word, so the acquire loop is written once and compiled
/// for each.
pub(crate) trait Cell {
    /// The word as loaded.
    type Raw: Copy;

    fn load(&self) -> Self::Raw;

    /// Replaces `current` with `new`; on failure returns the word found instead.
    fn compare_exchange(&self, current: Self::Raw, new: Self::Raw) -> Result<(), Self::Raw>;

    /// (window index, used).
    fn decode(&self, raw: Self::Raw) -> (u64, u32);

    fn encode(&self, index: u64, used: u32) -> Self::Raw;
}

// Orderings: the word publishes nothing but itself, and every claim is a read-modify-write
// of this one location, whose modification order alone guarantees that no two callers claim
// the same permit. Acquire/release is kept anyway (free on x86-64) so that a listener or a
// later extension that reads other memory after a claim sees the claim's predecessors.
pub(crate) const SUCCESS: Ordering = Ordering::AcqRel;
pub(crate) const FAILURE: Ordering = Ordering::Acquire;

/// The 64-bit encoding.
pub(crate) struct Packed {
    cell: AtomicU64,
    used_bits: u32,
    used_mask: u64,
}

impl Packed {
    /// The packed word for a limiter with this `limit` whose indices never exceed
    /// `last_index`, or `None` if they would not fit.
    fn fitting(limit: u32, last_index: u64) -> Option<Packed> {
        let index_bits = u64::BITS - last_index.leading_zeros();
        // Every bit the index leaves goes to `used`, so that the limit can be raised later
        // without a wider word; more than 32 would hold no u32 more.
        let used_bits = (u64::BITS - index_bits).min(u32::BITS);
        if limit.leading_zeros() < u32::BITS - used_bits {
            return None;
        }
        Some(Packed {
            cell: AtomicU64::new(0),
            used_bits,
            used_mask: (1u64 << used_bits) - 1,
        })
    }
}

impl Packed {
    /// The largest count `used` can hold.
    pub(crate) fn ceiling(&self) -> u32 {
        // The mask keeps at most 32 bits, so the narrowing is exact.
        #[allow(clippy::cast_possible_truncation)]
        let ceiling = self.used_mask as u32;
        ceiling
    }
}

impl Cell for Packed {
    type Raw = u64;

    #[inline]
    fn load(&self) -> u64 {
        self.cell.load(FAILURE)
    }

    #[inline]
    fn compare_exchange(&self, current: u64, new: u64) -> Result<(), u64> {
        self.cell
            .compare_exchange_weak(current, new, SUCCESS, FAILURE)
            .map(drop)
    }

    #[inline]
    fn decode(&self, raw: u64) -> (u64, u32) {
        // The mask keeps at most 32 bits, so the narrowing is exact.
        #[allow(clippy::cast_possible_truncation)]
        let used = (raw & self.used_mask) as u32;
        (raw >> self.used_bits, used)
    }

    #[inline]
    fn encode(&self, index: u64, used: u32) -> u64 {
        (index << self.used_bits) | u64::from(used)
    }
}

/// The 128-bit encoding: index in the high 64 bits, used in the low 32.
pub(crate) struct Wide {
    cell: AtomicU128,
}

impl Cell for Wide {
    type Raw = u128;

    #[inline]
    fn load(&self) -> u128 {
        self.cell.load(FAILURE)
    }

    #[inline]
    fn compare_exchange(&self, current: u128, new: u128) -> Result<(), u128> {
        self.cell
            .compare_exchange_weak(current, new, SUCCESS, FAILURE)
            .map(drop)
    }

    #[inline]
    fn decode(&self, raw: u128) -> (u64, u32) {
        // Both halves were written from a u64 and a u32, so the narrowings are exact.
        #[allow(clippy::cast_possible_truncation)]
        let pair = ((raw >> 64) as u64, raw as u32);
        pair
    }

    #[inline]
    fn encode(&self, index: u64, used: u32) -> u128 {
        (u128::from(index) << 64) | u128::from(used)
    }
}

/// The state word, in whichever encoding fits the configuration. Starts at window 0, none
/// used.
pub(crate) enum State {
    Packed(Packed),
    Wide(Wide),
}

impl State {
    pub(crate) fn new(limit: u32, last_index: u64) -> State {
        match Packed::fitting(limit, last_index) {
            Some(packed) => State::Packed(packed),
            None => State::Wide(Wide {
                cell: AtomicU128::new(0),
            }),
        }
    }

    /// The largest limit this word can count up to: what the bits the packed encoding leaves
    /// to `used` hold, or any u32 for the wide one.
    pub(crate) fn ceiling(&self) -> u32 {
        match self {
            State::Packed(cell) => cell.ceiling(),
            State::Wide(_) => u32::MAX,
        }
    }

    /// The current (window index, used), for inspection.
    pub(crate) fn snapshot(&self) -> (u64, u32) {
        match self {
            State::Packed(cell) => cell.decode(cell.load()),
            State::Wide(cell) => cell.decode(cell.load()),
        }
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (index, used) = self.snapshot();
        let encoding = match self {
            State::Packed(_) => "packed u64",
            State::Wide(_) => "wide u128",
        };
        f.debug_struct("State")
            .field("window", &index)
            .field("used", &used)
            .field("encoding", &encoding)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_practical_configuration_packs_into_64_bits() {
        // 1000 permits per second from the epoch: indices need 35 bits, used 10.
        let state = State::new(1000, u64::MAX / 1_000_000_000);
        assert!(matches!(state, State::Packed(_)));
        // The 29 bits the index leaves all go to `used`.
        assert_eq!(state.ceiling(), (1 << 29) - 1);
    }

    #[test]
    fn the_packed_ceiling_is_what_the_index_leaves_capped_at_32_bits() {
        // Indices up to 2^40 - 1 leave 24 bits.
        let state = State::new(1000, (1u64 << 40) - 1);
        assert_eq!(state.ceiling(), (1 << 24) - 1);
        assert!(matches!(
            State::new(1 << 24, (1u64 << 40) - 1),
            State::Wide(_)
        ));
        assert_eq!(State::new(1 << 24, (1u64 << 40) - 1).ceiling(), u32::MAX);
    }

    #[test]
    fn a_one_nanosecond_period_needs_the_wide_word() {
        let state = State::new(1, u64::MAX);
        assert!(matches!(state, State::Wide(_)));
    }

    #[test]
    fn the_packed_word_round_trips_the_largest_index_and_count() {
        let limit = 1000;
        let last_index = (1u64 << 54) - 1;
        let State::Packed(cell) = State::new(limit, last_index) else {
            panic!("expected the packed encoding");
        };
        assert_eq!(cell.ceiling(), 1023);
        assert_eq!(
            cell.decode(cell.encode(last_index, cell.ceiling())),
            (last_index, cell.ceiling())
        );
        assert!(Packed::fitting(limit, last_index + 1).is_none());
    }

    #[test]
    fn the_wide_word_round_trips_the_extremes() {
        let cell = Wide {
            cell: AtomicU128::new(0),
        };
        assert_eq!(
            cell.decode(cell.encode(u64::MAX, u32::MAX)),
            (u64::MAX, u32::MAX)
        );
    }
}
