//! The grid of windows: "The window is aligned to the instant the limiter was created (not to
//! wall-clock boundaries like the top of the minute) and advances in whole periods."

use core::num::NonZeroU128;

use crate::time::END_OF_TIME;

/// Windows of one period each from an origin: window `k` is
/// `[origin + k·period, origin + (k+1)·period)`.
///
/// At exactly `origin + k·period` window `k` is in effect. An instant before the origin (a
/// clock that stepped back) belongs to window 0. All arithmetic is exact: windows that start
/// past [`END_OF_TIME`] are reported as absent, never wrapped.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::Grid;
///
/// let grid = Grid::checked(100, 10).expect("a positive period");
/// assert_eq!(grid.index_of(109), 0);
/// assert_eq!(grid.index_of(110), 1);
/// assert_eq!(grid.start(1), 110);
/// assert_eq!(grid.end(1), Some(120));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Grid {
    origin: u128,
    period: u128,
}

impl Grid {
    /// The grid from `origin` with windows `period` nanoseconds long ("Must be positive").
    ///
    /// # Examples
    ///
    /// ```
    /// use core::num::NonZeroU128;
    /// use fixed_window_spec::Grid;
    ///
    /// let grid = Grid::new(5, NonZeroU128::MIN);
    /// assert_eq!(grid.index_of(7), 2);
    /// ```
    #[inline]
    pub fn new(origin: u128, period: NonZeroU128) -> Grid {
        Grid {
            origin,
            period: period.get(),
        }
    }

    /// [`Grid::new`], or `None` for a zero period.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Grid;
    ///
    /// assert!(Grid::checked(0, 0).is_none());
    /// assert_eq!(Grid::checked(5, 7).map(|grid| grid.period()), Some(7));
    /// ```
    #[inline]
    pub fn checked(origin: u128, period: u128) -> Option<Grid> {
        NonZeroU128::new(period).map(|period| Grid::new(origin, period))
    }

    /// The origin of windows at whole periods of Unix time (`Origin::UnixEpoch`), for a clock
    /// whose reading `reading` stands for `unix` nanoseconds after 1970: the boundary at or
    /// before the reading; the next one if that is before the clock's timeline (below zero);
    /// the reading itself if the boundary is past `last` (the clock's last instant).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Grid;
    ///
    /// // 25 s into a minute at reading 100 s: the minute began at reading 75 s.
    /// let s = 1_000_000_000;
    /// assert_eq!(Grid::unix_origin(100 * s, 60 * s, 1_800_000_025 * s, u128::from(u64::MAX)), 75 * s);
    /// // At reading 10 s it began before the timeline: the next minute, at 45 s.
    /// assert_eq!(Grid::unix_origin(10 * s, 60 * s, 1_800_000_025 * s, u128::from(u64::MAX)), 45 * s);
    /// // And past the timeline's end, the reading.
    /// assert_eq!(Grid::unix_origin(10 * s, 60 * s, 1_800_000_025 * s, 20 * s), 10 * s);
    /// ```
    pub fn unix_origin(reading: u128, period: u128, unix: u128, last: u128) -> u128 {
        let into = unix % period.max(1);
        let boundary = match reading.checked_sub(into) {
            Some(before) => before,
            None => reading.saturating_add(period - into),
        };
        if boundary > last { reading } else { boundary }
    }

    /// Where window 0 starts.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Grid;
    ///
    /// assert_eq!(Grid::checked(5, 7).map(|grid| grid.origin()), Some(5));
    /// ```
    #[inline]
    pub fn origin(&self) -> u128 {
        self.origin
    }

    /// The length of every window.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Grid;
    ///
    /// assert_eq!(Grid::checked(5, 7).map(|grid| grid.period()), Some(7));
    /// ```
    #[inline]
    pub fn period(&self) -> u128 {
        self.period
    }

    /// The index of the window holding `at`; instants before the origin belong to window 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Grid;
    ///
    /// let grid = Grid::checked(5, 10).expect("a positive period");
    /// assert_eq!(grid.index_of(25), 2);
    /// assert_eq!(grid.index_of(0), 0);
    /// ```
    #[inline]
    pub fn index_of(&self, at: u128) -> u128 {
        at.saturating_sub(self.origin) / self.period
    }

    /// Where window `index` starts (saturating at `u128::MAX`, far past [`END_OF_TIME`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Grid;
    ///
    /// let grid = Grid::checked(5, 10).expect("a positive period");
    /// assert_eq!(grid.start(2), 25);
    /// ```
    #[inline]
    pub fn start(&self, index: u128) -> u128 {
        // An index and a period that both fit in 64 bits (as a clock's nanoseconds give) make
        // a product that cannot overflow, which needs none of the saturating multiplication's
        // overflow tests at every window a checker looks at.
        let product = if (index | self.period) >> 64 == 0 {
            index * self.period
        } else {
            index.saturating_mul(self.period)
        };
        product.saturating_add(self.origin)
    }

    /// Where window `index` ends and the next one starts, or `None` if the next window would
    /// start past [`END_OF_TIME`]: "If the next window's start itself would overflow, the call
    /// is rejected immediately."
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::{END_OF_TIME, Grid};
    ///
    /// let grid = Grid::checked(END_OF_TIME - 25, 10).expect("a positive period");
    /// assert_eq!(grid.end(1), Some(END_OF_TIME - 5));
    /// assert_eq!(grid.end(2), None);
    /// ```
    #[inline]
    pub fn end(&self, index: u128) -> Option<u128> {
        let end = self.start(index.saturating_add(1));
        (end <= END_OF_TIME).then_some(end)
    }

    /// Whether `at` is the first instant of some window.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Grid;
    ///
    /// let grid = Grid::checked(5, 10).expect("a positive period");
    /// assert!(grid.on_boundary(25));
    /// assert!(!grid.on_boundary(26));
    /// assert!(!grid.on_boundary(0));
    /// ```
    #[inline]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "cast only when both are below 2^64; `try_from` instead costs a checker's sweep \
                  another million instructions per 1,000 scenarios"
    )]
    pub fn on_boundary(&self, at: u128) -> bool {
        if at < self.origin {
            return false;
        }
        let since = at - self.origin;
        // Within 64 bits (as a clock's nanoseconds are), one remainder, rather than a call to
        // the `u128` one at every sleep and rejection a checker judges.
        if (since | self.period) >> 64 == 0 {
            (since as u64).is_multiple_of(self.period as u64)
        } else {
            since.is_multiple_of(self.period)
        }
    }
}
