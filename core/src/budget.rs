//! The shared budget: the lock-free claim of a permit from the current window.

use core::fmt;
use core::num::NonZeroU32;
use core::time::Duration;

use crate::attempt::Attempt;
use crate::backoff::Backoff;
use crate::instant::Instant;
use crate::state::{Cell, State};
#[cfg(feature = "stats")]
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::window::Grid;

/// `limit` permits per window of the grid, claimed by compare-and-set on one state word.
pub(crate) struct Budget {
    rules: Rules,
    state: State,
}

/// What the claim loop needs besides a state word: the grid, the limit and the retry policy.
///
/// Kept apart from the word so that one set of rules can claim from many words: a
/// [`Budget`]'s own, or one per key of a keyed limiter.
pub(crate) struct Rules {
    grid: Grid,
    limit: u32,
    backoff: Backoff,
    #[cfg(feature = "stats")]
    cas_retries: AtomicU64,
}

impl Budget {
    pub(crate) fn new(
        origin: Instant,
        period: Duration,
        limit: NonZeroU32,
        backoff: Backoff,
    ) -> Budget {
        let rules = Rules::new(origin, period, limit, backoff);
        Budget {
            state: State::new(limit.get(), rules.grid.last_index()),
            rules,
        }
    }

    pub(crate) fn backoff(&self) -> Backoff {
        self.rules.backoff
    }

    /// One acquire step at `now` for a call whose wait must end by `deadline`.
    // Inlined into the caller's loop, the permit and rejection paths lose a call's prologue
    // and epilogue (a quarter of their instructions under callgrind).
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn attempt(&self, now: Instant, deadline: Instant) -> Attempt {
        match &self.state {
            State::Packed(cell) => self.rules.attempt_on(cell, now, deadline),
            State::Wide(cell) => self.rules.attempt_on(cell, now, deadline),
        }
    }

    /// Compare-and-set attempts lost to another caller since the budget was made.
    #[cfg(feature = "stats")]
    pub(crate) fn cas_retries(&self) -> u64 {
        self.rules.cas_retries()
    }

    /// The current window's start and the permits used in it, as stored (the window may be
    /// stale until the next attempt advances it).
    pub(crate) fn snapshot(&self) -> (Instant, u32) {
        let (index, used) = self.state.snapshot();
        (self.rules.grid.start(index), used)
    }
}

impl Rules {
    pub(crate) fn new(
        origin: Instant,
        period: Duration,
        limit: NonZeroU32,
        backoff: Backoff,
    ) -> Rules {
        Rules {
            grid: Grid::new(origin, period),
            limit: limit.get(),
            backoff,
            #[cfg(feature = "stats")]
            cas_retries: AtomicU64::new(0),
        }
    }

    pub(crate) fn grid(&self) -> &Grid {
        &self.grid
    }

    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    pub(crate) fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// One acquire step on the state word `cell`: the loop every limiter runs, whichever word
    /// it claims from.
    // Inlined into the caller's loop, the permit and rejection paths lose a call's prologue
    // and epilogue (a quarter of their instructions under callgrind).
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn attempt_on<S: Cell>(&self, cell: &S, now: Instant, deadline: Instant) -> Attempt {
        let mut current = cell.load();
        let mut retry = 0;
        loop {
            let (stored_index, stored_used) = cell.decode(current);
            // A window whose end lies past Instant::MAX never ends, so `None` means "still
            // current". Arithmetic here is exact on u64 nanoseconds: the elapsed time since
            // the origin and the number of whole periods in it always fit, so the spec's
            // fallback for an overflowing advance (reset the window to now) has no case left
            // to handle.
            let end = self.grid.end(stored_index);
            let (index, used) = match end {
                // Advance by however many whole periods have passed; the count restarts at
                // zero, whatever was left unclaimed.
                Some(end) if now >= end => (self.grid.index_of(now), 0),
                // Also taken when the clock reads before the stored window's start (it stepped
                // backwards): the call counts against the stored window, so a backwards step
                // can never reopen permits, and the window ends at its usual instant.
                _ => (stored_index, stored_used),
            };
            if used >= self.limit {
                // Full, decided from the loaded word alone, without writing. Only the stored
                // window can be full (an advanced one starts empty), so `end` is its end.
                return match end {
                    Some(next) if next <= deadline => Attempt::Wait { until: next },
                    Some(next) => Attempt::Rejected {
                        retry_after: next.saturating_duration_since(now),
                    },
                    None => Attempt::Rejected {
                        retry_after: Duration::MAX,
                    },
                };
            }
            match cell.compare_exchange(current, cell.encode(index, used + 1)) {
                Ok(()) => {
                    return Attempt::Permitted {
                        remaining: self.limit - used - 1,
                    };
                }
                Err(found) => {
                    #[cfg(feature = "stats")]
                    self.cas_retries.fetch_add(1, Ordering::Relaxed);
                    self.backoff.snooze(retry);
                    retry = retry.saturating_add(1);
                    current = found;
                }
            }
        }
    }

    /// Compare-and-set attempts lost to another caller since the rules were made.
    #[cfg(feature = "stats")]
    pub(crate) fn cas_retries(&self) -> u64 {
        self.cas_retries.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("rules", &self.rules)
            .field("state", &self.state)
            .finish()
    }
}

impl fmt::Debug for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Rules");
        debug
            .field("grid", &self.grid)
            .field("limit", &self.limit)
            .field("backoff", &self.backoff);
        #[cfg(feature = "stats")]
        debug.field("cas_retries", &self.cas_retries);
        debug.finish()
    }
}
