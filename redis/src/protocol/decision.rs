//! How an attempt starts ([`Begin`]), what it decided ([`Decision`]), and what the caller does
//! next ([`Conclusion`]).

use core::time::Duration;

use fixed_window::{Instant, RateLimiterEvent};

use crate::error::{Conflict, SharedError};
use crate::event::SharedEvent;
use crate::permit::SharedPermit;
use crate::unavailable::Unavailable;

use super::ScriptCall;

/// How an attempt starts: decided locally, or by the server through a script call.
///
/// # Examples
///
/// See [`Protocol`](crate::Protocol).
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::{Begin, Config, Protocol};
///
/// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
/// assert!(matches!(protocol.begin("k", Instant::ZERO, Instant::ZERO), Ok(Begin::Call(_))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// Decided without a round trip: the key's window is known to be full.
    Decided(Decision),
    /// Send this call, then give its outcome to [`Protocol::finish`](crate::Protocol::finish).
    Call(ScriptCall),
}

/// What an attempt decided.
///
/// # Examples
///
/// See [`Protocol`](crate::Protocol).
///
/// ```
/// use core::time::Duration;
/// use fixed_window_redis::Decision;
///
/// let decision = Decision::Rejected { retry_after: Duration::from_secs(1), local: true };
/// assert!(!decision.is_permit());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The server counted a permit; `remaining` are left in the key's window.
    Permitted {
        /// `limit − used` after this permit.
        remaining: u32,
        /// The time until the key's window ends, by the server's clock.
        reset: Duration,
        /// The start of the window the permit counts in, in microseconds on the clock of the
        /// server that counted it (its `TIME`): for a permit from a leased share, the window
        /// the share was counted in. The window a permit belongs to, whatever the local
        /// clock read when it was granted.
        window_start: u64,
    },
    /// The window is full and may open by the deadline: sleep until `until` (the latest
    /// local instant the window can open at, or the deadline if earlier), then attempt again.
    Wait {
        /// When to attempt again; always after the attempt's `now`.
        until: Instant,
    },
    /// The window is full and cannot open by the deadline.
    Rejected {
        /// The time until the next window opens: the server's figure for a server decision,
        /// the latest local estimate for a local one.
        retry_after: Duration,
        /// Decided in this process: from the local memory of full windows, without a round
        /// trip, or by the window of [`FailPolicy::Local`](crate::FailPolicy::Local) after the
        /// server could not decide.
        local: bool,
    },
    /// The server could not decide and the policy is [`FailPolicy::Open`](crate::FailPolicy::Open): a permit nobody
    /// counted; or [`FailPolicy::Local`](crate::FailPolicy::Local): a permit only this
    /// process counted.
    FailedOpen(Unavailable),
    /// The server could not decide and the policy is [`FailPolicy::Closed`](crate::FailPolicy::Closed) (or
    /// [`FailPolicy::Local`](crate::FailPolicy::Local), until its driver decides by the local
    /// window: see [`LocalShare`](crate::LocalShare)).
    Unavailable(Unavailable),
    /// The server holds a different configuration; nothing was counted.
    Conflict(Conflict),
    /// The limit was changed (by another process, through the server) since this attempt
    /// was begun, and this process has adopted the new one, `limit`: nothing was counted.
    /// Begin the attempt again: it goes under the new limit. A process that reads the live
    /// limits of keys ([`Protocol::limits_read`](crate::Protocol::limits_read)) adopts the
    /// new version only with them: `limit` is the server's, and
    /// [`Protocol::limits_due`](crate::Protocol::limits_due) says to read them first. (A call that meets this again
    /// and again, as the limit keeps changing, ends with it: [`Protocol::conclude`](crate::Protocol::conclude) makes it
    /// [`SharedError::Unavailable`].)
    LimitChanged {
        /// The limit now in effect (on the server, not yet adopted, while
        /// [`limits_due`](crate::Protocol::limits_due)).
        limit: u32,
    },
    /// More permits at once than the limit in effect, `limit`, lets a window hold: the call
    /// ends, never waiting for a window that could not grant it, and nothing is sent. A call
    /// checked against the limit when it began meets this only after a lowering (its own
    /// process's, or another's that an attempt adopted), at its next attempt.
    TooMany {
        /// The permits the attempt asked for.
        requested: u32,
        /// The limit in effect.
        limit: u32,
    },
}

impl Decision {
    /// Whether the caller may proceed (a counted permit, or one granted by the fail-open
    /// policy).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::Decision;
    ///
    /// assert!(Decision::Permitted { remaining: 0, reset: Duration::from_secs(1), window_start: 0 }.is_permit());
    /// ```
    pub fn is_permit(&self) -> bool {
        matches!(self, Decision::Permitted { .. } | Decision::FailedOpen(_))
    }

    /// The event listeners get for this decision, made at `at` by the limiter `name`; `None`
    /// for a [`Decision::Wait`], a [`Decision::Conflict`] and a [`Decision::LimitChanged`],
    /// which are not outcomes the rules define, and for a [`Decision::TooMany`], which is
    /// neither a permit nor a rejection.
    ///
    /// # Examples
    ///
    /// A rejection is core's event, whether the server or the local memory decided it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, RateLimiterError, RateLimiterEvent};
    /// use fixed_window_redis::{Decision, SharedEvent};
    ///
    /// let decision = Decision::Rejected { retry_after: Duration::from_secs(1), local: true };
    /// assert_eq!(
    ///     decision.event(Instant::ZERO, "api"),
    ///     Some(SharedEvent::Limiter(RateLimiterEvent::Rejected {
    ///         at: Instant::ZERO,
    ///         name: "api",
    ///         retry_after: Duration::from_secs(1),
    ///     }))
    /// );
    /// ```
    pub fn event(&self, at: Instant, name: &'static str) -> Option<SharedEvent> {
        match self {
            Decision::Permitted { remaining, .. } => {
                Some(SharedEvent::Limiter(RateLimiterEvent::Permitted {
                    at,
                    name,
                    remaining: *remaining,
                }))
            }
            Decision::Rejected { retry_after, .. } => {
                Some(SharedEvent::Limiter(RateLimiterEvent::Rejected {
                    at,
                    name,
                    retry_after: *retry_after,
                }))
            }
            Decision::FailedOpen(cause) => Some(SharedEvent::Unavailable {
                at,
                name,
                cause: cause.clone(),
                failed_open: true,
            }),
            Decision::Unavailable(cause) => Some(SharedEvent::Unavailable {
                at,
                name,
                cause: cause.clone(),
                failed_open: false,
            }),
            Decision::Wait { .. }
            | Decision::Conflict(_)
            | Decision::LimitChanged { .. }
            | Decision::TooMany { .. } => None,
        }
    }
}

/// What a call does after an attempt's [`Decision`]: return, telling listeners, or sleep and
/// attempt again. The production limiter and a simulator both get it from
/// [`Protocol::conclude`](crate::Protocol::conclude), so results, errors and events are made by the same code.
///
/// # Examples
///
/// See [`Protocol::conclude`](crate::Protocol::conclude).
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::{Conclusion, Config, Decision, Protocol};
///
/// let protocol = Protocol::new(Config::of("api", 1, Duration::from_secs(1))?);
/// let decision = Decision::Permitted { remaining: 0, reset: Duration::from_secs(1), window_start: 0 };
/// let permitted = protocol.conclude("k", &decision, Instant::ZERO, true);
/// assert!(matches!(permitted, Conclusion::Done { result: Ok(_), event: Some(_) }));
/// # Ok::<(), fixed_window_redis::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conclusion {
    /// The call ends with `result`; listeners get `event` first, if there is one.
    Done {
        /// What the call returns.
        result: Result<SharedPermit, SharedError>,
        /// The event of the decision.
        event: Option<SharedEvent>,
    },
    /// The call sleeps this long (on its clock), then attempts again.
    Sleep(Duration),
}
