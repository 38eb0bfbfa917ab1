//! The bound that holds whatever the order of the attempts: per key and window, at most `limit`
//! permits, plus the permits a loss of the server's state made it forget in that window (the
//! spec crate's [`Ledger`]).
//!
//! Independent of the linearizability search, and coarser: it counts only the permits whose
//! whole interval lies in one window of one grid, after or before every loss (those it could
//! not place are left out, so it never blames a placement it cannot be sure of), and it allows,
//! for each loss, every permit and lost attempt that may have counted in the window of the loss
//! before it, less what the new state restored. A restart that fixed a new origin realigns the
//! windows: the old grid's window of the loss is judged across the loss (its permits before,
//! and those after on the new grid, until it ends); the new grid's windows from their start.

use std::collections::BTreeMap;

use core::num::NonZeroU128;

use fixed_window_spec::{Grid, Ledger};

use crate::shared::history::{Attempt, Reply, SharedHistory};
use crate::violation::Violation;

/// What [`check`] judged.
///
/// # Examples
///
/// ```
/// use fixed_window_models::shared::{SharedHistory, ledger};
///
/// assert_eq!(ledger::check(&SharedHistory::new(0, 10, 1))?.permits, 0);
/// # Ok::<(), fixed_window_models::Violation>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bounded {
    /// Windows (per key and grid) holding a judged permit.
    pub windows: usize,
    /// Permits placed in one window and judged.
    pub permits: usize,
    /// Permits left out: their interval spans a window boundary or a loss.
    pub unplaced: usize,
    /// The most permits the losses may have made the server forget, summed.
    pub forgotten: u64,
}

/// A window of one grid: the grid's origin and the window's index.
type Bucket = (u64, u128);

/// Checks that no key's window granted more than `limit` plus the permits forgotten in it.
///
/// # Errors
///
/// A [`Violation`] naming the key, the window and the counts.
///
/// # Examples
///
/// Limit 1 per 100 µs: two permits in one window are one too many, unless a restart between
/// them made the server forget the first.
///
/// ```
/// use fixed_window_models::shared::{Attempt, Loss, Reply, SharedHistory, ledger};
///
/// let permit = |at| Attempt::new("k", at, Some(at + 5), Reply::Permitted { remaining: 0 });
/// let mut history = SharedHistory::new(0, 100, 1);
/// history.attempts = vec![permit(10), permit(50)];
/// assert!(ledger::check(&history).is_err());
/// history.losses.push(Loss::restart(20, 30, 30));
/// assert_eq!(ledger::check(&history)?.forgotten, 1);
/// # Ok::<(), fixed_window_models::Violation>(())
/// ```
pub fn check(history: &SharedHistory) -> Result<Bounded, Violation> {
    let mut bounded = Bounded::default();
    for key in history.keys() {
        let attempts: Vec<&Attempt> = history.attempts.iter().filter(|a| a.key == key).collect();
        let mut granted: BTreeMap<Bucket, u64> = BTreeMap::new();
        let mut forgotten: BTreeMap<Bucket, u64> = BTreeMap::new();
        for attempt in &attempts {
            let (Reply::Permitted { .. }, Some(returned)) = (attempt.reply, attempt.returned)
            else {
                continue;
            };
            let buckets = placed(history, attempt.invoked, returned);
            if buckets.is_empty() {
                bounded.unplaced += 1;
                continue;
            }
            bounded.permits += 1;
            for bucket in buckets {
                *granted.entry(bucket).or_default() += 1;
            }
        }
        for (n, loss) in history.losses.iter().enumerate() {
            let origin = history.origin_after(n);
            let grid = grid(history, origin);
            for index in grid.index_of(u128::from(loss.from))..=grid.index_of(u128::from(loss.to)) {
                let start = grid.start(index);
                let end = grid.end(index).unwrap_or(u128::MAX);
                let counted = attempts
                    .iter()
                    .filter(|a| may_have_counted(a, start, end, loss.to))
                    .count() as u64;
                let restored = match loss.restored.get(key) {
                    Some(&(at, used)) if u128::from(at) == start => u64::from(used),
                    _ => 0,
                };
                let lost = counted.saturating_sub(restored);
                bounded.forgotten += lost;
                *forgotten.entry((origin, index)).or_default() += lost;
            }
        }
        for (&(origin, index), &permits) in &granted {
            bounded.windows += 1;
            let mut ledger = Ledger::new(history.limit);
            let lost = forgotten.get(&(origin, index)).copied().unwrap_or(0);
            ledger.forget(index, lost);
            if (0..permits).all(|_| ledger.grant(index)) {
                continue;
            }
            let grid = grid(history, origin);
            return Err(Violation::new(format!(
                "key {key:?}: {permits} permits in the window [{}, {}) of origin {origin}, more than the limit {} plus {lost} forgotten",
                grid.start(index),
                grid.start(index + 1),
                history.limit
            )));
        }
    }
    Ok(bounded)
}

fn grid(history: &SharedHistory, origin: u64) -> Grid {
    // A zero period, which no limiter has, counts as one microsecond.
    let period = NonZeroU128::new(u128::from(history.period)).unwrap_or(NonZeroU128::MIN);
    Grid::new(u128::from(origin), period)
}

/// The windows a permit between `invoked` and `returned` certainly counts in: the window of its
/// grid, and, just after a restart that realigned the windows, the old grid's window of the
/// loss too. Empty if it spans a loss or a window boundary.
fn placed(history: &SharedHistory, invoked: u64, returned: u64) -> Vec<Bucket> {
    if history
        .losses
        .iter()
        .any(|loss| loss.from < returned && loss.to > invoked)
    {
        return Vec::new();
    }
    let after = history
        .losses
        .iter()
        .filter(|loss| loss.to <= invoked)
        .count();
    let Some(bucket) = window(history, history.origin_after(after), invoked, returned) else {
        return Vec::new();
    };
    let mut buckets = vec![bucket];
    if let Some(loss) = after.checked_sub(1).map(|n| &history.losses[n]) {
        let old = history.origin_after(after - 1);
        if loss.origin.is_some_and(|origin| origin != old) {
            let grid = grid(history, old);
            let of_loss = grid.index_of(u128::from(loss.from))..=grid.index_of(u128::from(loss.to));
            buckets.extend(
                window(history, old, invoked, returned).filter(|(_, i)| of_loss.contains(i)),
            );
        }
    }
    buckets
}

/// The window of the grid from `origin` holding both instants, if one does: the server's
/// readings of them, if no step of its clock may fall between them. After the clock may have
/// stepped back, none: a reading before a key's current window counts against that window,
/// which the reading does not tell (the exact check, linearizability, knows it).
fn window(history: &SharedHistory, origin: u64, invoked: u64, returned: u64) -> Option<Bucket> {
    if history
        .steps
        .iter()
        .any(|step| step.delta < 0 && step.from <= returned)
    {
        return None;
    }
    let grid = grid(history, origin);
    let offset = history.offset_at(invoked)?;
    if history.offset_at(returned)? != offset {
        return None;
    }
    let reading = |t: u64| u128::try_from(i128::from(t) + offset).unwrap_or(0);
    let index = grid.index_of(reading(invoked));
    (grid.index_of(reading(returned)) == index).then_some((origin, index))
}

/// Whether `attempt` may have counted in the window `[start, end)` before `before`.
fn may_have_counted(attempt: &Attempt, start: u128, end: u128, before: u64) -> bool {
    let invoked = u128::from(attempt.invoked);
    if attempt.invoked >= before || invoked >= end {
        return false;
    }
    match (attempt.reply, attempt.returned) {
        (Reply::Lost, _) | (_, None) => true,
        (Reply::Permitted { .. }, Some(returned)) => u128::from(returned) >= start,
        _ => false,
    }
}
