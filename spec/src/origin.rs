//! One limit kept by many processes: the shared origin every process adopts, and what a store
//! that loses its state may let through.

use core::fmt;

use crate::rules::Rules;

/// The configuration stored once for a shared limiter: the first process's origin, period and
/// limit. Every later process adopts the stored origin; one configured with another period or
/// limit is refused, since two grids or two limits for one name would silently disagree.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::Origin;
///
/// let first = Origin { origin: 100, period: 10, limit: 5 };
/// let later = Origin { origin: 250, period: 10, limit: 5 };
/// assert_eq!(Origin::settle(None, first), Ok(first));
/// assert_eq!(Origin::settle(Some(first), later), Ok(first));
/// let other = Origin { period: 20, ..later };
/// assert!(Origin::settle(Some(first), other).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Origin {
    /// Where window 0 starts, on the store's clock.
    pub origin: u128,
    /// The window length.
    pub period: u128,
    /// Permits per window.
    pub limit: u32,
}

impl Origin {
    /// What a process proposing `proposed` ends up with when the store holds `stored`: the
    /// stored configuration if there is one and it agrees on period and limit, `proposed` if
    /// none is stored, and a [`Conflict`] otherwise.
    ///
    /// # Errors
    ///
    /// [`Conflict`] if the stored period or limit differs from the proposed one.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Origin;
    ///
    /// let stored = Origin { origin: 0, period: 10, limit: 5 };
    /// let proposed = Origin { limit: 6, ..stored };
    /// let conflict = Origin::settle(Some(stored), proposed).unwrap_err();
    /// assert_eq!(conflict.stored, stored);
    /// ```
    pub fn settle(stored: Option<Origin>, proposed: Origin) -> Result<Origin, Conflict> {
        match stored {
            None => Ok(proposed),
            Some(stored) if (stored.period, stored.limit) == (proposed.period, proposed.limit) => {
                Ok(stored)
            }
            Some(stored) => Err(Conflict { stored, proposed }),
        }
    }

    /// The rules of a process that adopted this origin and waits at most `max_wait`; `None`
    /// for a zero period or limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Origin;
    ///
    /// let rules = Origin { origin: 7, period: 10, limit: 5 }.rules(0).expect("valid");
    /// assert_eq!(rules.grid.index_of(17), 1);
    /// ```
    pub fn rules(&self, max_wait: u128) -> Option<Rules> {
        Rules::new(self.origin, self.limit, self.period, max_wait)
    }
}

/// A process configured differently from the stored configuration of its limiter.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::Origin;
///
/// let stored = Origin { origin: 0, period: 10, limit: 5 };
/// let conflict = Origin::settle(Some(stored), Origin { period: 20, ..stored }).unwrap_err();
/// assert_eq!(conflict.to_string(), "stored period 10 ns and limit 5, configured 20 ns and 5");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    /// What the store holds.
    pub stored: Origin,
    /// What the process was configured with.
    pub proposed: Origin,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "stored period {} ns and limit {}, configured {} ns and {}",
            self.stored.period, self.stored.limit, self.proposed.period, self.proposed.limit
        )
    }
}

/// The permits of one key's window, granted and forgotten: when a store loses its state (a
/// restart without persistence, a failover to a replica that lags), the permits it had counted
/// in the current window are forgotten, and the window may then grant `limit` more than its
/// count says. The bound that still holds: at most `limit` plus the forgotten permits.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::Ledger;
///
/// let mut ledger = Ledger::new(2);
/// assert!(ledger.grant(0) && ledger.grant(0));
/// ledger.forget(0, 2);
/// assert!(ledger.grant(0) && ledger.grant(0), "two forgotten permits explain two more");
/// assert!(!ledger.grant(0), "a fifth is more than the loss explains");
/// assert_eq!((ledger.granted(), ledger.allowed()), (5, 4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ledger {
    limit: u32,
    index: u128,
    granted: u64,
    forgotten: u64,
}

impl Ledger {
    /// An empty ledger for windows of `limit` permits.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Ledger;
    ///
    /// assert_eq!(Ledger::new(3).allowed(), 3);
    /// ```
    pub fn new(limit: u32) -> Ledger {
        Ledger {
            limit,
            index: 0,
            granted: 0,
            forgotten: 0,
        }
    }

    fn enter(&mut self, index: u128) {
        if index != self.index {
            self.index = index;
            self.granted = 0;
            self.forgotten = 0;
        }
    }

    /// Records a permit granted in window `index`; whether it is within what the window may
    /// grant ([`Ledger::allowed`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Ledger;
    ///
    /// let mut ledger = Ledger::new(1);
    /// assert!(ledger.grant(0));
    /// assert!(ledger.grant(1), "a new window starts at zero");
    /// ```
    pub fn grant(&mut self, index: u128) -> bool {
        self.enter(index);
        self.granted += 1;
        self.granted <= self.allowed()
    }

    /// Records that the store forgot `permits` of window `index`'s permits.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Ledger;
    ///
    /// let mut ledger = Ledger::new(1);
    /// ledger.forget(0, 1);
    /// assert_eq!(ledger.allowed(), 2);
    /// ```
    pub fn forget(&mut self, index: u128, permits: u64) {
        self.enter(index);
        self.forgotten += permits;
    }

    /// Permits granted in the ledger's window.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Ledger;
    ///
    /// let mut ledger = Ledger::new(1);
    /// ledger.grant(3);
    /// assert_eq!(ledger.granted(), 1);
    /// ```
    pub fn granted(&self) -> u64 {
        self.granted
    }

    /// What the window may grant: `limit` plus the permits the store forgot.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Ledger;
    ///
    /// assert_eq!(Ledger::new(4).allowed(), 4);
    /// ```
    pub fn allowed(&self) -> u64 {
        u64::from(self.limit) + self.forgotten
    }
}
