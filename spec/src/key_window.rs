//! One limit per key and window among many processes: a shared limiter's key with a limit of
//! its own is counted, in each window, by the limit of the window's first count; a process
//! that would decide the key by another limit is refused on it until the window ends.

use core::fmt;

/// The limit one key's current window is counted by, in a limiter shared by many processes,
/// at one version of the limiter's limit: `None` until the window's first count, then the
/// limit (the key's own, or the limiter's) that count was made under.
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
    written: Option<u32>,
}

impl KeyWindow {
    /// What an attempt deciding the key by `proposed` (its own limit, or the limiter's) may
    /// do: count by `proposed` if the window has no count yet (which then settles it) or was
    /// counted by the same limit.
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
        match self.written {
            None => {
                self.written = Some(proposed);
                Ok(proposed)
            }
            Some(written) if written == proposed => Ok(proposed),
            Some(written) => Err(KeyConflict { written, proposed }),
        }
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
        self.written = Some(limit);
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
        self.written
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
