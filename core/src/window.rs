//! Window arithmetic: which window holds an instant, and where a window starts and ends.
//!
//! A limiter's windows are one grid: every instant `b + k·period` for a boundary `b` and every
//! whole `k`, including boundaries before the clock's timeline starts. The windows are numbered
//! from the one holding the reading at build, window 0, which may have begun before the
//! timeline (a young process aligned to Unix time): it is then partial at its start but still
//! ends on the grid. Window `k ≥ 1` is `[end₀ + (k−1)·period, end₀ + k·period)`, where `end₀`
//! is window 0's end. All arithmetic is exact on `u64` nanoseconds and checked, so "the next
//! window would start past `Instant::MAX`" is an ordinary `None`.
//!
//! Numbering from the window at build rather than from the first window of the timeline
//! keeps the indices as small as they were when the origin was the build itself: the state
//! word holds an index, and a smaller largest index leaves more bits for the count (see
//! `state`). Readings can only come before the window at build when the clock steps back, and
//! those count against the stored window anyway.

use core::time::Duration;

use crate::instant::Instant;

/// The grid of windows a limiter lives on: where its window 0 ends and its period in
/// nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    /// Where window 0 starts, or the timeline's start if it began before it.
    first_start: u64,
    /// Where window 0 ends and window 1 starts; meaningless when `last_index` is 0 (window 0
    /// then never ends), and then `u64::MAX`.
    first_end: u64,
    /// At least 1. A configured period longer than `u64::MAX` nanoseconds is stored as
    /// `u64::MAX`; `last_index` keeps the exact answer for it.
    period: u64,
    /// The highest index whose window starts within the timeline, from the exact period.
    last_index: u64,
}

impl Grid {
    /// The grid starting at `origin` with windows `period` long (`period` is not zero): the
    /// grid with a boundary at `origin`, numbered from it.
    #[cfg(test)]
    pub(crate) fn new(origin: Instant, period: Duration) -> Grid {
        Grid::through(i128::from(origin.as_nanos()), period, origin)
    }

    /// The grid with a boundary at `boundary` nanoseconds of the clock's timeline (negative:
    /// before the timeline starts) and windows `period` long (`period` is not zero), numbered
    /// from the window holding `reading`.
    pub(crate) fn through(boundary: i128, period: Duration, reading: Instant) -> Grid {
        debug_assert!(
            !period.is_zero(),
            "a zero period is rejected by the configuration"
        );
        let exact = period.as_nanos().max(1);
        let reading_nanos = i128::from(reading.as_nanos());
        // Both terms fit an i128 with room (a boundary is a u64 or a u64 less a u128 below
        // 2^64·10^-9·Duration::MAX), and so does the window's end: the window holding the
        // reading starts at most one period before it. A period beyond i128 cannot be
        // configured (Duration::MAX is about 1.8·10^28 ns).
        let exact_signed = i128::try_from(exact).unwrap_or(i128::MAX);
        let into = (reading_nanos - boundary).rem_euclid(exact_signed);
        // At most the reading, so it fits a u64 once clipped to the timeline's start.
        let first_start = u64::try_from((reading_nanos - into).max(0)).unwrap_or(0);
        let first_end = reading_nanos - into + exact_signed;
        let (first_end, last_index) = match u64::try_from(first_end) {
            Ok(first_end) => {
                // Window 1 starts at `first_end`; later ones while they start within the
                // timeline. The quotient of a u64 by at least 1 fits a u64, and so does it
                // plus one: `first_end` is past the reading, so at least 1.
                let later = u128::from(u64::MAX - first_end) / exact;
                (first_end, u64::try_from(later + 1).unwrap_or(u64::MAX))
            }
            // Window 0 never ends.
            Err(_) => (u64::MAX, 0),
        };
        Grid {
            first_start,
            first_end,
            period: u64::try_from(exact).unwrap_or(u64::MAX),
            last_index,
        }
    }

    /// The index of the window holding `now`; instants before window 0 (a clock that stepped
    /// backwards) belong to window 0.
    #[inline]
    pub(crate) fn index_of(&self, now: Instant) -> u64 {
        let now = now.as_nanos();
        if now < self.first_end {
            return 0;
        }
        // The minimum matters for a period clamped to u64::MAX, whose exact grid has at most
        // two windows, and for a window 0 that never ends. The sum cannot overflow: the
        // quotient is below u64::MAX unless the period is 1 ns, and then `first_end` is at
        // least 1.
        ((now - self.first_end) / self.period + 1).min(self.last_index)
    }

    /// The highest index whose window starts within the timeline; every index the limiter can
    /// ever store is at most this.
    pub(crate) fn last_index(&self) -> u64 {
        self.last_index
    }

    /// Where window `index` starts, the timeline's start for a window 0 that began before it;
    /// `index` is at most [`Grid::last_index`], so this fits.
    #[inline]
    pub(crate) fn start(&self, index: u64) -> Instant {
        debug_assert!(index <= self.last_index());
        match index.checked_sub(1) {
            Some(later) => Instant::from_nanos(self.first_end + later * self.period),
            None => Instant::from_nanos(self.first_start),
        }
    }

    /// Where window `index` ends and the next one starts, or `None` past `Instant::MAX`.
    #[inline]
    pub(crate) fn end(&self, index: u64) -> Option<Instant> {
        // By the definition of `last_index`, exactly the windows before it have a successor
        // that starts within the timeline.
        (index < self.last_index).then(|| Instant::from_nanos(self.first_end + index * self.period))
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
    fn a_window_begun_before_the_timeline_is_cut_at_its_start_and_ends_on_the_grid() {
        // A boundary 493 ns before the timeline's start, built at 14: window 0 is [0, 507).
        let grid = Grid::through(-493, Duration::from_nanos(1_000), Instant::from_nanos(14));
        assert_eq!(grid.start(0), Instant::ZERO);
        assert_eq!(grid.end(0), Some(Instant::from_nanos(507)));
        assert_eq!(grid.index_of(Instant::from_nanos(506)), 0);
        assert_eq!(grid.index_of(Instant::from_nanos(507)), 1);
        assert_eq!(grid.start(1), Instant::from_nanos(507));
        assert_eq!(grid.end(1), Some(Instant::from_nanos(1_507)));
    }

    #[test]
    fn a_boundary_after_the_reading_numbers_from_the_window_holding_it() {
        // A boundary at 1,000, built at 730, periods of 100: window 0 is [700, 800).
        let grid = Grid::through(1_000, Duration::from_nanos(100), Instant::from_nanos(730));
        assert_eq!(grid.start(0), Instant::from_nanos(700));
        assert_eq!(grid.end(0), Some(Instant::from_nanos(800)));
        assert_eq!(grid.index_of(Instant::from_nanos(1_000)), 3);
        // Built at 30: boundaries are whole hundreds, so window 0 is [0, 100).
        let grid = Grid::through(1_000, Duration::from_nanos(100), Instant::from_nanos(30));
        assert_eq!(grid.start(0), Instant::ZERO);
        assert_eq!(grid.end(0), Some(Instant::from_nanos(100)));
    }

    #[test]
    fn a_young_grid_of_one_nanosecond_periods_numbers_every_instant() {
        let grid = Grid::through(-5, Duration::from_nanos(1), Instant::ZERO);
        assert_eq!(grid.last_index(), u64::MAX);
        assert_eq!(grid.index_of(Instant::MAX), u64::MAX);
        assert_eq!(grid.end(u64::MAX - 1), Some(Instant::MAX));
    }

    #[test]
    fn a_window_begun_before_the_timeline_may_never_end() {
        // A period longer than the timeline, its boundary before the timeline's start.
        let grid = Grid::through(-1, Duration::MAX, Instant::from_nanos(3));
        assert_eq!(grid.last_index(), 0);
        assert_eq!(grid.start(0), Instant::ZERO);
        assert_eq!(grid.index_of(Instant::MAX), 0);
        assert_eq!(grid.end(0), None);
        // Its boundary after the reading, within the timeline: a second window, never ending.
        let grid = Grid::through(50, Duration::MAX, Instant::from_nanos(3));
        assert_eq!(grid.last_index(), 1);
        assert_eq!(grid.end(0), Some(Instant::from_nanos(50)));
        assert_eq!(grid.index_of(Instant::MAX), 1);
        assert_eq!(grid.end(1), None);
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
