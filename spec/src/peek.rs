//! The rule of a peek (`docs/rules.md`: Peeking): a question that changes no count, answered
//! from the window in effect.

use crate::count::Count;
use crate::grid::Grid;
use crate::keyed::Keyed;
use crate::rules::Rules;
use crate::time::NEVER;

/// What a peek at one reading answers: the permits the window in effect has left under the
/// limit, and the time until that window ends ([`NEVER`] if none follows it).
///
/// A peek decides nothing and records nothing: there is no `apply` for it, so the count after
/// a peek is the count before it. Made during other calls, its answer is the model's answer at
/// some moment within the peek: [`Peeked::lies_between`] checks it against the answers just
/// before and just after.
///
/// # Examples
///
/// Two of three permits used, at 4 in a window ending at 10.
///
/// ```
/// use fixed_window_spec::{Count, Decision, Grid, Peeked};
///
/// let grid = Grid::checked(0, 10).expect("a positive period");
/// let count = Count::stored(0, 2);
/// assert_eq!(count.peek(&grid, 3, 4), Peeked { remaining: 1, resets_in: 6 });
/// // In the next window, though nothing has moved the count on.
/// assert_eq!(count.peek(&grid, 3, 12), Peeked { remaining: 3, resets_in: 8 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Peeked {
    /// `limit − used` in the window in effect, none where the count is above the limit (a
    /// lowered limit).
    pub remaining: u32,
    /// Nanoseconds from the reading until the window in effect ends; [`NEVER`] if no window
    /// follows it.
    pub resets_in: u128,
}

impl Peeked {
    /// Whether this answer's `remaining` lies between `before`'s and `after`'s (in either
    /// order, both included): the answers the model gives just before a peek began and just
    /// after it ended. Calls that overlap the peek move the window between the two, and the
    /// peek may have read it at any moment in between; a peek that took a permit, or read a
    /// window that had already ended, answers outside them once they agree.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Peeked;
    ///
    /// let at = |remaining| Peeked { remaining, resets_in: 5 };
    /// assert!(at(2).lies_between(at(3), at(1)));
    /// assert!(at(3).lies_between(at(3), at(3)));
    /// assert!(!at(2).lies_between(at(3), at(3)));
    /// ```
    #[inline]
    pub fn lies_between(&self, before: Peeked, after: Peeked) -> bool {
        let (low, high) = if before.remaining <= after.remaining {
            (before.remaining, after.remaining)
        } else {
            (after.remaining, before.remaining)
        };
        (low..=high).contains(&self.remaining)
    }
}

impl Count {
    /// What a peek at `now` answers, with `limit` permits per window: the window in effect
    /// ([`Count::at`]), its permits left and the time to its end. The count is not changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Grid, NEVER, Peeked};
    ///
    /// let grid = Grid::checked(1, u128::from(u64::MAX)).expect("a positive period");
    /// assert_eq!(Count::new().peek(&grid, 2, 5), Peeked { remaining: 2, resets_in: NEVER });
    /// ```
    #[inline]
    pub fn peek(&self, grid: &Grid, limit: u32, now: u128) -> Peeked {
        let (index, used) = self.at(grid, now);
        Peeked {
            remaining: limit.saturating_sub(used),
            // Without an advance `now` is before the stored window's end, a reading from a
            // clock that stepped back included.
            resets_in: grid.end(index).map_or(NEVER, |end| end - now),
        }
    }
}

impl Rules {
    /// [`Count::peek`] with these rules' grid and limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Peeked, Rules};
    ///
    /// let rules = Rules::new(0, 2, 10, 0).expect("a valid configuration");
    /// assert_eq!(rules.peek(&Count::stored(0, 1), 3), Peeked { remaining: 1, resets_in: 7 });
    /// ```
    #[inline]
    pub fn peek(&self, count: &Count, now: u128) -> Peeked {
        count.peek(&self.grid, self.limit, now)
    }
}

impl<K: Ord + Clone> Keyed<K> {
    /// What a peek at `key` at `now` answers: [`Rules::peek`] on the key's count, a key
    /// never counted answering a whole window. No count is added or changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Keyed, Peeked, Rules};
    ///
    /// let keyed: Keyed<u8> = Keyed::new(Rules::new(0, 2, 10, 0).expect("a valid configuration"));
    /// assert_eq!(keyed.peek(&1, 3), Peeked { remaining: 2, resets_in: 7 });
    /// assert_eq!(keyed.live(3), 0);
    /// ```
    #[inline]
    pub fn peek(&self, key: &K, now: u128) -> Peeked {
        self.rules().peek(&self.count(key), now)
    }
}
