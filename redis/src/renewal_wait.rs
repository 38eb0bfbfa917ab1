//! How long the limiter waits before it makes a connection anew after the server refused this
//! client: the rule of the connection layer, kept apart from its I/O so that a simulator
//! drives the same rule.

use core::time::Duration;

/// The wait after the first refusal before a new connection is made.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::{RENEWAL_MIN, renewal_wait};
///
/// assert_eq!(renewal_wait(0), RENEWAL_MIN);
/// ```
pub const RENEWAL_MIN: Duration = Duration::from_millis(50);

/// The longest wait between two new connections while the server keeps refusing: a client
/// whose credentials work again is deciding within this (plus one connection's round trip)
/// of its next call.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::{RENEWAL_MAX, renewal_wait};
///
/// assert_eq!(renewal_wait(u32::MAX), RENEWAL_MAX);
/// ```
pub const RENEWAL_MAX: Duration = Duration::from_millis(500);

/// The wait before the next new connection, after a refusal that follows `refusals` others
/// since the last answer that was not a refusal: [`RENEWAL_MIN`] doubled per earlier refusal,
/// at most [`RENEWAL_MAX`].
///
/// # Examples
///
/// Doubling from 50 ms, capped at 500 ms.
///
/// ```
/// use core::time::Duration;
/// use fixed_window_redis::renewal_wait;
///
/// let waits: Vec<Duration> = (0..6).map(renewal_wait).collect();
/// let ms = |ms| Duration::from_millis(ms);
/// assert_eq!(waits, [ms(50), ms(100), ms(200), ms(400), ms(500), ms(500)]);
/// ```
pub fn renewal_wait(refusals: u32) -> Duration {
    RENEWAL_MIN
        .saturating_mul(1 << refusals.min(16))
        .min(RENEWAL_MAX)
}
