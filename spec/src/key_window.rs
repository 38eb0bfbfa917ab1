//! One limit per key and window among many processes: a shared limiter's key with a limit of
//! its own is counted, in each window, by the limit of the window's first count; a process
//! that would decide the key by another limit is refused on it until the window ends. Where
//! the limiter's limit changes, a key without a limit of its own follows it, and a counter of
//! an older version of it (on a cluster) is rewritten by an attempt of the newer one.

use core::fmt;

/// The limit one key's current window is counted by, in a limiter shared by many processes:
/// `None` until the window's first count, then the limit (the key's own, or the limiter's)
/// that count was made under.
///
/// The server records with the window's counter what its last write was made under (each
/// count rewrites it): the key's own limit, if the writer gave it one, else a mark of the
/// limiter's limit, whatever that limit is (a change of the limiter's limit moves the keys
/// without a limit of their own with it), and where counters record the version of the
/// limiter's limit (a cluster's), that version. See [`KeyWindow::decide`].
///
/// # Examples
///
/// A paid tenant's window first counted by a process that gives it 50: a process that gives
/// it 50 counts on; one that gives it the default, 10, is refused, counting nothing.
///
/// ```
/// use fixed_window_spec::KeyWindow;
///
/// let mut window = KeyWindow::default();
/// assert_eq!(window.settle(50), Ok(50));
/// assert_eq!(window.settle(50), Ok(50));
/// let refused = window.settle(10).unwrap_err();
/// assert_eq!((refused.written, refused.proposed), (50, 10));
/// assert_eq!(window.limit(), Some(50));
/// // A window that has begun anew (or a change of the limit's version) settles afresh.
/// let mut next = KeyWindow::default();
/// assert_eq!(next.settle(10), Ok(10));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct KeyWindow {
    written: Option<KeyProposal>,
}

/// What an attempt on a key proposes to decide the key's window by: the key's own limit in
/// the attempt's process, if it gives the key one, else the limiter's limit, at the version
/// of the limiter's limit the attempt knows.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::KeyProposal;
///
/// let own = KeyProposal { own: Some(50), limiter: 10, version: 0 };
/// let default = KeyProposal { own: None, ..own };
/// assert_eq!((own.limit(), default.limit()), (50, 10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyProposal {
    /// The key's own limit in the attempt's process, if it gives the key one.
    pub own: Option<u32>,
    /// The limiter's limit the attempt is made under.
    pub limiter: u32,
    /// The version of the limiter's limit the attempt knows, where the key's counter records
    /// one (on a cluster); 0 where it records none (one node, where every attempt that reaches
    /// the counters holds the version stored).
    pub version: u32,
}

impl KeyProposal {
    /// The limit the attempt decides the key by: its own, else the limiter's.
    ///
    /// # Examples
    ///
    /// See [`KeyProposal`].
    pub fn limit(&self) -> u32 {
        self.own.unwrap_or(self.limiter)
    }
}

impl KeyWindow {
    /// What an attempt deciding the key by `proposed` (its own limit, or the limiter's) may
    /// do: count by `proposed` if the window has no count yet (which then settles it) or was
    /// counted by the same limit. The limiter's limit never changes here (see
    /// [`KeyWindow::decide`] for one that does).
    ///
    /// # Errors
    ///
    /// [`KeyConflict`] if the window was counted by another limit: the attempt is refused,
    /// never granted, and counts nothing.
    ///
    /// # Examples
    ///
    /// See [`KeyWindow`].
    ///
    /// ```
    /// use fixed_window_spec::KeyWindow;
    ///
    /// let mut window = KeyWindow::default();
    /// assert!(window.settle(3).is_ok() && window.settle(4).is_err());
    /// ```
    pub fn settle(&mut self, proposed: u32) -> Result<u32, KeyConflict> {
        let proposal = KeyProposal {
            own: Some(proposed),
            limiter: proposed,
            version: 0,
        };
        let limit = self.decide(proposal)?;
        if self.written.is_none() {
            self.written = Some(proposal);
        }
        Ok(limit)
    }

    /// The limit `proposal`'s attempt is decided by, where the limiter's limit may have
    /// changed since the window's last write: its own proposal's if the window has no count
    /// yet, or was last written at an older version of the limiter's limit (the server
    /// rewrites such a counter with the attempt's limits, its count kept); otherwise the
    /// limit the window was last written under, read now (a mark of the limiter's limit is
    /// the limiter's limit the attempt holds), if it is the one proposed.
    ///
    /// # Errors
    ///
    /// [`KeyConflict`] if the window, at the attempt's version, is counted by another limit
    /// than the one proposed: the attempt is refused, never granted, and counts nothing.
    ///
    /// # Examples
    ///
    /// A key without a limit of its own follows a change of the limiter's limit; one with a
    /// limit of its own keeps it, and a process deciding it by the limiter's is refused.
    ///
    /// ```
    /// use fixed_window_spec::{KeyProposal, KeyWindow};
    ///
    /// let before = KeyProposal { own: None, limiter: 10, version: 0 };
    /// let after = KeyProposal { limiter: 20, ..before };
    /// let mut follows = KeyWindow::default();
    /// follows.written_by(before);
    /// assert_eq!(follows.decide(after), Ok(20));
    ///
    /// let mut own = KeyWindow::default();
    /// own.written_by(KeyProposal { own: Some(50), ..before });
    /// assert_eq!(own.decide(KeyProposal { own: Some(50), ..after }), Ok(50));
    /// assert_eq!(own.decide(after).unwrap_err().written, 50);
    /// // A counter of an older version is rewritten with the attempt's limits.
    /// assert_eq!(own.decide(KeyProposal { version: 1, ..after }), Ok(20));
    /// ```
    pub fn decide(&self, proposal: KeyProposal) -> Result<u32, KeyConflict> {
        let proposed = proposal.limit();
        match self.written {
            None => Ok(proposed),
            Some(written) if written.version < proposal.version => Ok(proposed),
            Some(written) => {
                let written = written.own.unwrap_or(proposal.limiter);
                if written == proposed {
                    Ok(proposed)
                } else {
                    Err(KeyConflict { written, proposed })
                }
            }
        }
    }

    /// `proposal`'s attempt, decided by [`KeyWindow::decide`], wrote the window's counter
    /// (it counted, or rewrote a counter of an older version): the counter records its
    /// limits from now on.
    ///
    /// # Examples
    ///
    /// See [`KeyWindow::decide`].
    pub fn written_by(&mut self, proposal: KeyProposal) {
        self.written = Some(proposal);
    }

    /// Whether the window's counter was last written at an older version of the limiter's
    /// limit than `version` (an attempt of `version` rewrites it, counting or not).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{KeyProposal, KeyWindow};
    ///
    /// let mut window = KeyWindow::default();
    /// assert!(!window.older_than(1));
    /// window.written_by(KeyProposal { own: None, limiter: 10, version: 0 });
    /// assert!(window.older_than(1) && !window.older_than(0));
    /// ```
    pub fn older_than(&self, version: u32) -> bool {
        self.written.is_some_and(|w| w.version < version)
    }

    /// A live change of the key's limit to `limit` (at a new version of the limiter's limit,
    /// which every process adopts with it): the window is counted by `limit` from then on,
    /// its count kept, whatever limit it was counted by. It is not a disagreement: an
    /// attempt of the new version settles by `limit` (never refused for the limit the window
    /// was counted by before), and one of an older version is told the change instead of
    /// being decided.
    ///
    /// # Examples
    ///
    /// A window counted by the default, 10, when the key is raised to 50 live: counted by 50
    /// from then on.
    ///
    /// ```
    /// use fixed_window_spec::KeyWindow;
    ///
    /// let mut window = KeyWindow::default();
    /// assert_eq!(window.settle(10), Ok(10));
    /// window.change(50);
    /// assert_eq!(window.settle(50), Ok(50));
    /// assert!(window.settle(10).is_err());
    /// ```
    pub fn change(&mut self, limit: u32) {
        // Recorded as the key's own limit at the version the window was written at: a live
        // limit is the key's own, whatever the limiter's limit becomes.
        let version = self.written.map_or(0, |w| w.version);
        self.written = Some(KeyProposal {
            own: Some(limit),
            limiter: limit,
            version,
        });
    }

    /// The limit the window is counted by, `None` before its first count.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::KeyWindow;
    ///
    /// assert_eq!(KeyWindow::default().limit(), None);
    /// ```
    pub fn limit(&self) -> Option<u32> {
        self.written.map(|w| w.limit())
    }

    /// The limit the window is counted by where the limiter's limit is now `limiter`, `None`
    /// before its first count: a window last written under the limiter's limit follows it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{KeyProposal, KeyWindow};
    ///
    /// let mut window = KeyWindow::default();
    /// window.written_by(KeyProposal { own: None, limiter: 10, version: 0 });
    /// assert_eq!((window.limit(), window.limit_under(20)), (Some(10), Some(20)));
    /// ```
    pub fn limit_under(&self, limiter: u32) -> Option<u32> {
        self.written.map(|w| w.own.unwrap_or(limiter))
    }
}

/// An attempt that would decide a key's window by another limit than the one it is counted by.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::KeyConflict;
///
/// let conflict = KeyConflict { written: 50, proposed: 10 };
/// assert_eq!(conflict.to_string(), "the key's window is counted by 50, proposed 10");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyConflict {
    /// The limit the window is counted by.
    pub written: u32,
    /// The limit the refused attempt would have decided it by.
    pub proposed: u32,
}

impl fmt::Display for KeyConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the key's window is counted by {}, proposed {}",
            self.written, self.proposed
        )
    }
}
