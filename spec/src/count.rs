//! One window's count and what one attempt decides for it (`docs/rules.md`: Windows, Waiting,
//! Events).

use crate::grid::Grid;
use crate::time::NEVER;

/// What one attempt decides, given the clock's reading and the call's deadline.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::{Count, Decision, Grid};
///
/// let grid = Grid::checked(0, 10).expect("a positive period");
/// assert_eq!(Count::new().decide(&grid, 1, 3, 3), Decision::Permit { index: 0, remaining: 0 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// A permit in window `index`, leaving `remaining` there: "Permitted … Carries …
    /// remaining permits in the current window", `limit − used` after this permit.
    Permit {
        /// The window the permit is counted in.
        index: u128,
        /// Permits left in that window after this one.
        remaining: u32,
    },
    /// The window is full and the next opens at `until`, at or before the deadline: "it
    /// sleeps … until the next window opens, then competes for a permit there".
    Wait {
        /// When the next window opens.
        until: u128,
    },
    /// The window is full and the next opens after the deadline, or never: "If the next
    /// window would open after the deadline, the call is rejected without sleeping".
    Reject {
        /// From the reading to the next window's start ("estimated wait until the next permit
        /// is likely available"), or [`NEVER`] if no next window starts on the timeline.
        retry_after: u128,
    },
    /// More permits at once than `limit`, the limit in force, lets any window hold: the call
    /// ends, never waiting for a window that could not grant it (`docs/rules.md`: Weighted
    /// permits, Changing the limit). A call checked against the limit when it began meets
    /// this only after a lowering.
    TooMany {
        /// The limit in force at the decision.
        limit: u32,
    },
}

/// The stored window and the permits used in it: "a single atomic pair — window start instant
/// and permits used in that window".
///
/// Only permits change it ([`Count::apply`]); a rejection or a wait writes nothing.
///
/// # Examples
///
/// A new window starts at zero used, whatever the last one left: "Unused permits never carry
/// over".
///
/// ```
/// use fixed_window_spec::{Count, Decision, Grid};
///
/// let grid = Grid::checked(0, 10).expect("a positive period");
/// let mut count = Count::new();
/// count.apply(count.decide(&grid, 3, 1, 1));
/// assert_eq!(count.decide(&grid, 3, 25, 25), Decision::Permit { index: 2, remaining: 2 });
/// ```
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Count {
    index: u128,
    used: u32,
}

impl Count {
    /// A new limiter's count: window 0, nothing used.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Count;
    ///
    /// assert_eq!((Count::new().index(), Count::new().used()), (0, 0));
    /// ```
    #[inline]
    pub fn new() -> Count {
        Count::default()
    }

    /// The count a limiter stores: window `index` with `used` permits taken in it.
    ///
    /// A limiter built on its own state (a broken one, say) reads its state into this to let
    /// the model decide for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Grid};
    ///
    /// let grid = Grid::checked(0, 10).expect("a positive period");
    /// let count = Count::stored(3, 1);
    /// assert_eq!(count.decide(&grid, 2, 35, 35), Decision::Permit { index: 3, remaining: 0 });
    /// ```
    #[inline]
    pub fn stored(index: u128, used: u32) -> Count {
        Count { index, used }
    }

    /// The stored window's index.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Count;
    ///
    /// assert_eq!(Count::new().index(), 0);
    /// ```
    #[inline]
    pub fn index(&self) -> u128 {
        self.index
    }

    /// Permits used in the stored window.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Count;
    ///
    /// assert_eq!(Count::new().used(), 0);
    /// ```
    #[inline]
    pub fn used(&self) -> u32 {
        self.used
    }

    /// The window in effect at `now`, and the permits used in it.
    ///
    /// "If the current time has moved past the window's end, the window is advanced forward by
    /// however many whole periods have elapsed and the used count resets to zero." A reading
    /// before the stored window's end (a clock that stepped back included) counts against the
    /// stored window: windows never move backwards.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Grid};
    ///
    /// let grid = Grid::checked(0, 10).expect("a positive period");
    /// assert_eq!(Count::new().at(&grid, 1_234), (123, 0));
    /// ```
    #[inline]
    pub fn at(&self, grid: &Grid, now: u128) -> (u128, u32) {
        if grid.end(self.index).is_some_and(|end| now >= end) {
            (grid.index_of(now), 0)
        } else {
            (self.index, self.used)
        }
    }

    /// What an attempt at `now` by a call whose deadline is `deadline` decides, with `limit`
    /// permits per window: "If the (possibly just-advanced) window still has permits left, the
    /// caller CAS-increments the used count to claim one." Otherwise it waits for the next
    /// window if that opens by the deadline, and is rejected if not.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Grid, NEVER};
    ///
    /// let grid = Grid::checked(0, u128::from(u64::MAX)).expect("a positive period");
    /// let mut count = Count::new();
    /// count.apply(count.decide(&grid, 1, 0, 0));
    /// // The next window would start past the end of the timeline.
    /// assert_eq!(count.decide(&grid, 1, 5, 5), Decision::Reject { retry_after: u128::from(u64::MAX) - 5 });
    /// let grid = Grid::checked(1, u128::from(u64::MAX)).expect("a positive period");
    /// assert_eq!(count.decide(&grid, 1, 5, 5), Decision::Reject { retry_after: NEVER });
    /// ```
    #[inline]
    pub fn decide(&self, grid: &Grid, limit: u32, now: u128, deadline: u128) -> Decision {
        self.decide_n(grid, limit, now, deadline, 1)
    }

    /// What an attempt for `n` permits at once decides (`docs/rules.md`: Weighted permits):
    /// all `n` in the window in effect if it has `n` left, else a wait or a rejection as for
    /// one permit; `n = 0` is permitted without counting. `n` above `limit` is
    /// [`Decision::TooMany`]: no window could hold it, so it is neither permitted nor waited
    /// for (a limiter refuses it before its first decision; a waiting call meets it at the
    /// decision after a lowering of the limit).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Grid};
    ///
    /// let grid = Grid::checked(0, 10).expect("a positive period");
    /// let mut count = Count::new();
    /// let three = count.decide_n(&grid, 5, 1, 1, 3);
    /// assert_eq!(three, Decision::Permit { index: 0, remaining: 2 });
    /// count.apply_n(three, 3);
    /// assert_eq!(count.decide_n(&grid, 5, 2, 2, 3), Decision::Reject { retry_after: 8 });
    /// assert_eq!(count.decide_n(&grid, 5, 2, 2, 0), Decision::Permit { index: 0, remaining: 2 });
    /// assert_eq!(count.decide_n(&grid, 2, 2, 9, 3), Decision::TooMany { limit: 2 });
    /// ```
    #[inline]
    pub fn decide_n(&self, grid: &Grid, limit: u32, now: u128, deadline: u128, n: u32) -> Decision {
        if n > limit {
            return Decision::TooMany { limit };
        }
        let (index, used) = self.at(grid, now);
        if used <= limit - n {
            return Decision::Permit {
                index,
                remaining: limit - used - n,
            };
        }
        self.when_full(grid, now, deadline)
    }

    /// What an attempt at `now` decides when the window in effect has no room for it: a wait
    /// for the next window if that opens by `deadline`, else a rejection until it opens.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Grid};
    ///
    /// let grid = Grid::checked(0, 10).expect("a positive period");
    /// let count = Count::new();
    /// assert_eq!(count.when_full(&grid, 3, 10), Decision::Wait { until: 10 });
    /// assert_eq!(count.when_full(&grid, 3, 9), Decision::Reject { retry_after: 7 });
    /// ```
    #[inline]
    pub fn when_full(&self, grid: &Grid, now: u128, deadline: u128) -> Decision {
        let (index, _) = self.at(grid, now);
        match grid.end(index) {
            None => Decision::Reject { retry_after: NEVER },
            Some(next) if next <= deadline => Decision::Wait { until: next },
            // Without an advance `now` is before the stored window's end, a reading from a
            // clock that stepped back included.
            Some(next) => Decision::Reject {
                retry_after: next - now,
            },
        }
    }

    /// Records `decision`: a permit counts in its window (a later window starting at zero);
    /// a wait or a rejection writes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision};
    ///
    /// let mut count = Count::new();
    /// count.apply(Decision::Permit { index: 4, remaining: 0 });
    /// count.apply(Decision::Reject { retry_after: 1 });
    /// assert_eq!((count.index(), count.used()), (4, 1));
    /// ```
    #[inline]
    pub fn apply(&mut self, decision: Decision) {
        self.apply_n(decision, 1);
    }

    /// Records `decision` of an attempt for `n` permits: a permit counts all `n` in its window;
    /// zero permits write nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision};
    ///
    /// let mut count = Count::new();
    /// count.apply_n(Decision::Permit { index: 2, remaining: 1 }, 4);
    /// assert_eq!((count.index(), count.used()), (2, 4));
    /// ```
    #[inline]
    pub fn apply_n(&mut self, decision: Decision, n: u32) {
        // Zero permits count nothing, and write nothing: the stored window stays, as after a
        // rejection (it matters to a clock that steps back later).
        if n == 0 {
            return;
        }
        if let Decision::Permit { index, .. } = decision {
            if index != self.index {
                self.index = index;
                self.used = 0;
            }
            self.used += n;
        }
    }

    /// Drains the window in effect at `now` (`docs/rules.md`: Draining): it counts as full,
    /// `limit` used (or more, if a lowered limit left more used: a drain gives none back),
    /// until it ends; a later window starts at zero as ever.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Grid};
    ///
    /// let grid = Grid::checked(0, 10).expect("a positive period");
    /// let mut count = Count::new();
    /// count.drain(&grid, 3, 14);
    /// assert_eq!(count.decide(&grid, 3, 15, 15), Decision::Reject { retry_after: 5 });
    /// assert_eq!(count.decide(&grid, 3, 20, 20), Decision::Permit { index: 2, remaining: 2 });
    /// ```
    #[inline]
    pub fn drain(&mut self, grid: &Grid, limit: u32, now: u128) {
        let (index, used) = self.at(grid, now);
        self.index = index;
        self.used = used.max(limit);
    }

    /// Whether the stored window has ended by `now`, so the count holds nothing worth keeping:
    /// its next attempt starts a fresh window.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Grid};
    ///
    /// let grid = Grid::checked(0, 10).expect("a positive period");
    /// let mut count = Count::new();
    /// count.apply(Decision::Permit { index: 0, remaining: 0 });
    /// assert!(!count.ended(&grid, 9));
    /// assert!(count.ended(&grid, 10));
    /// ```
    #[inline]
    pub fn ended(&self, grid: &Grid, now: u128) -> bool {
        grid.end(self.index).is_some_and(|end| now >= end)
    }
}
