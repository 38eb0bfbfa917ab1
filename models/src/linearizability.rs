//! Linearizability of a recorded history against a sequential specification: is there one
//! order of the operations, consistent with real time (an operation that returned before another
//! was invoked comes first), in which every outcome is what the specification allows?
//!
//! The search is Wing and Gong's, with Lowe's memoisation: repeatedly pick an operation that
//! could take effect next (one invoked before every pending operation's return), apply it to
//! the specification's state, and backtrack when nothing can; a (set of linearized operations,
//! state) pair already explored is never explored again.
//!
//! An operation may be *indeterminate*: its caller never learned how it ended (a reply lost, a
//! timeout, a caller that crashed). As Knossos treats such an operation, it may take effect at
//! any point after its invocation, or never: it has no return to order others by, and a history
//! is linearizable once every determinate operation is placed, whatever indeterminate ones are
//! left. Indeterminate operations the specification calls [interchangeable] are tried in
//! invocation order only, which keeps a history with many of them from multiplying the search.
//!
//! An operation may also [follow](Entry::following) its caller's earlier one: the caller sent
//! it after the earlier one returned, an order of real time that a history read on a coarse
//! clock, where a caller's attempts within one tick all share their times, does not show.
//! Without it every attempt within a tick overlaps every other, and the search grows with the
//! subsets of them.
//!
//! [`check`] judges the in-process limiter's histories against [`crate::spec`];
//! [`linearize`] takes any [`Specification`] (the shared limiter's is [`crate::shared`]).
//!
//! [interchangeable]: Specification::interchangeable

use core::fmt::Debug;
use core::hash::Hash;
use std::collections::HashSet;

use crate::config::Config;
use crate::history::{History, Record};
use crate::spec::{self, State};
use crate::violation::Violation;

/// A sequential specification: a state, and what one operation may turn it into.
///
/// # Examples
///
/// A counter that only counts up: an increment says the value it saw after it, if its caller
/// heard back.
///
/// ```
/// use fixed_window_models::linearizability::{Entry, Specification, linearize};
///
/// struct Counter;
/// impl Specification for Counter {
///     type State = u32;
///     type Operation = Option<u32>;
///     fn initial(&self) -> u32 { 0 }
///     fn successors(&self, state: &u32, saw: &Option<u32>, _horizon: u64) -> Vec<u32> {
///         match saw {
///             Some(saw) if *saw != state + 1 => vec![],
///             _ => vec![state + 1],
///         }
///     }
/// }
/// // Two overlapping increments that saw 2 and 1: the one that saw 1 went first.
/// let entries = [Entry::determinate(Some(2), 0, 3), Entry::determinate(Some(1), 1, 2)];
/// let witness = linearize(&Counter, &entries)?;
/// assert_eq!(witness.iter().map(|step| step.entry).collect::<Vec<_>>(), [1, 0]);
/// // An increment whose caller never heard back may have happened, or not.
/// let uncounted = [Entry::indeterminate(None, 0), Entry::determinate(Some(1), 1, 2)];
/// assert!(linearize(&Counter, &uncounted).is_ok());
/// let counted = [Entry::indeterminate(None, 0), Entry::determinate(Some(2), 1, 2)];
/// assert!(linearize(&Counter, &counted).is_ok());
/// let neither = [Entry::indeterminate(None, 0), Entry::determinate(Some(3), 1, 2)];
/// assert!(linearize(&Counter, &neither).is_err());
/// # Ok::<(), fixed_window_models::Violation>(())
/// ```
pub trait Specification {
    /// The abstract state after a sequence of operations.
    type State: Clone + Eq + Hash;
    /// What one operation asked and what it was told.
    type Operation: Debug;

    /// The state before any operation.
    fn initial(&self) -> Self::State;

    /// Every state `operation` can lead to from `state` if it takes effect next; empty if it
    /// cannot take effect next. `horizon` is the latest return among the determinate operations
    /// that may take effect next (0 if none): an indeterminate operation taking effect later
    /// than that is seen by no determinate one before the search reaches that time anyway.
    fn successors(
        &self,
        state: &Self::State,
        operation: &Self::Operation,
        horizon: u64,
    ) -> Vec<Self::State>;

    /// Whether the indeterminate operations `earlier` (invoked first) and `later` are
    /// interchangeable: wherever `later` takes effect, `earlier` could take effect instead with
    /// the same result, and `later` could then take `earlier`'s later place. The search then
    /// places `later` only after `earlier`. The default, `false`, is always sound.
    fn interchangeable(&self, earlier: &Self::Operation, later: &Self::Operation) -> bool {
        let _ = (earlier, later);
        false
    }
}

/// One operation of a history: what it was, and where it was invoked and returned in the
/// history's order (a global counter, or one clock all callers read).
///
/// # Examples
///
/// ```
/// use fixed_window_models::linearizability::Entry;
///
/// assert_eq!(Entry::determinate("get", 3, 5).returned, Some(5));
/// assert_eq!(Entry::indeterminate("put", 4).returned, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<O> {
    /// The operation.
    pub operation: O,
    /// Where it was invoked.
    pub invoked: u64,
    /// Where it returned; `None` if its caller never learned how it ended.
    pub returned: Option<u64>,
    /// An entry that takes effect before it whatever the history's times say: its caller's
    /// earlier operation, which returned before this one was invoked.
    pub after: Option<usize>,
}

impl<O> Entry<O> {
    /// An operation that returned at `returned`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::linearizability::Entry;
    ///
    /// assert_eq!(Entry::determinate((), 1, 2).invoked, 1);
    /// ```
    pub fn determinate(operation: O, invoked: u64, returned: u64) -> Entry<O> {
        Entry {
            operation,
            invoked,
            returned: Some(returned),
            after: None,
        }
    }

    /// An operation whose caller never learned how it ended.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::linearizability::Entry;
    ///
    /// assert!(Entry::indeterminate((), 1).returned.is_none());
    /// ```
    pub fn indeterminate(operation: O, invoked: u64) -> Entry<O> {
        Entry {
            operation,
            invoked,
            returned: None,
            after: None,
        }
    }

    /// The entry, which takes effect after entry `earlier` (see [`Entry::after`]). Only a
    /// determinate `earlier` orders it: an operation whose caller never learned how it ended
    /// may still take effect after its caller moved on.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_models::linearizability::Entry;
    ///
    /// assert_eq!(Entry::determinate("put", 1, 2).following(0).after, Some(0));
    /// ```
    #[must_use]
    pub fn following(self, earlier: usize) -> Entry<O> {
        Entry {
            after: Some(earlier),
            ..self
        }
    }
}

/// One step of a linearization: the entry that took effect, and the state it left.
///
/// # Examples
///
/// See [`Specification`].
///
/// ```
/// use fixed_window_models::linearizability::Step;
///
/// let step = Step { entry: 0, state: 7_u32 };
/// assert_eq!(step.state, 7);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step<S> {
    /// The index of the entry in the history.
    pub entry: usize,
    /// The specification's state after it.
    pub state: S,
}

/// A linearization of `entries` under `spec`: every determinate entry, and the indeterminate
/// ones that took effect, in order.
///
/// # Errors
///
/// A [`Violation`] naming how many determinate operations could be ordered at most and an
/// operation that could not be placed after them.
///
/// # Examples
///
/// See [`Specification`].
///
/// ```
/// use fixed_window_models::linearizability::{Entry, Specification, linearize};
///
/// struct Once;
/// impl Specification for Once {
///     type State = bool;
///     type Operation = ();
///     fn initial(&self) -> bool { false }
///     fn successors(&self, done: &bool, _: &(), _: u64) -> Vec<bool> {
///         if *done { vec![] } else { vec![true] }
///     }
/// }
/// assert!(linearize(&Once, &[Entry::determinate((), 0, 1)]).is_ok());
/// assert!(linearize(&Once, &[Entry::determinate((), 0, 1), Entry::determinate((), 2, 3)]).is_err());
/// ```
pub fn linearize<S: Specification>(
    spec: &S,
    entries: &[Entry<S::Operation>],
) -> Result<Vec<Step<S::State>>, Violation> {
    Search::new(spec, entries).run()
}

/// Checks that a history of the in-process limiter is linearizable against [`crate::spec`].
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
    let entries: Vec<Entry<Record>> = history
        .records
        .iter()
        .map(|record| Entry::determinate(*record, record.invoked, record.returned))
        .collect();
    linearize(&Core(history.config), &entries).map(|_| ())
}

/// The in-process limiter's sequential specification, [`crate::spec`], as a [`Specification`].
struct Core(Config);

impl Specification for Core {
    type State = State;
    type Operation = Record;

    fn initial(&self) -> State {
        State::initial(&self.0)
    }

    fn successors(&self, state: &State, record: &Record, _horizon: u64) -> Vec<State> {
        spec::successors(&self.0, state, record)
    }
}

/// One level of the depth-first search: the operation that led here, and the ways to continue
/// not yet tried.
struct Level<S> {
    via: Option<usize>,
    options: Vec<(usize, S)>,
}

struct Search<'h, S: Specification> {
    spec: &'h S,
    entries: &'h [Entry<S::Operation>],
    /// Indices into `entries`, by invocation.
    by_invocation: Vec<usize>,
    linearized: Vec<u64>,
    /// Determinate entries linearized, and how many there are.
    count: usize,
    total: usize,
    seen: HashSet<(Vec<u64>, S::State)>,
    deepest: usize,
    stuck_at: Option<usize>,
}

impl<'h, S: Specification> Search<'h, S> {
    fn new(spec: &'h S, entries: &'h [Entry<S::Operation>]) -> Search<'h, S> {
        let mut by_invocation: Vec<usize> = (0..entries.len()).collect();
        by_invocation.sort_by_key(|&i| entries[i].invoked);
        Search {
            spec,
            entries,
            by_invocation,
            linearized: vec![0; entries.len().div_ceil(64)],
            count: 0,
            total: entries.iter().filter(|e| e.returned.is_some()).count(),
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
        if self.entries[i].returned.is_some() {
            if self.is_linearized(i) {
                self.count += 1;
            } else {
                self.count -= 1;
            }
        }
    }

    /// Every (operation, next state) that can come next from `state`.
    fn options(&mut self, state: &S::State) -> Vec<(usize, S::State)> {
        let entries = self.entries;
        let pending = || {
            (0..entries.len())
                .filter(|&i| !self.is_linearized(i))
                .filter_map(|i| entries[i].returned)
        };
        let first_return = pending().min().unwrap_or(u64::MAX);
        let mut candidates = Vec::new();
        let mut horizon = 0;
        let mut waiting: Vec<usize> = Vec::new();
        for &i in &self.by_invocation {
            let entry = &entries[i];
            if entry.invoked > first_return {
                break;
            }
            if self.is_linearized(i) {
                continue;
            }
            // Its caller's earlier operation first, if that one is known to have returned.
            let waits = entry.after.is_some_and(|earlier| {
                entries[earlier].returned.is_some() && !self.is_linearized(earlier)
            });
            if waits {
                continue;
            }
            if let Some(returned) = entry.returned {
                horizon = horizon.max(returned);
            } else {
                // Only the first of interchangeable indeterminate operations is tried.
                let covered = waiting.iter().any(|&earlier| {
                    self.spec
                        .interchangeable(&entries[earlier].operation, &entry.operation)
                });
                waiting.push(i);
                if covered {
                    continue;
                }
            }
            candidates.push(i);
        }
        let mut options = Vec::new();
        for i in candidates {
            let next = self.spec.successors(state, &entries[i].operation, horizon);
            if next.is_empty()
                && entries[i].returned.is_some()
                && self.stuck_at.is_none()
                && self.count == self.deepest
            {
                self.stuck_at = Some(i);
            }
            options.extend(next.into_iter().map(|state| (i, state)));
        }
        // Later states first off the stack: try the earliest effect times first.
        options.reverse();
        options
    }

    fn run(mut self) -> Result<Vec<Step<S::State>>, Violation> {
        let initial = self.spec.initial();
        if self.total == 0 {
            return Ok(Vec::new());
        }
        let options = self.options(&initial);
        let mut stack = vec![Level { via: None, options }];
        let mut path: Vec<Step<S::State>> = Vec::new();
        while let Some(level) = stack.last_mut() {
            if self.count == self.total {
                return Ok(path);
            }
            let Some((op, next)) = level.options.pop() else {
                let via = level.via;
                stack.pop();
                if let Some(op) = via {
                    self.flip(op);
                    path.pop();
                }
                continue;
            };
            self.flip(op);
            if !self.seen.insert((self.linearized.clone(), next.clone())) {
                self.flip(op);
                continue;
            }
            if self.count > self.deepest {
                self.deepest = self.count;
                self.stuck_at = None;
            }
            let options = self.options(&next);
            path.push(Step {
                entry: op,
                state: next,
            });
            stack.push(Level {
                via: Some(op),
                options,
            });
        }
        let blocked = self.stuck_at.map_or_else(String::new, |i| {
            format!("; cannot place {:?}", self.entries[i].operation)
        });
        Err(Violation::new(format!(
            "not linearizable: at most {} of {} operations can be ordered{blocked}",
            self.deepest, self.total
        )))
    }
}
