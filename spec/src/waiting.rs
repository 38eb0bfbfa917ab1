//! A waiting call (`docs/rules.md`: Waiting, Extreme values): its deadline, fixed at its start,
//! and what it does after each decision.

use crate::count::Decision;

/// What a waiting call does next.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::{Decision, Next, Waiting};
///
/// let mut call = Waiting::new(20);
/// assert_eq!(call.next(Decision::Wait { until: 10 }, 4), Next::Sleep { until: 10 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Next {
    /// The call ends with a permit.
    Permit {
        /// Permits left in its window.
        remaining: u32,
    },
    /// The call ends rejected.
    Reject {
        /// As in [`Decision::Reject`].
        retry_after: u128,
    },
    /// The call ends refused: it asked for more permits than `limit`, the limit in force,
    /// lets a window hold.
    TooMany {
        /// As in [`Decision::TooMany`].
        limit: u32,
    },
    /// The call sleeps until `until` and attempts again.
    Sleep {
        /// When the next window opens.
        until: u128,
    },
}

/// A call that may wait: "it sleeps … until the next window opens, then competes for a permit
/// there, repeating until it acquires one or its wait deadline passes."
///
/// The stalled-clock rule (a rule this project adds to the specification, which assumes a
/// clock that moves; `docs/rules.md`, "Clocks that stand still or step back"): a call whose
/// clock reads no later after a sleep than before it would sleep forever on a clock that stands
/// still, so it is rejected instead, with the wait it was told to make (`until − now`).
///
/// # Examples
///
/// A call on a clock that stood still across its sleep gives up.
///
/// ```
/// use fixed_window_spec::{Decision, Next, Waiting};
///
/// let mut call = Waiting::new(100);
/// assert_eq!(call.next(Decision::Wait { until: 10 }, 4), Next::Sleep { until: 10 });
/// assert_eq!(call.next(Decision::Wait { until: 10 }, 4), Next::Reject { retry_after: 6 });
/// ```
/// The default is a call that may not wait past instant 0, before its first attempt.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Waiting {
    deadline: u128,
    slept_from: Option<u128>,
}

impl Waiting {
    /// A call whose deadline is `deadline` ([`deadline`](crate::deadline) of its start reading
    /// and `max_wait`), before its first attempt.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Waiting;
    ///
    /// assert_eq!(Waiting::new(9).deadline(), 9);
    /// ```
    #[inline]
    pub fn new(deadline: u128) -> Waiting {
        Waiting {
            deadline,
            slept_from: None,
        }
    }

    /// The deadline, fixed when the call started.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Waiting;
    ///
    /// assert_eq!(Waiting::new(9).deadline(), 9);
    /// ```
    #[inline]
    pub fn deadline(&self) -> u128 {
        self.deadline
    }

    /// The reading before the call's last sleep, if it slept.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Waiting};
    ///
    /// let mut call = Waiting::new(100);
    /// call.next(Decision::Wait { until: 10 }, 4);
    /// assert_eq!(call.slept_from(), Some(4));
    /// ```
    #[inline]
    pub fn slept_from(&self) -> Option<u128> {
        self.slept_from
    }

    /// Whether a reading of `now` after the last sleep shows the clock did not move across it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Waiting};
    ///
    /// let mut call = Waiting::new(100);
    /// assert!(!call.stalled(4));
    /// call.next(Decision::Wait { until: 10 }, 4);
    /// assert!(call.stalled(4));
    /// assert!(!call.stalled(10));
    /// ```
    #[inline]
    pub fn stalled(&self, now: u128) -> bool {
        self.slept_from.is_some_and(|before| now <= before)
    }

    /// What the call does after `decision` was made at `now` (with this call's deadline): it
    /// ends with the permit or the rejection, or sleeps until the next window, or gives up if
    /// its clock stalled across the last sleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{Decision, Next, Waiting};
    ///
    /// let mut call = Waiting::new(100);
    /// assert_eq!(call.next(Decision::Permit { index: 0, remaining: 3 }, 1), Next::Permit { remaining: 3 });
    /// ```
    #[inline]
    pub fn next(&mut self, decision: Decision, now: u128) -> Next {
        match decision {
            Decision::Permit { remaining, .. } => Next::Permit { remaining },
            Decision::Reject { retry_after } => Next::Reject { retry_after },
            Decision::TooMany { limit } => Next::TooMany { limit },
            Decision::Wait { until } if self.stalled(now) => Next::Reject {
                retry_after: until.saturating_sub(now),
            },
            Decision::Wait { until } => {
                self.slept_from = Some(now);
                Next::Sleep { until }
            }
        }
    }
}
