//! Proof of a granted permit, counted by the server or granted by the fail-open policy.

use core::time::Duration;

use fixed_window::Instant;

use crate::unavailable::Unavailable;

/// A permit from a [`SharedRateLimiter`](crate::SharedRateLimiter).
///
/// # Examples
///
/// A counted permit says how many are left; a fail-open one says why nobody counted it.
///
/// ```
/// use fixed_window::Instant;
/// use fixed_window_redis::{SharedPermit, Unavailable, UnavailableKind};
///
/// let counted = SharedPermit::counted(Instant::ZERO, 4, core::time::Duration::from_secs(1));
/// assert_eq!((counted.remaining(), counted.failed_open()), (Some(4), None));
/// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
/// let uncounted = SharedPermit::failed_open_with(Instant::ZERO, cause.clone());
/// assert_eq!((uncounted.remaining(), uncounted.failed_open()), (None, Some(&cause)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedPermit {
    at: Instant,
    remaining: Option<u32>,
    reset: Option<Duration>,
    window_start: Option<Duration>,
    failed_open: Option<Unavailable>,
}

impl SharedPermit {
    /// A permit the server counted at local instant `at`, leaving `remaining` in a window that
    /// ends `reset` later by the server's clock.
    ///
    /// # Examples
    ///
    /// See [`SharedPermit`].
    ///
    /// ```
    /// use fixed_window::Instant;
    ///
    /// assert_eq!(fixed_window_redis::SharedPermit::counted(Instant::ZERO, 0, core::time::Duration::from_secs(1)).remaining(), Some(0));
    /// ```
    pub fn counted(at: Instant, remaining: u32, reset: Duration) -> SharedPermit {
        SharedPermit {
            at,
            remaining: Some(remaining),
            reset: Some(reset),
            window_start: None,
            failed_open: None,
        }
    }

    /// A permit the fail-open policy granted at `at` because of `cause`.
    ///
    /// # Examples
    ///
    /// See [`SharedPermit`].
    ///
    /// ```
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{SharedPermit, Unavailable, UnavailableKind};
    ///
    /// let cause = Unavailable::new(UnavailableKind::Connection, "refused");
    /// assert!(SharedPermit::failed_open_with(Instant::ZERO, cause).failed_open().is_some());
    /// ```
    pub fn failed_open_with(at: Instant, cause: Unavailable) -> SharedPermit {
        SharedPermit {
            at,
            remaining: None,
            reset: None,
            window_start: None,
            failed_open: Some(cause),
        }
    }

    /// The local clock's reading when the permit was known.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::Instant;
    ///
    /// let at = Instant::from_nanos(3);
    /// assert_eq!(fixed_window_redis::SharedPermit::counted(at, 0, core::time::Duration::from_secs(1)).at(), at);
    /// ```
    pub fn at(&self) -> Instant {
        self.at
    }

    /// Permits left in the key's window after this one (`limit − used`), or `None` for a
    /// permit nobody counted.
    ///
    /// # Examples
    ///
    /// See [`SharedPermit`].
    ///
    /// ```
    /// use fixed_window::Instant;
    ///
    /// assert_eq!(fixed_window_redis::SharedPermit::counted(Instant::ZERO, 2, core::time::Duration::from_secs(1)).remaining(), Some(2));
    /// ```
    pub fn remaining(&self) -> Option<u32> {
        self.remaining
    }

    /// The time from the decision until the key's window ends, by the server's clock, or
    /// `None` for a permit nobody counted: what an HTTP answer reports as the time to reset.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    ///
    /// let permit = fixed_window_redis::SharedPermit::counted(Instant::ZERO, 2, core::time::Duration::from_secs(9));
    /// assert_eq!(permit.reset_after(), Some(Duration::from_secs(9)));
    /// ```
    pub fn reset_after(&self) -> Option<Duration> {
        self.reset
    }

    /// This permit, counted in the window that starts `start` after the Unix epoch on the
    /// clock of the server that counted it ([`window_start`](SharedPermit::window_start)).
    /// A permit nobody counted has no window and stays so.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{SharedPermit, Unavailable, UnavailableKind};
    ///
    /// let start = Duration::from_secs(1_700_000_000);
    /// let permit = SharedPermit::counted(Instant::ZERO, 2, Duration::from_secs(1)).in_window(start);
    /// assert_eq!(permit.window_start(), Some(start));
    /// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// assert_eq!(SharedPermit::failed_open_with(Instant::ZERO, cause).in_window(start).window_start(), None);
    /// ```
    #[must_use]
    pub fn in_window(self, start: Duration) -> SharedPermit {
        SharedPermit {
            window_start: self.reset.map(|_| start),
            ..self
        }
    }

    /// The start of the window this permit counts in, as the time since the Unix epoch on
    /// the clock of the server that counted it (its `TIME`), or `None` for a permit nobody
    /// counted. For a permit granted from a leased share
    /// ([`Config::with_lease`](crate::Config::with_lease)) it is the window the share was
    /// counted in: the permit belongs to that window whatever the local clock read when it
    /// was granted, so permits grouped by it are grouped as the server counted them.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    ///
    /// let permit = fixed_window_redis::SharedPermit::counted(Instant::ZERO, 2, Duration::from_secs(1));
    /// assert_eq!(permit.window_start(), None);
    /// assert_eq!(permit.in_window(Duration::from_secs(60)).window_start(), Some(Duration::from_secs(60)));
    /// ```
    pub fn window_start(&self) -> Option<Duration> {
        self.window_start
    }

    /// Why the server did not count this permit, if the fail-open policy granted it.
    ///
    /// # Examples
    ///
    /// See [`SharedPermit`].
    ///
    /// ```
    /// use fixed_window::Instant;
    ///
    /// assert_eq!(fixed_window_redis::SharedPermit::counted(Instant::ZERO, 2, core::time::Duration::from_secs(1)).failed_open(), None);
    /// ```
    pub fn failed_open(&self) -> Option<&Unavailable> {
        self.failed_open.as_ref()
    }
}
