//! The sequential specification of one key of the shared limiter, on the server's clock: the
//! script's rules (the fixed window of `docs/rules.md`, per key, on one shared origin) with the
//! server's state lost now and then.
//!
//! Written from the rules, not from the script: the window holding server time `t` is
//! `[origin + k·period, origin + (k+1)·period)` on the spec crate's [`Grid`]; a counter left by
//! a later window (the clock stepped back) counts against it; nothing carries over. An attempt
//! takes effect at one instant `τ` between its invocation and its return, never before the
//! previous one's: a permit in a window with room, reporting `limit − used` after it; a
//! rejection in a full window, its `retry_after` the time from `τ` to the window's end (so `τ`
//! is pinned). A lost attempt counts if its window has room, at any `τ` after its invocation, or
//! never. A loss replaces the key's counter with what the new state holds, and may bring a new
//! origin.

use core::num::NonZeroU128;

use fixed_window_spec::Grid;

use crate::linearizability::Specification;
use crate::shared::history::{Attempt, Loss, Reply, SharedHistory, Step};

/// Windows an attempt may fall in beyond the first are tried up to this many; an attempt
/// spanning thousands of windows is one the tests never make.
const WIDEST_SPAN: u64 = 4096;

/// The state of one key after a sequence of operations.
///
/// # Examples
///
/// ```
/// use fixed_window_models::shared::KeyState;
///
/// assert_eq!(KeyState::INITIAL.used, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyState {
    /// Losses of the server's state so far.
    pub losses: usize,
    /// Steps of the server's clock so far.
    pub steps: usize,
    /// The start of the window the key's counter is for.
    pub start: u64,
    /// Permits counted in it.
    pub used: u32,
    /// When the last operation took effect.
    pub time: u64,
}

impl KeyState {
    /// No counter, nothing lost, before any time.
    pub const INITIAL: KeyState = KeyState {
        losses: 0,
        steps: 0,
        start: 0,
        used: 0,
        time: 0,
    };
}

/// What happens to one key: an attempt on it, or a loss of the server's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOperation<'h> {
    /// An attempt on the key.
    Attempt(&'h Attempt),
    /// The `n`th loss (from 0).
    Loss(usize, &'h Loss),
    /// The `n`th step of the server's clock (from 0).
    Step(usize, &'h Step),
}

/// The specification of one key of a [`SharedHistory`], for
/// [`linearize`](crate::linearizability::linearize).
///
/// # Examples
///
/// Limit 1, windows of 100 µs from 0: a permit, then a rejection 30 µs later with 70 µs to go.
///
/// ```
/// use fixed_window_models::linearizability::{Entry, linearize};
/// use fixed_window_models::shared::{Attempt, KeyOperation, KeyWindow, Reply, SharedHistory};
///
/// let history = SharedHistory::new(0, 100, 1);
/// let permit = Attempt::new("k", 10, Some(20), Reply::Permitted { remaining: 0 });
/// let rejected = Attempt::new("k", 25, Some(35), Reply::Rejected { retry_after: Some(70) });
/// let entries = [
///     Entry::determinate(KeyOperation::Attempt(&permit), 10, 20),
///     Entry::determinate(KeyOperation::Attempt(&rejected), 25, 35),
/// ];
/// let witness = linearize(&KeyWindow::new(&history, "k"), &entries)?;
/// assert_eq!(witness[1].state.time, 30);
/// # Ok::<(), fixed_window_models::Violation>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct KeyWindow<'h> {
    history: &'h SharedHistory,
    key: &'h str,
}

impl<'h> KeyWindow<'h> {
    /// The specification of `key` in `history`.
    ///
    /// # Examples
    ///
    /// See [`KeyWindow`].
    ///
    /// ```
    /// use fixed_window_models::linearizability::Specification;
    /// use fixed_window_models::shared::{KeyState, KeyWindow, SharedHistory};
    ///
    /// let history = SharedHistory::new(0, 100, 1);
    /// assert_eq!(KeyWindow::new(&history, "k").initial(), KeyState::INITIAL);
    /// ```
    pub fn new(history: &'h SharedHistory, key: &'h str) -> KeyWindow<'h> {
        KeyWindow { history, key }
    }

    fn grid(&self, losses: usize) -> Grid {
        let origin = u128::from(self.history.origin_after(losses));
        // A zero period, which no limiter has, counts as one microsecond.
        let period = NonZeroU128::new(u128::from(self.history.period)).unwrap_or(NonZeroU128::MIN);
        Grid::new(origin, period)
    }

    fn attempt(&self, state: &KeyState, attempt: &Attempt, horizon: u64) -> Vec<KeyState> {
        let limit = self.history.limit;
        let period = self.history.period.max(1);
        let indeterminate = attempt.is_indeterminate();
        if attempt.reply == Reply::NotCounted && !indeterminate {
            // The server never ran it: it changes nothing, wherever it is placed.
            return vec![*state];
        }
        let lo = attempt.invoked.max(state.time);
        let hi = match attempt.returned {
            Some(returned) if !indeterminate => returned,
            _ => horizon.max(lo),
        };
        if lo > hi {
            return Vec::new();
        }
        // Readings of the server's clock: the timeline moved by the steps so far.
        let offset = self.history.offset_after(state.steps);
        let reading = |t: u64| u64::try_from((i128::from(t) + offset).max(0)).unwrap_or(u64::MAX);
        let timeline = |r: u64| u64::try_from((i128::from(r) - offset).max(0)).unwrap_or(u64::MAX);
        let (lo_r, hi_r) = (reading(lo), reading(hi));
        let grid = self.grid(state.losses);
        let first = grid.index_of(u128::from(lo_r));
        let last = grid
            .index_of(u128::from(hi_r))
            .min(first + u128::from(WIDEST_SPAN));
        let mut next = Vec::new();
        for index in first..=last {
            let Ok(window_start) = u64::try_from(grid.start(index)) else {
                break;
            };
            let at = if index == first {
                lo
            } else {
                timeline(window_start).clamp(lo, hi)
            };
            // The script: a counter for this window or a later one counts; an earlier one is over.
            let (start, used) = if state.used > 0 && state.start >= window_start {
                (state.start, state.used)
            } else {
                (window_start, 0)
            };
            let with = |used, time| KeyState {
                start,
                used,
                time,
                ..*state
            };
            if indeterminate {
                if used < limit {
                    next.push(with(used + 1, at));
                }
                continue;
            }
            match attempt.reply {
                Reply::Permitted { remaining } => {
                    if used < limit && limit - used - 1 == remaining {
                        next.push(with(used + 1, at));
                    }
                }
                Reply::Rejected { retry_after } => {
                    if used < limit {
                        continue;
                    }
                    let Some(retry_after) = retry_after else {
                        next.push(with(used, at));
                        continue;
                    };
                    // The server measured retry_after from its reading to the window's end.
                    let Some(read) = (start + period).checked_sub(retry_after) else {
                        continue;
                    };
                    if (lo_r..=hi_r).contains(&read) && grid.index_of(u128::from(read)) == index {
                        next.push(with(used, timeline(read).clamp(lo, hi)));
                    }
                }
                // Handled above: no effect, or indeterminate.
                Reply::NotCounted | Reply::Lost => {}
            }
        }
        next
    }

    fn loss(&self, state: &KeyState, n: usize, loss: &Loss) -> Option<KeyState> {
        let time = loss.from.max(state.time);
        if n != state.losses || time > loss.to {
            return None;
        }
        let (start, used) = loss.restored.get(self.key).copied().unwrap_or((0, 0));
        Some(KeyState {
            losses: n + 1,
            start,
            used,
            time,
            ..*state
        })
    }

    /// The clock steps; the key's counter stays what it was.
    fn step(state: &KeyState, n: usize, step: &Step) -> Option<KeyState> {
        let time = step.from.max(state.time);
        if n != state.steps || time > step.to {
            return None;
        }
        Some(KeyState {
            steps: n + 1,
            time,
            ..*state
        })
    }
}

impl<'h> Specification for KeyWindow<'h> {
    type State = KeyState;
    type Operation = KeyOperation<'h>;

    fn initial(&self) -> KeyState {
        KeyState::INITIAL
    }

    fn successors(
        &self,
        state: &KeyState,
        operation: &KeyOperation<'h>,
        horizon: u64,
    ) -> Vec<KeyState> {
        match *operation {
            KeyOperation::Attempt(attempt) => self.attempt(state, attempt, horizon),
            KeyOperation::Loss(n, loss) => self.loss(state, n, loss).into_iter().collect(),
            KeyOperation::Step(n, step) => Self::step(state, n, step).into_iter().collect(),
        }
    }

    /// Two lost attempts on the key: each counts in whatever window has room when it takes
    /// effect, no earlier than its invocation, so the earlier-invoked one can take the other's
    /// place, and the other the earlier one's later place.
    fn interchangeable(&self, earlier: &KeyOperation<'h>, later: &KeyOperation<'h>) -> bool {
        matches!(
            (earlier, later),
            (KeyOperation::Attempt(a), KeyOperation::Attempt(b))
                if a.is_indeterminate() && b.is_indeterminate()
        )
    }
}
