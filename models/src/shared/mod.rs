//! The shared limiter's histories and their checkers: many processes attempting keys on one
//! server, whose clock is the timeline, with replies lost and the server's state lost now and
//! then.
//!
//! - [`SharedHistory`] of [`Attempt`]s ([`Reply`]), [`Loss`]es and [`Step`]s of the server's
//!   clock, in microseconds on the server's clock.
//! - [`check`]: linearizability, key by key, against [`KeyWindow`], the sequential
//!   specification of one key; lost replies are indeterminate operations.
//! - [`ledger::check`]: the coarser bound that holds whatever the order, judged on the spec
//!   crate's [`Ledger`](fixed_window_spec::Ledger): per key and window, at most `limit` permits
//!   plus those a loss made the server forget.
//!
//! # Examples
//!
//! Limit 1 per 100 µs from 0. A lost attempt, then a rejection: only if the lost one counted.
//!
//! ```
//! use fixed_window_models::shared::{self, Attempt, Reply, SharedHistory};
//!
//! let mut history = SharedHistory::new(0, 100, 1);
//! history.attempts.push(Attempt::new("k", 10, Some(20), Reply::Lost));
//! history.attempts.push(Attempt::new("k", 30, Some(40), Reply::Rejected { retry_after: Some(65) }));
//! let checked = shared::check(&history)?;
//! assert_eq!((checked.attempts, checked.indeterminate, checked.took_effect), (2, 1, 1));
//! # Ok::<(), fixed_window_models::Violation>(())
//! ```

mod history;
pub use crate::shared::history::{Attempt, Loss, Reply, SharedHistory, Step};
pub mod ledger;
mod spec;
pub use crate::shared::spec::{KeyOperation, KeyState, KeyWindow};

use std::collections::HashMap;

use crate::linearizability::{Entry, linearize};
use crate::violation::Violation;

/// What [`check`] judged.
///
/// # Examples
///
/// ```
/// use fixed_window_models::shared::{self, SharedHistory};
///
/// let checked = shared::check(&SharedHistory::new(0, 10, 1))?;
/// assert_eq!(checked.keys, 0);
/// # Ok::<(), fixed_window_models::Violation>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checked {
    /// Keys, each checked on its own.
    pub keys: usize,
    /// Attempts with an effect to judge (all but those the server never ran).
    pub attempts: usize,
    /// Of those, the ones whose outcome the caller never learned.
    pub indeterminate: usize,
    /// Of those, the ones the linearization found counted.
    pub took_effect: usize,
}

/// Checks that `history` is linearizable, key by key, against [`KeyWindow`].
///
/// # Errors
///
/// A [`Violation`] naming the key, how many of its operations could be ordered at most, and one
/// that could not be placed after them.
///
/// # Examples
///
/// Limit 1: two permits in one window are not linearizable, even with a loss of nothing
/// between them; a restart between them explains the second.
///
/// ```
/// use fixed_window_models::shared::{self, Attempt, Loss, Reply, SharedHistory};
///
/// let permit = |at| Attempt::new("k", at, Some(at + 5), Reply::Permitted { remaining: 0 });
/// let mut history = SharedHistory::new(0, 100, 1);
/// history.attempts = vec![permit(10), permit(50)];
/// assert!(shared::check(&history).is_err());
/// history.losses.push(Loss::restart(20, 30, 0));
/// assert!(shared::check(&history).is_ok());
/// ```
pub fn check(history: &SharedHistory) -> Result<Checked, Violation> {
    let mut checked = Checked::default();
    for key in history.keys() {
        // Each caller's last attempt on the key known to have returned, which its later ones
        // follow.
        let mut last: HashMap<usize, usize> = HashMap::new();
        let mut entries: Vec<Entry<KeyOperation<'_>>> = Vec::new();
        for attempt in history
            .attempts
            .iter()
            .filter(|attempt| attempt.key == key && attempt.reply != Reply::NotCounted)
        {
            let operation = KeyOperation::Attempt(attempt);
            let mut entry = match attempt.returned {
                Some(returned) if !attempt.is_indeterminate() => {
                    Entry::determinate(operation, attempt.invoked, returned)
                }
                _ => Entry::indeterminate(operation, attempt.invoked),
            };
            if let Some(caller) = attempt.caller {
                if let Some(&earlier) = last.get(&caller) {
                    entry = entry.following(earlier);
                }
                if entry.returned.is_some() {
                    last.insert(caller, entries.len());
                }
            }
            entries.push(entry);
        }
        let indeterminate = entries.iter().filter(|e| e.returned.is_none()).count();
        checked.keys += 1;
        checked.attempts += entries.len();
        checked.indeterminate += indeterminate;
        entries.extend(
            history.losses.iter().enumerate().map(|(n, loss)| {
                Entry::determinate(KeyOperation::Loss(n, loss), loss.from, loss.to)
            }),
        );
        entries.extend(
            history.steps.iter().enumerate().map(|(n, step)| {
                Entry::determinate(KeyOperation::Step(n, step), step.from, step.to)
            }),
        );
        let witness = linearize(&KeyWindow::new(history, key), &entries)
            .map_err(|violation| Violation::new(format!("key {key:?}: {}", violation.message())))?;
        checked.took_effect += witness
            .iter()
            .filter(|step| entries[step.entry].returned.is_none())
            .count();
    }
    Ok(checked)
}
