//! What the shared limiter tells its listeners.

use fixed_window::{Instant, RateLimiterEvent};

use crate::eviction::EvictionRisk;
use crate::unavailable::Unavailable;

/// An event emitted to the listeners added with
/// [`SharedRateLimiter::with_listener`](crate::SharedRateLimiter::with_listener), with the key
/// the call was for.
///
/// Decisions the rules define are core's [`RateLimiterEvent`]s, the same whether the server or
/// the local memory of full windows decided; `at` is the limiter's local clock reading when
/// the decision was known.
///
/// # Examples
///
/// ```
/// use fixed_window::{Instant, RateLimiterEvent};
/// use fixed_window_redis::SharedEvent;
///
/// let event = SharedEvent::Limiter(RateLimiterEvent::Permitted { at: Instant::ZERO, name: "api", remaining: 3 });
/// assert_eq!((event.name(), event.at()), ("api", Instant::ZERO));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SharedEvent {
    /// `Permitted` (the server counted a permit) or `Rejected` (the window is full and does
    /// not open by the call's deadline).
    Limiter(RateLimiterEvent),
    /// The server could not decide. `failed_open` says whether the fail-open policy let the
    /// call through uncounted; otherwise the call fails with
    /// [`SharedError::Unavailable`](crate::SharedError::Unavailable).
    Unavailable {
        /// The local clock's reading when the failure was known.
        at: Instant,
        /// The limiter's name.
        name: &'static str,
        /// What went wrong.
        cause: Unavailable,
        /// Whether the call got a permit anyway.
        failed_open: bool,
    },
    /// The server's memory policy may evict the limiter's keys (see [`EvictionRisk`]): read
    /// when the limiter registered, and told to each listener once, with the empty key (it is
    /// about no key): with the first call after the registration, or when the listener is
    /// added if that comes later.
    EvictionRisk {
        /// The local clock's reading when it was told.
        at: Instant,
        /// The limiter's name.
        name: &'static str,
        /// The policy, and what it may evict.
        risk: EvictionRisk,
    },
}

impl SharedEvent {
    /// The limiter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{SharedEvent, Unavailable, UnavailableKind};
    ///
    /// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// let event = SharedEvent::Unavailable { at: Instant::ZERO, name: "api", cause, failed_open: true };
    /// assert_eq!(event.name(), "api");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            SharedEvent::Limiter(event) => event.name(),
            SharedEvent::Unavailable { name, .. } | SharedEvent::EvictionRisk { name, .. } => name,
        }
    }

    /// When it happened, on the limiter's clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{SharedEvent, Unavailable, UnavailableKind};
    ///
    /// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// let at = Instant::from_nanos(9);
    /// assert_eq!(SharedEvent::Unavailable { at, name: "api", cause, failed_open: false }.at(), at);
    /// ```
    pub fn at(&self) -> Instant {
        match self {
            SharedEvent::Limiter(event) => event.at(),
            SharedEvent::Unavailable { at, .. } | SharedEvent::EvictionRisk { at, .. } => *at,
        }
    }
}
