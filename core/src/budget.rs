//! The shared budget: the lock-free claim of a permit from the current window.

use core::fmt;
use core::num::{NonZeroU32, NonZeroU64};
use core::time::Duration;

use crate::backoff::Backoff;
use crate::error::ConfigError;
use crate::instant::Instant;
use crate::peek::Peek;
use crate::state::{Cell, State, Wide};
#[cfg(feature = "stats")]
use crate::sync::atomic::AtomicU64;
use crate::sync::atomic::{AtomicU32, Ordering};
use crate::weight::Weight;
use crate::window::Grid;

/// `limit` permits per window of the grid, claimed by compare-and-set on a state word.
///
/// The budget holds the rules of the claim, not the state word itself: a limiter passes in
/// its one word, and a limiter with a word per key can pass in each key's.
pub(crate) struct Budget {
    grid: Grid,
    /// Permits per window, changed by `set_limit` while callers claim (see [`Budget::round`]
    /// for why a claim stays linearizable).
    limit: AtomicU32,
    backoff: Backoff,
    #[cfg(feature = "stats")]
    cas_retries: AtomicU64,
}

/// What a claim found, as the keyed limiter carries it: an [`Outcome`] packed into two scalar
/// words, read through [`Claim::outcome`].
///
/// A call returns two scalars in two registers, where it returns the enum through memory. The
/// keyed claim joins claims made out of line (a lost race, a key not yet added) with its own,
/// and with the enum it stored its own outcome to the stack and copied it there twice
/// (callgrind, per call on the manual clock, median of five runs: the keyed permit 225
/// instructions with the enum, 211 with this, 217 before `set_limit`). The plain limiter keeps
/// the enum: joined with its out-of-line claims, the packed form cost its permit 6 or 7
/// instructions more (51 or 52 against 45).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Claim {
    /// A permit's `remaining`, or, with [`Claim::FULL`] set, a full window's `limit`.
    count: u64,
    /// A full window's `wait`; `None` for a permit.
    wait: Option<NonZeroU64>,
}

/// What a claim found: a permit, or a full window.
///
/// A permit's count and a rejection's limit are one `u32` in the same place, and a full
/// window's next opening is the wait until it, a word with `None` at zero: with an
/// `Option<Instant>` beside the limit (as `set_limit` first had it) the outcome took three
/// words, and the hot paths moved its parts between registers and memory and tested the
/// option's tag again where the rejection was made (callgrind, per call on the manual clock:
/// the single-permit path 59 instructions then, 45 now, 46 before `set_limit`; the rejection
/// 60, 39 and 40).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A permit was claimed; `remaining` are left in its window.
    Permitted { remaining: u32 },
    /// The window holding the reading is full under `limit`, the limit the decision read;
    /// the next opens `wait` nanoseconds after the reading (never zero: a full window ends
    /// after it), or never (`None`: it would start past `Instant::MAX`). Nothing was written.
    Full {
        wait: Option<NonZeroU64>,
        limit: u32,
    },
}

/// A form a claim's outcome is returned in: [`Outcome`] for the plain limiter, [`Claim`] for
/// the keyed one (see [`Claim`] for why they differ).
pub(crate) trait Decided: Copy {
    /// A permit, `remaining` left in its window.
    fn permitted(remaining: u32) -> Self;
    /// A full window under `limit`, the next opening `wait` nanoseconds after the reading.
    fn full(wait: Option<NonZeroU64>, limit: u32) -> Self;
}

impl Decided for Outcome {
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn permitted(remaining: u32) -> Outcome {
        Outcome::Permitted { remaining }
    }

    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn full(wait: Option<NonZeroU64>, limit: u32) -> Outcome {
        Outcome::Full { wait, limit }
    }
}

impl Decided for Claim {
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn permitted(remaining: u32) -> Claim {
        Claim {
            count: u64::from(remaining),
            wait: None,
        }
    }

    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn full(wait: Option<NonZeroU64>, limit: u32) -> Claim {
        Claim {
            count: Claim::FULL | u64::from(limit),
            wait,
        }
    }
}

impl Claim {
    /// The bit of `count` that marks a full window, above every `u32`.
    const FULL: u64 = 1 << 32;

    /// What the claim found.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn outcome(self) -> Outcome {
        // The low 32 bits hold the count, made from a `u32`.
        #[allow(clippy::cast_possible_truncation)]
        let count = self.count as u32;
        if self.count & Claim::FULL == 0 {
            Outcome::Permitted { remaining: count }
        } else {
            Outcome::Full {
                wait: self.wait,
                limit: count,
            }
        }
    }
}

/// The ordering of the limit's loads and stores: see [`Budget::round`].
const LIMIT: Ordering = Ordering::SeqCst;

/// Where a round of the claim reads the limit it decides by, after it has loaded the word
/// (see [`Budget::round`] for why after): the budget's own limit, or one key's.
pub(crate) trait LimitOf: Copy {
    /// The limit in force for the word being claimed.
    fn load(self, budget: &Budget) -> u32;
}

/// The budget's own limit, in force for every word that has no limit of its own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BudgetLimit;

impl LimitOf for BudgetLimit {
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn load(self, budget: &Budget) -> u32 {
        budget.limit()
    }
}

impl Budget {
    pub(crate) fn new(grid: Grid, limit: NonZeroU32, backoff: Backoff) -> Budget {
        Budget {
            grid,
            limit: AtomicU32::new(limit.get()),
            backoff,
            #[cfg(feature = "stats")]
            cas_retries: AtomicU64::new(0),
        }
    }

    /// A state word for this budget: window 0, none used, in the encoding that fits.
    pub(crate) fn state(&self) -> State {
        State::new(self.limit(), self.grid.last_index())
    }

    pub(crate) fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// The windows every word of this budget counts in.
    pub(crate) fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Permits per window, as now in force.
    #[inline]
    pub(crate) fn limit(&self) -> u32 {
        self.limit.load(LIMIT)
    }

    /// Puts `limit` in force for every later claim, the current window's too, on words that
    /// can count up to `ceiling`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0, [`ConfigError::LimitAboveCeiling`] if it is
    /// above `ceiling`.
    pub(crate) fn set_limit(&self, limit: u32, ceiling: u32) -> Result<(), ConfigError> {
        if limit == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        if limit > ceiling {
            return Err(ConfigError::LimitAboveCeiling { limit, ceiling });
        }
        self.limit.store(limit, LIMIT);
        Ok(())
    }

    /// Claims a permit from the window holding `now` in `state`, a word made by
    /// [`Budget::state`].
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn claim<W: Weight>(&self, state: &State, now: Instant, weight: W) -> Outcome {
        self.claim_reading(state, || now, weight).1
    }

    /// Claims a permit from `state` at the reading `read` takes, which it takes after loading
    /// the word; returns the reading with the outcome.
    ///
    /// Loading first lets the load overlap the clock read (tens of cycles for the time-stamp
    /// counter) instead of waiting for it; under criterion the default-clock paths took a
    /// tenth less time, and the decision after it fewer instructions. The outcome is the same as loading after the read: a word that
    /// changed in between makes the compare-and-set fail and the claim retry on the word
    /// found; and a rejection decided from the loaded word (its window full, and the reading
    /// before its end) is right at the moment of the load, which lies within the call. On a
    /// clock that never goes backwards, no one can have advanced that window before the
    /// reading anyway: they would have needed a reading past its end, taken earlier.
    ///
    /// Under contention the loaded word is older by the length of a clock read, so a race is
    /// a little likelier to be lost (and retried); the lost races the `stats` feature counts
    /// stayed near a tenth of a percent of attempts at 2 to 8 threads.
    // Inlined into the caller's loop, the permit and rejection paths lose a call's prologue
    // and epilogue. The packed arm is written out rather than shared with `claim_wide`
    // through a helper: with the helper, LLVM allocated registers worse (rejection on the
    // manual clock 53 instructions instead of 44 under callgrind).
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn claim_reading<W: Weight>(
        &self,
        state: &State,
        read: impl FnOnce() -> Instant,
        weight: W,
    ) -> (Instant, Outcome) {
        match state {
            State::Packed(cell) => {
                let current = cell.load();
                let now = read();
                let outcome = match self.round(cell, current, now, weight, BudgetLimit) {
                    Ok(outcome) => outcome,
                    Err(found) => self.claim_contended(cell, now, found, weight, BudgetLimit),
                };
                (now, outcome)
            }
            State::Wide(cell) => {
                let now = read();
                (now, self.claim_wide(cell, now, weight).outcome())
            }
        }
    }

    /// The claim on the 128-bit word, out of line: only configurations beyond every practical
    /// one use it, and inlined beside the packed claim its code pushed the packed one off the
    /// straight path (a taken branch and spilled registers on every call).
    #[cold]
    #[inline(never)]
    fn claim_wide<W: Weight>(&self, cell: &Wide, now: Instant, weight: W) -> Claim {
        self.claim_cell(cell, now, weight, BudgetLimit)
    }

    /// Claims a permit from the window holding `now` in any word seen through [`Cell`]: the
    /// claim of a word outside a [`State`], such as one key's of a keyed limiter, under the
    /// limit `limit` reads.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn claim_cell<S: Cell, W: Weight, L: LimitOf>(
        &self,
        cell: &S,
        now: Instant,
        weight: W,
        limit: L,
    ) -> Claim {
        match self.round(cell, cell.load(), now, weight, limit) {
            Ok(claim) => claim,
            Err(found) => self.claim_contended(cell, now, found, weight, limit),
        }
    }

    /// Retries after a lost race, under the backoff, until a round decides.
    #[cold]
    #[inline(never)]
    fn claim_contended<S: Cell, W: Weight, R: Decided, L: LimitOf>(
        &self,
        cell: &S,
        now: Instant,
        mut current: S::Raw,
        weight: W,
        limit: L,
    ) -> R {
        let mut retry = 0;
        loop {
            #[cfg(feature = "stats")]
            self.cas_retries.fetch_add(1, Ordering::Relaxed);
            self.backoff.snooze(retry);
            retry = retry.saturating_add(1);
            match self.round(cell, current, now, weight, limit) {
                Ok(decided) => return decided,
                Err(found) => current = found,
            }
        }
    }

    /// One round of the claim from the word as loaded (`current`): the outcome, or the word
    /// another caller wrote first if the compare-and-set lost.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn round<S: Cell, W: Weight, R: Decided, L: LimitOf>(
        &self,
        cell: &S,
        current: S::Raw,
        now: Instant,
        weight: W,
        limit: L,
    ) -> Result<R, S::Raw> {
        let (index, used, next) = self.in_effect(cell.decode(current), now);
        // The limit is loaded after the word, on every round. That keeps the claim
        // linearizable while `set_limit` runs: a round that read the old limit loaded its word
        // before it loaded that limit, so before the new limit's store; a claim that used the
        // new limit loaded it after that store, so its compare-and-set comes after the store
        // too. If the two claims overlap, the new limit's claim wrote after the old one loaded
        // its word, and the old one's compare-and-set fails and retries under the new limit.
        // Both loads and the store are sequentially consistent, so that "after" holds across
        // the two locations (on x86-64 a SeqCst load is a plain load). A key's own limit is
        // read at the same point, by the same argument (see `keyed/own_limits.rs`).
        let limit = limit.load(self);
        let Some(after) = weight.claimed(used, limit) else {
            // Full, decided from the loaded word alone, without writing; `next` lies after
            // `now`.
            debug_assert!(
                next.is_none_or(|next| next > now),
                "a full window ends after now"
            );
            let wait = next.and_then(|next| NonZeroU64::new(next.as_nanos() - now.as_nanos()));
            return Ok(R::full(wait, limit));
        };
        if after == used {
            // Nothing to take (no permits, or the rest of a full window): permitted at once,
            // with what the window in effect has left (none, under a lowered limit below the
            // count), writing nothing.
            return Ok(R::permitted(limit.saturating_sub(used)));
        }
        cell.compare_exchange(current, cell.encode(index, after))
            .map(|()| R::permitted(limit - after))
    }

    /// The window in effect at `now` for a word storing `(stored_index, stored_used)`: its
    /// index, its count and its end (`next`, `None` past `Instant::MAX`), as both the claim
    /// and a peek read it.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn in_effect(
        &self,
        (stored_index, stored_used): (u64, u32),
        now: Instant,
    ) -> (u64, u32, Option<Instant>) {
        // A window whose end lies past Instant::MAX never ends, so `None` means "still
        // current". Arithmetic here is exact on u64 nanoseconds: the elapsed time since the
        // origin and the number of whole periods in it always fit, so the spec's fallback for
        // an overflowing advance (reset the window to now) has no case left to handle.
        let end = self.grid.end(stored_index);
        // `next` is the end of the window in effect: what a full one reports.
        match end {
            // Advance by however many whole periods have passed; the count restarts at zero,
            // whatever was left unclaimed. A weight checked against an older, higher limit can
            // find even this empty window full, so its end is worked out here, off the path
            // that stays in the stored window.
            Some(end) if now >= end => {
                let index = self.grid.index_of(now);
                (index, 0, self.grid.end(index))
            }
            // Also taken when the clock reads before the stored window's start (it stepped
            // backwards): the call counts against the stored window, so a backwards step can
            // never reopen permits, and the window ends at its usual instant.
            _ => (stored_index, stored_used, end),
        }
    }

    /// What a claim at `now` would find in the word `current`, loaded from `cell`, without
    /// writing: the permits left in the window in effect under the limit in force, and the
    /// time to its end. The limit (the budget's or one key's) is loaded after the word, as a
    /// claim's round loads it, so the answer is one a claim at that moment could have decided.
    pub(crate) fn look<S: Cell, L: LimitOf>(
        &self,
        cell: &S,
        current: S::Raw,
        now: Instant,
        limit: L,
    ) -> Peek {
        let (_, used, next) = self.in_effect(cell.decode(current), now);
        let limit = limit.load(self);
        let resets_in = next.map_or(Duration::MAX, |next| next.saturating_duration_since(now));
        Peek::new(limit.saturating_sub(used), limit, resets_in)
    }

    /// [`look`](Budget::look) at `state`, a word made by [`Budget::state`], at `now`.
    pub(crate) fn peek(&self, state: &State, now: Instant) -> Peek {
        match state {
            State::Packed(cell) => self.look(cell, cell.load(), now, BudgetLimit),
            State::Wide(cell) => self.look(cell, cell.load(), now, BudgetLimit),
        }
    }

    /// Compare-and-set attempts lost to another caller since the budget was made.
    #[cfg(feature = "stats")]
    pub(crate) fn cas_retries(&self) -> u64 {
        self.cas_retries.load(Ordering::Relaxed)
    }

    /// The start of the window stored in `state` and the permits used in it (the window may
    /// be stale until the next claim advances it).
    pub(crate) fn snapshot(&self, state: &State) -> (Instant, u32) {
        let (index, used) = state.snapshot();
        (self.grid.start(index), used)
    }
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Budget");
        debug
            .field("grid", &self.grid)
            .field("limit", &self.limit())
            .field("backoff", &self.backoff);
        #[cfg(feature = "stats")]
        debug.field("cas_retries", &self.cas_retries);
        debug.finish()
    }
}
