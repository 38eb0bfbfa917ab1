//! Window arithmetic: which window holds an instant, and where a window starts and ends.
//!
//! Windows are numbered from the limiter's origin: window `k` is
//! `[origin + k·period, origin + (k+1)·period)`. All arithmetic is exact on `u64` nanoseconds
//! and checked, so "the next window would start past `Instant::MAX`" is an ordinary `None`.

use core::time::Duration;

use crate::instant::Instant;

/// The grid of windows a limiter lives on: its origin and its period in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    origin: u64,
    /// At least 1. A configured period longer than `u64::MAX` nanoseconds is stored as
    /// `u64::MAX`; `last_index` keeps the exact answer for it (one window, never ending).
    period: u64,
    /// The highest index whose window starts within the timeline, from the exact period.
    last_index: u64,
}

impl Grid {
    /// The grid starting at `origin` with windows `period` long (`period` is not zero).
    pub(crate) fn new(origin: Instant, period: Duration) -> Grid {
        debug_assert!(
            !period.is_zero(),
            "a zero period is rejected by the configuration"
        );
        let exact = period.as_nanos().max(1);
        let origin = origin.as_nanos();
        // The quotient of a u64 by at least 1 fits a u64.
        let last_index = u64::try_from(u128::from(u64::MAX - origin) / exact).unwrap_or(u64::MAX);
        Grid {
            origin,
            period: u64::try_from(exact).unwrap_or(u64::MAX),
            last_index,
        }
    }

    /// The index of the window holding `now`; instants before the origin (a clock that stepped
    /// backwards) belong to window 0.
    #[inline]
    pub(crate) fn index_of(&self, now: Instant) -> u64 {
        // The minimum matters only for a period clamped to u64::MAX, whose exact grid has a
        // single window.
        (now.as_nanos().saturating_sub(self.origin) / self.period).min(self.last_index)
    }

    /// The highest index whose window starts within the timeline; every index the limiter can
    /// ever store is at most this.
    pub(crate) fn last_index(&self) -> u64 {
        self.last_index
    }

    /// Where window `index` starts; `index` is at most [`Grid::last_index`], so this fits.
    #[inline]
    pub(crate) fn start(&self, index: u64) -> Instant {
        debug_assert!(index <= self.last_index());
        Instant::from_nanos(self.origin + index * self.period)
    }

    /// Where window `index` ends and the next one starts, or `None` past `Instant::MAX`.
    #[inline]
    pub(crate) fn end(&self, index: u64) -> Option<Instant> {
        // By the definition of `last_index`, exactly the windows before it have a successor
        // that starts within the timeline.
        (index < self.last_index).then(|| self.start(index + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_instant_belongs_to_the_next_window() {
        let grid = Grid::new(Instant::from_nanos(100), Duration::from_nanos(10));
        assert_eq!(grid.index_of(Instant::from_nanos(109)), 0);
        assert_eq!(grid.index_of(Instant::from_nanos(110)), 1);
        assert_eq!(grid.start(1), Instant::from_nanos(110));
        assert_eq!(grid.end(1), Some(Instant::from_nanos(120)));
    }

    #[test]
    fn instants_before_the_origin_fall_in_window_zero() {
        let grid = Grid::new(Instant::from_nanos(100), Duration::from_nanos(10));
        assert_eq!(grid.index_of(Instant::ZERO), 0);
    }

    #[test]
    fn the_last_window_has_no_end_when_the_next_would_pass_the_maximum() {
        let grid = Grid::new(Instant::from_nanos(u64::MAX - 25), Duration::from_nanos(10));
        assert_eq!(grid.last_index(), 2);
        assert_eq!(grid.index_of(Instant::MAX), 2);
        assert_eq!(grid.end(1), Some(Instant::from_nanos(u64::MAX - 5)));
        assert_eq!(grid.end(2), None);
    }

    #[test]
    fn one_nanosecond_periods_number_every_instant() {
        let grid = Grid::new(Instant::ZERO, Duration::from_nanos(1));
        assert_eq!(grid.last_index(), u64::MAX);
        assert_eq!(grid.index_of(Instant::MAX), u64::MAX);
        assert_eq!(grid.end(u64::MAX), None);
    }

    #[test]
    fn a_period_beyond_the_timeline_from_the_epoch_has_a_single_window() {
        let grid = Grid::new(Instant::ZERO, Duration::MAX);
        assert_eq!(grid.last_index(), 0);
        assert_eq!(grid.index_of(Instant::MAX), 0);
        assert_eq!(grid.end(0), None);
        // A period of exactly u64::MAX ns from the epoch does have a second window, at MAX.
        let grid = Grid::new(Instant::ZERO, Duration::from_nanos(u64::MAX));
        assert_eq!(grid.end(0), Some(Instant::MAX));
        assert_eq!(grid.index_of(Instant::MAX), 1);
    }
}
