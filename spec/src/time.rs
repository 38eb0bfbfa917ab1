//! The timeline: nanoseconds on the limiter's clock, from 0 to [`END_OF_TIME`].

use core::time::Duration;

/// The last instant of the timeline: the limiter's `Instant::MAX`, `u64::MAX` nanoseconds
/// after its clock's epoch.
pub const END_OF_TIME: u128 = u64::MAX as u128;

/// The `retry_after` of a rejection whose next window would start past [`END_OF_TIME`]:
/// `Duration::MAX`, in nanoseconds. "If the next window's start itself would overflow, the
/// call is rejected immediately — no maxWait, however generous, could wait that out."
pub const NEVER: u128 = Duration::MAX.as_nanos();

/// The deadline of a call that starts at `start` and may wait `max_wait`.
///
/// "A deadline computation that would overflow is clamped to Instant.MAX instead — an
/// unreachable deadline simply means the wait is correctly never satisfied." The deadline is
/// fixed once, when the call starts.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::{END_OF_TIME, NEVER, deadline};
///
/// assert_eq!(deadline(10, 5), 15);
/// assert_eq!(deadline(END_OF_TIME - 1, NEVER), END_OF_TIME);
/// ```
#[inline]
pub fn deadline(start: u128, max_wait: u128) -> u128 {
    start.saturating_add(max_wait).min(END_OF_TIME)
}
