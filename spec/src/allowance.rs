//! The clock-rate allowance of decisions a process takes from a server's answer
//! (`docs/rules.md`: the shared limiter's local rejections and leased shares).
//!
//! The server says how long its window has left on its own clock; a process measures that
//! span on its own clock, which may run a little faster. So what it decides from the answer
//! ends a little short of the span: one part in [`DRIFT_ALLOWANCE`] of it.

use crate::time::END_OF_TIME;

/// The rate error the local decisions allow: a process's clock may run up to one part in
/// `DRIFT_ALLOWANCE` (0.1 %) faster than the server's without any of them outliving the
/// server's window.
pub const DRIFT_ALLOWANCE: u128 = 1_000;

/// The latest local instant a decision taken on an answer may hold to: the instant the
/// request was `sent` plus the `left` nanoseconds the server said its window had, less
/// `left / DRIFT_ALLOWANCE` (integer division). `None` if that is past [`END_OF_TIME`]: the
/// local clock cannot name it.
///
/// Measured from the send: the server answered at some instant after it, so the window ends
/// no earlier than `sent + left` on a clock running at the server's rate.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::{END_OF_TIME, latest_local_end};
///
/// // Sent at 5 ms; the window had 100 ms left: 0.1 % of it (100 µs) is allowed for the rate.
/// assert_eq!(latest_local_end(5_000_000, 100_000_000), Some(104_900_000));
/// // Below 1,000 ns left, nothing is allowed away.
/// assert_eq!(latest_local_end(7, 999), Some(1_006));
/// assert_eq!(latest_local_end(END_OF_TIME, 1), None);
/// ```
#[inline]
pub fn latest_local_end(sent: u128, left: u128) -> Option<u128> {
    let end = sent.checked_add(left - left / DRIFT_ALLOWANCE)?;
    (end <= END_OF_TIME).then_some(end)
}
