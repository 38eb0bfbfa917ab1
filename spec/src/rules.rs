//! A limiter's configuration as the model sees it (`docs/rules.md`: Configuration).

use crate::count::{Count, Decision};
use crate::grid::Grid;
use crate::time::deadline;

/// The grid, the limit and the longest wait of one limiter.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::{Count, Decision, Rules};
///
/// let rules = Rules::new(0, 1, 10, 5).expect("a valid configuration");
/// let mut count = Count::new();
/// count.apply(rules.decide(&count, 2, rules.deadline(2)));
/// // The next window opens at 10, after the deadline 3 + 5.
/// assert_eq!(rules.decide(&count, 3, rules.deadline(3)), Decision::Reject { retry_after: 7 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Where the windows lie.
    pub grid: Grid,
    /// Permits per window, at least 1.
    pub limit: u32,
    /// How long an excess call may wait, in nanoseconds.
    pub max_wait: u128,
}

impl Rules {
    /// The rules of a limiter created at `origin` with `limit` permits per `period`
    /// nanoseconds and `max_wait` nanoseconds; `None` unless `limit >= 1` and `period > 0`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Rules;
    ///
    /// assert!(Rules::new(0, 0, 10, 0).is_none());
    /// assert!(Rules::new(0, 1, 0, 0).is_none());
    /// assert!(Rules::new(0, 1, 10, 0).is_some());
    /// ```
    #[inline]
    pub fn new(origin: u128, limit: u32, period: u128, max_wait: u128) -> Option<Rules> {
        let grid = Grid::checked(origin, period)?;
        (limit >= 1).then_some(Rules {
            grid,
            limit,
            max_wait,
        })
    }

    /// The deadline of a call that starts at `start` ([`deadline`](crate::deadline)).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Rules;
    ///
    /// let rules = Rules::new(0, 1, 10, 5).expect("a valid configuration");
    /// assert_eq!(rules.deadline(7), 12);
    /// ```
    #[inline]
    pub fn deadline(&self, start: u128) -> u128 {
        deadline(start, self.max_wait)
    }

    /// These rules with `limit` permits per window, as a running limiter's `set_limit` puts
    /// them in force (`docs/rules.md`: Changing the limit): the counts stay as they are, so
    /// the permits a window has already given count against the new limit. `None` if `limit`
    /// is 0.
    ///
    /// # Examples
    ///
    /// Three permits taken; lowered to two, the window is full; raised to five, it has two
    /// left.
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Rules};
    ///
    /// let rules = Rules::new(0, 4, 10, 0).expect("valid rules");
    /// let mut count = Count::new();
    /// count.apply_n(rules.decide_n(&count, 1, 1, 3), 3);
    /// let lower = rules.with_limit(2).expect("a positive limit");
    /// assert_eq!(lower.decide(&count, 2, 2), Decision::Reject { retry_after: 8 });
    /// let higher = lower.with_limit(5).expect("a positive limit");
    /// assert_eq!(higher.decide(&count, 2, 2), Decision::Permit { index: 0, remaining: 1 });
    /// assert!(rules.with_limit(0).is_none());
    /// ```
    #[inline]
    pub fn with_limit(self, limit: u32) -> Option<Rules> {
        (limit >= 1).then_some(Rules { limit, ..self })
    }

    /// [`Count::decide`] with these rules' grid and limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Rules};
    ///
    /// let rules = Rules::new(0, 2, 10, 0).expect("a valid configuration");
    /// assert_eq!(rules.decide(&Count::new(), 0, 0), Decision::Permit { index: 0, remaining: 1 });
    /// ```
    #[inline]
    pub fn decide(&self, count: &Count, now: u128, deadline: u128) -> Decision {
        count.decide(&self.grid, self.limit, now, deadline)
    }

    /// [`Count::decide_n`] under these rules: `n` permits at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Count, Decision, Rules};
    ///
    /// let rules = Rules::new(0, 4, 10, 0).expect("valid rules");
    /// assert_eq!(rules.decide_n(&Count::new(), 0, 0, 4), Decision::Permit { index: 0, remaining: 0 });
    /// ```
    #[inline]
    pub fn decide_n(&self, count: &Count, now: u128, deadline: u128, n: u32) -> Decision {
        count.decide_n(&self.grid, self.limit, now, deadline, n)
    }
}
