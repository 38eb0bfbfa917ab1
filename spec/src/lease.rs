//! Leased shares of a window (`docs/rules.md`: Leased shares): a process takes part of a key's
//! current window from the server in one call, counted there whole at once, and grants
//! permits from it locally until it is spent or its local deadline passes.
//!
//! The rules, each once: the share a lease call takes ([`Lease::share`], [`Lease::decide`]),
//! that the whole share counts in the window's total on the server before any of it is
//! spent ([`Leasing::apply`]), the latest local instant a share may be spent
//! ([`spend_deadline`]), the permits a window may refuse while it still has room
//! ([`Lease::under_admission_bound`]), and what handing back the unspent rest of a share
//! takes off the count ([`hand_back`]).

use crate::allowance::latest_local_end;
use crate::count::{Count, Decision};
use crate::grid::Grid;

/// How shares are sized: the largest share and the divisor of the adaptive rule.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::Lease;
///
/// let lease = Lease::checked(64, 8).expect("both positive");
/// assert_eq!(lease.share(10_000, 1), 64); // far from full: the largest share
/// assert_eq!(lease.share(80, 1), 10); // filling: an eighth of what is left
/// assert_eq!(lease.share(3, 1), 1); // nearly full: one permit at a time
/// assert!(Lease::checked(0, 8).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    max_share: u32,
    divisor: u32,
}

/// What a lease call decides ([`Lease::decide`]).
///
/// # Examples
///
/// ```
/// use fixed_window_spec::{Count, Grid, Lease, Leasing};
///
/// let grid = Grid::checked(0, 10).expect("a positive period");
/// let lease = Lease::checked(4, 2).expect("both positive");
/// let leasing = lease.decide(&Count::stored(0, 3), &grid, 10, 5, 1);
/// assert_eq!(leasing, Leasing::Share { index: 0, share: 3 });
/// assert_eq!(leasing.share(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Leasing {
    /// A share of `share` permits of window `index`, the caller's own among them, counted
    /// there whole.
    Share {
        /// The window the share is counted in.
        index: u128,
        /// Its permits, the call's own included.
        share: u32,
    },
    /// No share: the call is decided as an exact attempt for the same permits is (a wait, a
    /// rejection, too many, or a permit for zero permits, which counts nothing).
    Exact(Decision),
}

impl Lease {
    /// Shares of at most `max_share` permits, at most `1 / divisor` of what the window has
    /// left; `None` unless both are at least 1.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Lease;
    ///
    /// assert!(Lease::checked(1, 1).is_some());
    /// assert!(Lease::checked(1, 0).is_none());
    /// ```
    #[inline]
    pub fn checked(max_share: u32, divisor: u32) -> Option<Lease> {
        (max_share >= 1 && divisor >= 1).then_some(Lease { max_share, divisor })
    }

    /// The share a lease call for `want` permits takes when the window has `left` permits:
    /// `clamp(left / divisor, want, max_share)` (integer division), `want` itself when that
    /// is above `max_share`; 0 when `want` does not fit in `left` (the call takes none).
    /// Never more than `left`: large while the window is far from full, shrinking to the
    /// call's own permits as it fills, so the window can still be filled by whoever asks.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Lease;
    ///
    /// let lease = Lease::checked(10, 4).expect("both positive");
    /// assert_eq!(lease.share(100, 1), 10);
    /// assert_eq!(lease.share(20, 1), 5);
    /// assert_eq!(lease.share(20, 7), 7);
    /// assert_eq!(lease.share(20, 12), 12);
    /// assert_eq!(lease.share(2, 3), 0);
    /// ```
    #[inline]
    pub fn share(&self, left: u32, want: u32) -> u32 {
        if want > left {
            return 0;
        }
        (left / self.divisor).min(self.max_share).max(want)
    }

    /// The largest share a window of `limit` permits grants a call for one permit: its share
    /// of an empty window, `max(1, min(max_share, limit / divisor))`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Lease;
    ///
    /// let lease = Lease::checked(64, 4).expect("both positive");
    /// assert_eq!(lease.largest_share(100), 25);
    /// assert_eq!(lease.largest_share(1_000), 64);
    /// assert_eq!(lease.largest_share(2), 1);
    /// ```
    #[inline]
    pub fn largest_share(&self, limit: u32) -> u32 {
        self.share(limit, 1).max(1)
    }

    /// The most permits a window of `limit` may refuse while it still has room, with
    /// `processes` processes leasing on its key under this rule, calls of one permit, and no
    /// share dropped early (no limit change, conflict, failed call or drain in the window):
    /// `processes × (largest_share(limit) − 1)`.
    ///
    /// Why: a process holds at most one share of a key, takes a new one only once the last
    /// is spent, and its caller's permit comes out of a share as soon as it is granted; so
    /// what the window counts and nobody spends is at most one unspent remainder per
    /// process, of at most `largest_share − 1` permits.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Lease;
    ///
    /// assert_eq!(Lease::checked(8, 4).expect("positive").under_admission_bound(3, 100), 21);
    /// // Shares of one permit are exact: nothing is held.
    /// assert_eq!(Lease::checked(1, 4).expect("positive").under_admission_bound(3, 100), 0);
    /// ```
    #[inline]
    pub fn under_admission_bound(&self, processes: u32, limit: u32) -> u64 {
        u64::from(processes) * u64::from(self.largest_share(limit) - 1)
    }

    /// What a lease call for `want` permits decides on `count` at the server's reading `now`,
    /// with `limit` permits per window: a share of [`Lease::share`] of what the window in
    /// effect has left, if `want` (at least 1) fits there; otherwise what an exact attempt
    /// for `want` decides at once (a lease call never waits on the server).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Grid, Lease, Leasing};
    ///
    /// let grid = Grid::checked(0, 10).expect("a positive period");
    /// let lease = Lease::checked(8, 4).expect("both positive");
    /// let full = Count::stored(0, 10);
    /// assert_eq!(
    ///     lease.decide(&full, &grid, 10, 4, 1),
    ///     Leasing::Exact(Decision::Reject { retry_after: 6 })
    /// );
    /// // The next window starts empty: the largest share.
    /// assert_eq!(lease.decide(&full, &grid, 10, 12, 1), Leasing::Share { index: 1, share: 2 });
    /// ```
    #[inline]
    pub fn decide(&self, count: &Count, grid: &Grid, limit: u32, now: u128, want: u32) -> Leasing {
        match count.decide_n(grid, limit, now, now, want) {
            Decision::Permit { index, .. } if want > 0 => {
                let (_, used) = count.at(grid, now);
                Leasing::Share {
                    index,
                    share: self.share(limit - used, want),
                }
            }
            decision => Leasing::Exact(decision),
        }
    }
}

impl Leasing {
    /// The permits this call's share holds (0 without one).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Leasing};
    ///
    /// assert_eq!(Leasing::Exact(Decision::Reject { retry_after: 1 }).share(), 0);
    /// ```
    #[inline]
    pub fn share(&self) -> u32 {
        match *self {
            Leasing::Share { share, .. } => share,
            Leasing::Exact(_) => 0,
        }
    }

    /// Records the call on the server's count: the whole share counts in its window at once,
    /// before any of it is spent, so the window's total covers every permit a process may
    /// grant from it without asking again. Spending it later changes no count; what is
    /// never spent stays counted. Without a share, the exact decision is recorded as for
    /// `want` permits.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Grid, Lease};
    ///
    /// let grid = Grid::checked(0, 10).expect("a positive period");
    /// let lease = Lease::checked(8, 2).expect("both positive");
    /// let mut count = Count::new();
    /// let leasing = lease.decide(&count, &grid, 10, 1, 1);
    /// leasing.apply(&mut count, 1);
    /// // Five of ten counted, though only the caller's one is granted yet.
    /// assert_eq!((count.index(), count.used()), (0, 5));
    /// ```
    #[inline]
    pub fn apply(&self, count: &mut Count, want: u32) {
        match *self {
            Leasing::Share { index, share } => count.apply_n(
                Decision::Permit {
                    index,
                    remaining: 0,
                },
                share,
            ),
            Leasing::Exact(decision) => count.apply_n(decision, want),
        }
    }
}

/// The latest local instant a share may be spent at, never at or after it: the instant the
/// lease call was `sent` (local nanoseconds) plus what the server said its window had left
/// (`window_end − server_now`, nanoseconds on the server's clock), less the rate allowance of
/// [`latest_local_end`]. `None` if the local clock cannot name that instant: the share is then
/// never spent.
///
/// Measured from the send, not the reply's arrival: the server decided at some instant after
/// the send, so the window ends no earlier than this on a clock running at the server's rate;
/// measured from the arrival, a slow reply would stretch the share past the window's end.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::spend_deadline;
///
/// // Sent at 5 ms; the server read 1 s and its window ends at 1.1 s: 100 ms, less 0.1 %.
/// assert_eq!(spend_deadline(5_000_000, 1_000_000_000, 1_100_000_000), Some(104_900_000));
/// // A window already over when the server read it: spent never.
/// assert_eq!(spend_deadline(5_000_000, 7, 7), Some(5_000_000));
/// ```
#[inline]
pub fn spend_deadline(sent: u128, server_now: u128, window_end: u128) -> Option<u128> {
    latest_local_end(sent, window_end.saturating_sub(server_now))
}

/// Hands back `permits` of a share leased in window `leased_in`: what the server takes off
/// `count`, which it leaves that much lower. Only while the count is still of the window the
/// share was leased in (a count that moved on is of another window, whose permits nobody
/// leased from this share), and never more than it holds (never below zero). What the
/// process hands back is at most what it leased and did not spend, taken out of its hands
/// first: no permit of it is granted after, so the window's total still covers every permit
/// granted in it.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::{Count, hand_back};
///
/// let mut count = Count::stored(4, 9);
/// assert_eq!(hand_back(&mut count, 4, 3), 3);
/// assert_eq!((count.index(), count.used()), (4, 6));
/// // Never below zero.
/// assert_eq!(hand_back(&mut count, 4, 10), 6);
/// assert_eq!(count.used(), 0);
/// // A count of another window is left as it is.
/// let mut later = Count::stored(5, 2);
/// assert_eq!(hand_back(&mut later, 4, 2), 0);
/// assert_eq!(later, Count::stored(5, 2));
/// ```
#[inline]
pub fn hand_back(count: &mut Count, leased_in: u128, permits: u32) -> u32 {
    if count.index() != leased_in {
        return 0;
    }
    let taken = permits.min(count.used());
    *count = Count::stored(leased_in, count.used() - taken);
    taken
}
