//! The crate's own instant: nanoseconds on a clock's timeline, with a maximum.

use core::fmt;
use core::time::Duration;

/// A point on a [`Clock`](crate::Clock)'s timeline, in whole nanoseconds since that clock's
/// epoch.
///
/// `std::time::Instant` has no maximum and panics when arithmetic overflows it; this type has
/// [`Instant::MAX`] (about 584 years after the epoch) and only checked and saturating
/// arithmetic, so overflow is a value the limiter can reason about rather than a panic.
/// Instants from different clocks are not comparable in any meaningful way.
///
/// # Examples
///
/// Saturating arithmetic stops at [`Instant::MAX`] instead of panicking.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
///
/// let near_end = Instant::MAX.saturating_sub(Duration::from_nanos(5));
/// assert_eq!(near_end.saturating_add(Duration::from_secs(1)), Instant::MAX);
/// assert_eq!(near_end.checked_add(Duration::from_secs(1)), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The clock's epoch.
    pub const ZERO: Instant = Instant(0);

    /// The last representable instant, `u64::MAX` nanoseconds after the epoch.
    pub const MAX: Instant = Instant(u64::MAX);

    /// The instant `nanos` nanoseconds after the epoch.
    ///
    /// # Examples
    ///
    /// An instant round-trips through its nanosecond count.
    ///
    /// ```
    /// use fixed_window::Instant;
    ///
    /// assert_eq!(Instant::from_nanos(42).as_nanos(), 42);
    /// ```
    #[inline]
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }

    /// Nanoseconds since the epoch.
    ///
    /// # Examples
    ///
    /// [`Instant::MAX`] is `u64::MAX` nanoseconds.
    ///
    /// ```
    /// use fixed_window::Instant;
    ///
    /// assert_eq!(Instant::MAX.as_nanos(), u64::MAX);
    /// ```
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// `self + d`, or `None` if that is past [`Instant::MAX`].
    ///
    /// # Examples
    ///
    /// Adding one nanosecond to the maximum does not fit.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    ///
    /// assert_eq!(Instant::ZERO.checked_add(Duration::from_nanos(3)), Some(Instant::from_nanos(3)));
    /// assert_eq!(Instant::MAX.checked_add(Duration::from_nanos(1)), None);
    /// ```
    #[inline]
    pub fn checked_add(self, d: Duration) -> Option<Instant> {
        self.0.checked_add(duration_to_nanos(d)?).map(Instant)
    }

    /// `self + d`, clamped to [`Instant::MAX`].
    ///
    /// # Examples
    ///
    /// `Duration::MAX` from any instant is [`Instant::MAX`]: an unreachable deadline.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    ///
    /// assert_eq!(Instant::from_nanos(7).saturating_add(Duration::MAX), Instant::MAX);
    /// ```
    #[inline]
    #[must_use]
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(saturating_nanos(d)))
    }

    /// `self - d`, clamped to [`Instant::ZERO`].
    ///
    /// # Examples
    ///
    /// Subtracting past the epoch stops at the epoch.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    ///
    /// assert_eq!(Instant::from_nanos(5).saturating_sub(Duration::from_secs(1)), Instant::ZERO);
    /// ```
    #[inline]
    #[must_use]
    pub fn saturating_sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(saturating_nanos(d)))
    }

    /// The time from `earlier` to `self`, or zero if `earlier` is later.
    ///
    /// # Examples
    ///
    /// A clock that stepped backwards yields zero rather than a panic.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    ///
    /// let (a, b) = (Instant::from_nanos(10), Instant::from_nanos(25));
    /// assert_eq!(b.saturating_duration_since(a), Duration::from_nanos(15));
    /// assert_eq!(a.saturating_duration_since(b), Duration::ZERO);
    /// ```
    #[inline]
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

/// `d` in whole nanoseconds, or `None` if that does not fit in a `u64`.
#[inline]
pub(crate) fn duration_to_nanos(d: Duration) -> Option<u64> {
    u64::try_from(d.as_nanos()).ok()
}

/// `d` in whole nanoseconds, clamped to `u64::MAX` (about 584 years), so that no duration a
/// caller passes can overflow a conversion.
#[inline]
pub(crate) fn saturating_nanos(d: Duration) -> u64 {
    duration_to_nanos(d).unwrap_or(u64::MAX)
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Instant({}ns)", self.0)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturating_nanos_clamps_durations_longer_than_the_range() {
        assert_eq!(saturating_nanos(Duration::MAX), u64::MAX);
        assert_eq!(saturating_nanos(Duration::from_nanos(u64::MAX)), u64::MAX);
        assert_eq!(saturating_nanos(Duration::from_secs(1)), 1_000_000_000);
    }

    #[test]
    fn checked_add_rejects_durations_beyond_u64_nanoseconds() {
        assert_eq!(Instant::ZERO.checked_add(Duration::MAX), None);
        assert_eq!(
            Instant::ZERO.checked_add(Duration::from_nanos(u64::MAX)),
            Some(Instant::MAX)
        );
    }
}
