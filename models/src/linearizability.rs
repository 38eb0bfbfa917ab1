//! Linearizability of a recorded history against the sequential specification in
//! [`crate::spec`]: is there one order of the operations, consistent with real time (an
//! operation that returned before another was invoked comes first), in which every outcome is
//! what the specification allows?
//!
//! The search is Wing and Gong's, with Lowe's memoisation: repeatedly pick an operation that
//! could take effect next (one invoked before every pending operation's return), apply it to
//! the specification's state, and backtrack when nothing can; a (set of linearized operations,
//! state) pair already explored is never explored again.

use std::collections::HashSet;

use crate::history::{History, Record};
use crate::spec::{self, State};
use crate::violation::Violation;

/// Checks that `history` is linearizable.
///
/// # Errors
///
/// A [`Violation`] naming how many operations could be ordered at most and an operation that
/// could not be placed after them.
///
/// # Examples
///
/// Two overlapping calls on a limiter of one: one permit and one rejection is linearizable,
/// two permits are not.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_models::{Config, History, Kind, Outcome, Record, linearizability};
///
/// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(10), Duration::ZERO);
/// let at = Instant::from_nanos(4);
/// let op = |invoked, outcome| Record {
///     kind: Kind::TryAcquire, invoked, returned: invoked + 2, started: at, ended: at, outcome, ran: false,
/// };
/// let permit = Outcome::Permitted { at: Some(at), remaining: Some(0) };
/// let rejection = Outcome::Rejected { retry_after: Duration::from_nanos(6) };
/// let mut permitted = op(0, permit);
/// permitted.ran = true;
/// let good = History { config, records: vec![permitted, op(1, rejection)], events: vec![] };
/// assert!(linearizability::check(&good).is_ok());
/// let bad = History { config, records: vec![permitted, op(1, permit)], events: vec![] };
/// assert!(linearizability::check(&bad).is_err());
/// ```
pub fn check(history: &History) -> Result<(), Violation> {
    Search::new(history).run()
}

/// One level of the depth-first search: the operation that led here, and the ways to continue
/// not yet tried.
struct Level {
    via: Option<usize>,
    options: Vec<(usize, State)>,
}

struct Search<'h> {
    history: &'h History,
    /// Indices into `history.records`, by invocation.
    by_invocation: Vec<usize>,
    linearized: Vec<u64>,
    count: usize,
    seen: HashSet<(Vec<u64>, State)>,
    deepest: usize,
    stuck_at: Option<usize>,
}

impl<'h> Search<'h> {
    fn new(history: &'h History) -> Search<'h> {
        let mut by_invocation: Vec<usize> = (0..history.records.len()).collect();
        by_invocation.sort_by_key(|&i| history.records[i].invoked);
        Search {
            history,
            by_invocation,
            linearized: vec![0; history.records.len().div_ceil(64)],
            count: 0,
            seen: HashSet::new(),
            deepest: 0,
            stuck_at: None,
        }
    }

    fn is_linearized(&self, i: usize) -> bool {
        self.linearized[i / 64] & (1 << (i % 64)) != 0
    }

    fn flip(&mut self, i: usize) {
        self.linearized[i / 64] ^= 1 << (i % 64);
    }

    /// Every (operation, next state) that can come next from `state`.
    fn options(&mut self, state: &State) -> Vec<(usize, State)> {
        let records = &self.history.records;
        let first_return = (0..records.len())
            .filter(|&i| !self.is_linearized(i))
            .map(|i| records[i].returned)
            .min()
            .unwrap_or(u64::MAX);
        let mut options = Vec::new();
        for &i in &self.by_invocation {
            let record: &Record = &records[i];
            if record.invoked > first_return {
                break;
            }
            if self.is_linearized(i) {
                continue;
            }
            let next = spec::successors(&self.history.config, state, record);
            if next.is_empty() && self.stuck_at.is_none() && self.count == self.deepest {
                self.stuck_at = Some(i);
            }
            options.extend(next.into_iter().map(|state| (i, state)));
        }
        // Later states first off the stack: try the earliest effect times first.
        options.reverse();
        options
    }

    fn run(mut self) -> Result<(), Violation> {
        let total = self.history.records.len();
        let initial = State::initial(&self.history.config);
        let options = self.options(&initial);
        let mut stack = vec![Level { via: None, options }];
        while let Some(level) = stack.last_mut() {
            if self.count == total {
                return Ok(());
            }
            let Some((op, next)) = level.options.pop() else {
                let via = level.via;
                stack.pop();
                if let Some(op) = via {
                    self.flip(op);
                    self.count -= 1;
                }
                continue;
            };
            self.flip(op);
            self.count += 1;
            if !self.seen.insert((self.linearized.clone(), next)) {
                self.flip(op);
                self.count -= 1;
                continue;
            }
            if self.count > self.deepest {
                self.deepest = self.count;
                self.stuck_at = None;
            }
            let options = self.options(&next);
            stack.push(Level {
                via: Some(op),
                options,
            });
        }
        if total == 0 {
            return Ok(());
        }
        let blocked = self.stuck_at.map_or_else(String::new, |i| {
            format!("; cannot place {:?}", self.history.records[i])
        });
        Err(Violation::new(format!(
            "not linearizable: at most {} of {total} operations can be ordered{blocked}",
            self.deepest
        )))
    }
}
