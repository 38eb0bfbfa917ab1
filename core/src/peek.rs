//! The answer to a question that consumes nothing: how many permits the current window has
//! left, and when it ends.

use core::time::Duration;

/// What a window holds at one reading, asked without taking anything: the permits it has
/// left under the limit in force, that limit, and the time until the window ends and the
/// next one opens whole.
///
/// Every limiter answers with this type: [`RateLimiter::peek`](crate::RateLimiter::peek),
/// [`KeyedRateLimiter::peek`](crate::KeyedRateLimiter::peek), and `fixed-window-redis`'s
/// `SharedRateLimiter::peek`. A peek counts nothing, emits no event and, for a key, adds
/// nothing to the limiter's memory: a key never seen answers the full limit.
///
/// The answer is true at the reading it was made at: another caller may take the permits it
/// reports the moment after, so it is for dashboards, `RateLimit` fields and shadow
/// decisions, never a reservation.
///
/// # Examples
///
/// Two of three permits taken, 300 ms into a one-second window.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{ManualClock, RateLimiter};
///
/// let clock = ManualClock::new();
/// let limiter = RateLimiter::of("api", 3, Duration::from_secs(1))?.with_clock(clock.clone());
/// assert!(limiter.try_acquire().is_ok());
/// assert!(limiter.try_acquire().is_ok());
/// clock.advance(Duration::from_millis(300));
/// let peek = limiter.peek();
/// assert_eq!((peek.remaining(), peek.limit()), (1, 3));
/// assert_eq!(peek.resets_in(), Duration::from_millis(700));
/// assert!(peek.allows(1) && !peek.allows(2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Peek {
    remaining: u32,
    limit: u32,
    resets_in: Duration,
}

impl Peek {
    /// The answer of a window with `remaining` of `limit` permits left, ending `resets_in`
    /// from the reading (`Duration::MAX` for a window that never ends). A `remaining` above
    /// `limit` is taken as `limit`: a window never has more left than its limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Peek;
    ///
    /// let peek = Peek::new(12, 10, Duration::from_secs(1));
    /// assert_eq!((peek.remaining(), peek.limit()), (10, 10));
    /// ```
    pub fn new(remaining: u32, limit: u32, resets_in: Duration) -> Peek {
        Peek {
            remaining: remaining.min(limit),
            limit,
            resets_in,
        }
    }

    /// Permits the window has left (`limit − used`, none where a lowered limit is below the
    /// count).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Peek;
    ///
    /// assert_eq!(Peek::new(4, 10, Duration::ZERO).remaining(), 4);
    /// ```
    pub fn remaining(&self) -> u32 {
        self.remaining
    }

    /// The limit in force when the answer was made.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Peek;
    ///
    /// assert_eq!(Peek::new(4, 10, Duration::ZERO).limit(), 10);
    /// ```
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Time from the reading until the window ends and the next one opens
    /// (`Duration::MAX` if none follows it).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Peek;
    ///
    /// assert_eq!(Peek::new(4, 10, Duration::from_secs(2)).resets_in(), Duration::from_secs(2));
    /// ```
    pub fn resets_in(&self) -> Duration {
        self.resets_in
    }

    /// Whether a call for `n` permits would have been granted at the reading (`n` up to
    /// [`remaining`](Peek::remaining)), had it been made instead of the peek.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Peek;
    ///
    /// let peek = Peek::new(2, 10, Duration::ZERO);
    /// assert!(peek.allows(0) && peek.allows(2) && !peek.allows(3));
    /// ```
    pub fn allows(&self, n: u32) -> bool {
        n <= self.remaining
    }
}
