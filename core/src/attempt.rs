//! The outcome of one acquire step: a permit, a time to sleep until, or a rejection.

use core::time::Duration;

use crate::instant::Instant;

/// What one acquire step decided, given the clock's reading and the call's deadline.
///
/// This is the sans-IO heart of the limiter ([`RateLimiter::attempt`](crate::RateLimiter::attempt)):
/// the blocking loop, the async loop and a simulator all drive the same step and differ only
/// in how they sleep.
///
/// # Examples
///
/// Driving the step by hand on a limiter of one permit per 10 ns.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Attempt, Clock, Instant, ManualClock, RateLimiter};
///
/// let limiter = RateLimiter::of("step", 1, Duration::from_nanos(10))?.with_clock(ManualClock::new());
/// let now = Instant::ZERO;
/// let deadline = Instant::from_nanos(15);
/// assert_eq!(limiter.attempt(now, deadline), Attempt::Permitted { remaining: 0 });
/// assert_eq!(limiter.attempt(now, deadline), Attempt::Wait { until: Instant::from_nanos(10) });
/// assert_eq!(
///     limiter.attempt(now, now),
///     Attempt::Rejected { retry_after: Duration::from_nanos(10) }
/// );
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Attempt {
    /// A permit was claimed; `remaining` permits are left in its window.
    Permitted {
        /// `limit − used` after this permit.
        remaining: u32,
    },
    /// The window is full and the next one opens at `until`, at or before the deadline: sleep
    /// until then and attempt again. Nothing was claimed and nothing was written.
    Wait {
        /// When the next window opens.
        until: Instant,
    },
    /// The window is full and the next one opens after the deadline (or never, past
    /// [`Instant::MAX`]). Nothing was claimed and nothing was written.
    Rejected {
        /// The time from now until the next window opens; `Duration::MAX` if it never does.
        retry_after: Duration,
    },
}
