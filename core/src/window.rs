//! Window arithmetic: which window holds an instant, and where a window starts and ends.
//!
//! Windows are numbered from the limiter's origin: window `k` is
//! `[origin + k·period, origin + (k+1)·period)`. All arithmetic is exact on `u64` nanoseconds
//! and checked, so "the next window would start past `Instant::MAX`" is an ordinary `None`.

use crate::instant::Instant;

/// The grid of windows a limiter lives on: its origin and its period in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    origin: u64,
    /// At least 1; periods longer than `u64::MAX` nanoseconds are clamped to it, which changes
    /// nothing observable, since no second window could start within the timeline anyway.
    period: u64,
}

impl Grid {
    /// The grid starting at `origin` with windows `period` nanoseconds long (`period >= 1`).
    pub(crate) fn new(origin: Instant, period: u64) -> Grid {
        debug_assert!(
            period >= 1,
            "a zero period is rejected by the configuration"
        );
        Grid {
            origin: origin.as_nanos(),
            period: period.max(1),
        }
    }

    /// The index of the window holding `now`; instants before the origin (a clock that stepped
    /// backwards) belong to window 0.
    #[inline]
    pub(crate) fn index_of(&self, now: Instant) -> u64 {
        now.as_nanos().saturating_sub(self.origin) / self.period
    }

    /// The highest index whose window starts within the timeline; every index the limiter can
    /// ever store is at most this.
    pub(crate) fn last_index(&self) -> u64 {
        (u64::MAX - self.origin) / self.period
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
        self.start(index)
            .as_nanos()
            .checked_add(self.period)
            .map(Instant::from_nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_instant_belongs_to_the_next_window() {
        let grid = Grid::new(Instant::from_nanos(100), 10);
        assert_eq!(grid.index_of(Instant::from_nanos(109)), 0);
        assert_eq!(grid.index_of(Instant::from_nanos(110)), 1);
        assert_eq!(grid.start(1), Instant::from_nanos(110));
        assert_eq!(grid.end(1), Some(Instant::from_nanos(120)));
    }

    #[test]
    fn instants_before_the_origin_fall_in_window_zero() {
        let grid = Grid::new(Instant::from_nanos(100), 10);
        assert_eq!(grid.index_of(Instant::ZERO), 0);
    }

    #[test]
    fn the_last_window_has_no_end_when_the_next_would_pass_the_maximum() {
        let grid = Grid::new(Instant::from_nanos(u64::MAX - 25), 10);
        assert_eq!(grid.last_index(), 2);
        assert_eq!(grid.index_of(Instant::MAX), 2);
        assert_eq!(grid.end(1), Some(Instant::from_nanos(u64::MAX - 5)));
        assert_eq!(grid.end(2), None);
    }

    #[test]
    fn one_nanosecond_periods_number_every_instant() {
        let grid = Grid::new(Instant::ZERO, 1);
        assert_eq!(grid.last_index(), u64::MAX);
        assert_eq!(grid.index_of(Instant::MAX), u64::MAX);
        assert_eq!(grid.end(u64::MAX), None);
    }
}
