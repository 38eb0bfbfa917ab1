//! Registration: whether this process has stored or checked its configuration on the server,
//! and when a limiter started without the server tries again.

use core::time::Duration;

use crate::error::{Conflict, SharedError};
use crate::unavailable::{Unavailable, UnavailableKind};

/// The wait before the first background retry of a failed registration; each further failure
/// doubles it, up to [`REGISTRATION_RETRY_MAX`].
pub const REGISTRATION_RETRY_MIN: Duration = Duration::from_millis(100);

/// The longest wait between two background registrations: a server that comes back is used
/// within this long even if no call comes to try it sooner.
pub const REGISTRATION_RETRY_MAX: Duration = Duration::from_secs(5);

/// Where a process stands with the server: not registered yet, registered (the shared origin
/// known), or refused (the server holds another configuration for the name).
///
/// Registering stores this process's configuration on the server if none is stored (fixing the
/// shared origin at the server's time) or checks it against the stored one, and loads the
/// script. [`SharedRateLimiter::connect`](crate::SharedRateLimiter::connect) registers before it
/// returns; a limiter made with [`SharedRateLimiter::start`](crate::SharedRateLimiter::start)
/// may not have, and until it has, its attempts are not sent: the fail policy answers them
/// ([`Protocol::unregistered`](crate::Protocol::unregistered)).
///
/// This is the sans-IO state a driver keeps: it [`record`](Registration::record)s each try's
/// outcome, and asks when to try again in the background ([`retry_in`](Registration::retry_in)).
///
/// # Examples
///
/// Two failed tries, then the server answers.
///
/// ```
/// use core::time::Duration;
/// use fixed_window_redis::{Registration, SharedError, Unavailable, UnavailableKind};
///
/// let mut registration = Registration::new();
/// let refused = Unavailable::new(UnavailableKind::Connection, "connection refused");
/// for _ in 0..2 {
///     registration.record(Err(SharedError::Unavailable { name: "api", cause: refused.clone() }));
/// }
/// assert_eq!(registration.failures(), 2);
/// assert_eq!(registration.retry_in(), Duration::from_millis(200));
/// assert_eq!(registration.cause(), Some(&refused));
/// registration.record(Ok(1_700_000_000_000_000));
/// assert_eq!(registration, Registration::Registered { origin: 1_700_000_000_000_000 });
/// assert!(registration.is_settled());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Registration {
    /// Not registered yet: the attempts are not sent.
    Pending {
        /// How many tries have failed.
        failures: u32,
        /// Why the last one failed, if one has.
        cause: Option<Unavailable>,
    },
    /// Registered: attempts go to the server.
    Registered {
        /// The shared origin, in microseconds on the server's clock.
        origin: u64,
    },
    /// The server holds another limit or period for this name. Attempts still go to the
    /// server, whose script refuses each ([`SharedError::Conflict`]) until the stored
    /// configuration is retired or this process's changes; nothing is counted meanwhile.
    Refused(Conflict),
}

impl Registration {
    /// Not registered, nothing tried yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::Registration;
    ///
    /// let registration = Registration::new();
    /// assert!(!registration.is_settled());
    /// assert_eq!((registration.failures(), registration.cause()), (0, None));
    /// ```
    pub fn new() -> Registration {
        Registration::Pending {
            failures: 0,
            cause: None,
        }
    }

    /// Records a try's outcome, as [`Protocol::registered`](crate::Protocol::registered) gives
    /// it: the origin, a conflict, or why the server could not answer. Once settled
    /// (registered or refused) it stays so, whatever is recorded later.
    ///
    /// # Examples
    ///
    /// A conflict settles it: there is no point trying again.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Conflict, Registration, SharedError};
    ///
    /// let conflict = Conflict {
    ///     name: "api",
    ///     limit: 5,
    ///     period: Duration::from_secs(1),
    ///     origin: None,
    ///     stored_limit: 6,
    ///     stored_period: Duration::from_secs(1),
    ///     stored_origin: 0,
    /// };
    /// let mut registration = Registration::new();
    /// registration.record(Err(SharedError::Conflict(conflict)));
    /// assert_eq!(registration, Registration::Refused(conflict));
    /// registration.record(Ok(5));
    /// assert_eq!(registration, Registration::Refused(conflict));
    /// ```
    pub fn record(&mut self, outcome: Result<u64, SharedError>) {
        let Registration::Pending { failures, .. } = *self else {
            return;
        };
        *self = match outcome {
            Ok(origin) => Registration::Registered { origin },
            Err(SharedError::Conflict(conflict)) => Registration::Refused(conflict),
            Err(SharedError::Unavailable { cause, .. }) => Registration::Pending {
                failures: failures.saturating_add(1),
                cause: Some(cause),
            },
            // A registration is answered by nothing else; were it, it did not register.
            Err(other) => Registration::Pending {
                failures: failures.saturating_add(1),
                cause: Some(Unavailable::new(UnavailableKind::Reply, other.to_string())),
            },
        };
    }

    /// Whether the server has answered the registration (registered or refused): from then on
    /// attempts are sent, and no further try is needed.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::Registration;
    ///
    /// assert!(Registration::Registered { origin: 0 }.is_settled());
    /// assert!(!Registration::new().is_settled());
    /// ```
    pub fn is_settled(&self) -> bool {
        !matches!(self, Registration::Pending { .. })
    }

    /// The shared origin, once registered.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::Registration;
    ///
    /// assert_eq!(Registration::Registered { origin: 7 }.origin(), Some(7));
    /// assert_eq!(Registration::new().origin(), None);
    /// ```
    pub fn origin(&self) -> Option<u64> {
        match self {
            Registration::Registered { origin } => Some(*origin),
            _ => None,
        }
    }

    /// How many tries have failed (0 once settled).
    ///
    /// # Examples
    ///
    /// See [`Registration`].
    ///
    /// ```
    /// assert_eq!(fixed_window_redis::Registration::new().failures(), 0);
    /// ```
    pub fn failures(&self) -> u32 {
        match self {
            Registration::Pending { failures, .. } => *failures,
            _ => 0,
        }
    }

    /// Why the last try failed, while not registered.
    ///
    /// # Examples
    ///
    /// See [`Registration`].
    ///
    /// ```
    /// assert_eq!(fixed_window_redis::Registration::new().cause(), None);
    /// ```
    pub fn cause(&self) -> Option<&Unavailable> {
        match self {
            Registration::Pending { cause, .. } => cause.as_ref(),
            _ => None,
        }
    }

    /// How long a driver waits before trying again in the background: nothing before the
    /// first try, then [`REGISTRATION_RETRY_MIN`] doubled for each further failure, at most
    /// [`REGISTRATION_RETRY_MAX`]. (A call on a limiter not registered tries at once,
    /// whatever this says.)
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{REGISTRATION_RETRY_MAX, Registration, SharedError, Unavailable, UnavailableKind};
    ///
    /// let mut registration = Registration::new();
    /// assert_eq!(registration.retry_in(), Duration::ZERO);
    /// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// let mut waits = Vec::new();
    /// for _ in 0..8 {
    ///     registration.record(Err(SharedError::Unavailable { name: "api", cause: cause.clone() }));
    ///     waits.push(registration.retry_in().as_millis());
    /// }
    /// assert_eq!(waits, [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
    /// assert!(registration.retry_in() <= REGISTRATION_RETRY_MAX);
    /// ```
    pub fn retry_in(&self) -> Duration {
        match self.failures() {
            0 => Duration::ZERO,
            failures => {
                let doublings = (failures - 1).min(16);
                REGISTRATION_RETRY_MIN
                    .saturating_mul(1 << doublings)
                    .min(REGISTRATION_RETRY_MAX)
            }
        }
    }
}

impl Default for Registration {
    fn default() -> Registration {
        Registration::new()
    }
}
