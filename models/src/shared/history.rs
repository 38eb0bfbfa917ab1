//! A history of the shared limiter: attempts by many processes on keys, on the server's clock,
//! and the losses of the server's state between them.

use std::collections::BTreeMap;

/// What a caller was told about one attempt.
///
/// # Examples
///
/// ```
/// use fixed_window_models::shared::Reply;
///
/// assert!(Reply::Lost.is_indeterminate());
/// assert!(!Reply::Permitted { remaining: 0 }.is_indeterminate());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reply {
    /// The server counted a permit; `remaining` are left in the key's window.
    Permitted {
        /// `limit − used` after this permit.
        remaining: u32,
    },
    /// The key's window was full.
    Rejected {
        /// The server's wait until the next window, in microseconds, when the server decided
        /// it; `None` when it may have been decided from the process's memory of full windows
        /// (then only the fullness is checked).
        retry_after: Option<u64>,
    },
    /// The server did not run the attempt (a server error, a request never sent): no effect.
    NotCounted,
    /// The caller does not know whether the attempt ran (a reply lost, a timeout, a crash):
    /// it may have counted at any point after its invocation, or not at all.
    Lost,
}

impl Reply {
    /// Whether the caller never learned the attempt's effect.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::shared::Reply;
    ///
    /// assert!(!Reply::NotCounted.is_indeterminate());
    /// ```
    pub fn is_indeterminate(self) -> bool {
        matches!(self, Reply::Lost)
    }
}

/// One attempt on a key: when it was invoked and returned on the server's clock (microseconds),
/// and what it was told.
///
/// # Examples
///
/// ```
/// use fixed_window_models::shared::{Attempt, Reply};
///
/// let attempt = Attempt::new("alice", 1_000, Some(1_200), Reply::Permitted { remaining: 2 });
/// assert_eq!(attempt.key, "alice");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Attempt {
    /// The key.
    pub key: String,
    /// A reading of the server's clock no later than the moment the request left.
    pub invoked: u64,
    /// A reading no earlier than the moment the caller learned the outcome; `None` if it never
    /// did (the caller crashed).
    pub returned: Option<u64>,
    /// What the caller was told.
    pub reply: Reply,
    /// The caller that made it, if the history knows: a caller's attempts are listed in the
    /// order it made them, each sent after the one before returned. That order is real time
    /// too, which readings of a coarse clock, equal for a run of one caller's attempts, do not
    /// show.
    pub caller: Option<usize>,
}

impl Attempt {
    /// An attempt on `key`.
    ///
    /// # Examples
    ///
    /// See [`Attempt`].
    ///
    /// ```
    /// use fixed_window_models::shared::{Attempt, Reply};
    ///
    /// assert_eq!(Attempt::new("k", 1, None, Reply::Lost).returned, None);
    /// ```
    pub fn new(
        key: impl Into<String>,
        invoked: u64,
        returned: Option<u64>,
        reply: Reply,
    ) -> Attempt {
        Attempt {
            key: key.into(),
            invoked,
            returned,
            reply,
            caller: None,
        }
    }

    /// The attempt, made by `caller` (see [`Attempt::caller`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::shared::{Attempt, Reply};
    ///
    /// let attempt = Attempt::new("k", 1, Some(2), Reply::Lost).by(3);
    /// assert_eq!(attempt.caller, Some(3));
    /// ```
    #[must_use]
    pub fn by(self, caller: usize) -> Attempt {
        Attempt {
            caller: Some(caller),
            ..self
        }
    }

    /// Whether its effect is unknown: a lost reply, or a caller that never returned.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::shared::{Attempt, Reply};
    ///
    /// assert!(Attempt::new("k", 1, None, Reply::Permitted { remaining: 0 }).is_indeterminate());
    /// assert!(Attempt::new("k", 1, Some(2), Reply::Lost).is_indeterminate());
    /// ```
    pub fn is_indeterminate(&self) -> bool {
        self.reply.is_indeterminate() || self.returned.is_none()
    }
}

/// The server lost its state somewhere between `from` and `to` on its clock: restarted without
/// persistence (nothing restored, a new origin) or failed over to a replica that lagged (its
/// counters restored, the origin kept).
///
/// # Examples
///
/// ```
/// use fixed_window_models::shared::Loss;
///
/// let restart = Loss::restart(5_000, 6_000, 6_100);
/// assert_eq!(restart.origin, Some(6_100));
/// assert!(restart.restored.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loss {
    /// A reading before the state was lost.
    pub from: u64,
    /// A reading after the new state was in place.
    pub to: u64,
    /// The origin after the loss: `Some` if the configuration was lost and the next attempt
    /// fixed a new one (the value it fixed), `None` if the configuration survived.
    pub origin: Option<u64>,
    /// Per key, the counter the new state holds: its window's start and used permits. A key
    /// absent here has no counter.
    pub restored: BTreeMap<String, (u64, u32)>,
}

impl Loss {
    /// A restart without persistence: every key forgotten, and `origin` fixed afresh.
    ///
    /// # Examples
    ///
    /// See [`Loss`].
    ///
    /// ```
    /// use fixed_window_models::shared::Loss;
    ///
    /// assert_eq!(Loss::restart(1, 2, 3).from, 1);
    /// ```
    pub fn restart(from: u64, to: u64, origin: u64) -> Loss {
        Loss {
            from,
            to,
            origin: Some(origin),
            restored: BTreeMap::new(),
        }
    }

    /// A failover to a replica holding `restored` counters and the same configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use fixed_window_models::shared::Loss;
    ///
    /// let failover = Loss::failover(1, 2, BTreeMap::from([("k".to_owned(), (0, 1))]));
    /// assert_eq!(failover.origin, None);
    /// ```
    pub fn failover(from: u64, to: u64, restored: BTreeMap<String, (u64, u32)>) -> Loss {
        Loss {
            from,
            to,
            origin: None,
            restored,
        }
    }
}

/// The server's clock stepped by `delta` microseconds (forward if positive) somewhere between
/// `from` and `to`, readings of the history's timeline.
///
/// The timeline of a history with steps is the server's clock as it would read without them:
/// an operation taking effect at `τ` on it reads `τ` plus the deltas of the steps before it.
/// A test that owns the server's time (the script's time key) steps it and knows both.
///
/// # Examples
///
/// ```
/// use fixed_window_models::shared::Step;
///
/// let back = Step { from: 1_000, to: 1_200, delta: -250 };
/// assert!(back.delta < 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// A reading of the timeline before the step.
    pub from: u64,
    /// A reading after it.
    pub to: u64,
    /// By how much the server's clock moved, in microseconds.
    pub delta: i64,
}

/// A history of one shared limiter: its configuration, every attempt of every process, and the
/// losses of the server's state, all in microseconds on the server's clock.
///
/// # Examples
///
/// ```
/// use fixed_window_models::shared::{Attempt, Reply, SharedHistory};
///
/// let mut history = SharedHistory::new(0, 1_000, 1);
/// history.attempts.push(Attempt::new("k", 10, Some(20), Reply::Permitted { remaining: 0 }));
/// assert_eq!(history.keys().collect::<Vec<_>>(), ["k"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedHistory {
    /// The shared origin at the start of the history.
    pub origin: u64,
    /// The window's length, at least 1.
    pub period: u64,
    /// Permits per window per key.
    pub limit: u32,
    /// Every attempt, in no particular order.
    pub attempts: Vec<Attempt>,
    /// Every loss of the server's state, in order.
    pub losses: Vec<Loss>,
    /// Every step of the server's clock, in order (see [`Step`] for the timeline).
    pub steps: Vec<Step>,
}

impl SharedHistory {
    /// An empty history of a limiter with this origin, period and limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::shared::SharedHistory;
    ///
    /// assert!(SharedHistory::new(0, 10, 1).attempts.is_empty());
    /// ```
    pub fn new(origin: u64, period: u64, limit: u32) -> SharedHistory {
        SharedHistory {
            origin,
            period,
            limit,
            attempts: Vec::new(),
            losses: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// The keys attempted, each once, in order.
    ///
    /// # Examples
    ///
    /// See [`SharedHistory`].
    ///
    /// ```
    /// use fixed_window_models::shared::SharedHistory;
    ///
    /// assert_eq!(SharedHistory::new(0, 10, 1).keys().count(), 0);
    /// ```
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        let keys: std::collections::BTreeSet<&str> =
            self.attempts.iter().map(|a| a.key.as_str()).collect();
        keys.into_iter()
    }

    /// How far the server's clock reads from the timeline after the first `steps` steps.
    pub(crate) fn offset_after(&self, steps: usize) -> i128 {
        self.steps[..steps.min(self.steps.len())]
            .iter()
            .map(|step| i128::from(step.delta))
            .sum()
    }

    /// How far the server's clock reads from the timeline at `at`, if no step may be under
    /// way then (only the steps finished before it counted).
    pub(crate) fn offset_at(&self, at: u64) -> Option<i128> {
        if self.steps.iter().any(|s| s.from <= at && at <= s.to) {
            return None;
        }
        Some(self.offset_after(self.steps.iter().filter(|s| s.to < at).count()))
    }

    /// The origin in effect after the first `losses` losses.
    pub(crate) fn origin_after(&self, losses: usize) -> u64 {
        self.losses[..losses]
            .iter()
            .rev()
            .find_map(|loss| loss.origin)
            .unwrap_or(self.origin)
    }
}
