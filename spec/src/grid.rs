//! The grid of windows: "The window is aligned to the instant the limiter was created (not to
//! wall-clock boundaries like the top of the minute) and advances in whole periods", or to a
//! chosen boundary or whole periods of Unix time (`docs/rules.md`: Origin). A grid is every
//! boundary a whole number of periods before or after one of them, those before the clock's
//! timeline starts included: the window holding an instant is `[b, b + period)` for the
//! boundary `b` at or before it, cut at the timeline's start if `b` is before it.

use core::num::NonZeroU128;

use crate::time::END_OF_TIME;

/// Windows of one period each from an origin: window `k` is
/// `[origin + k·period, origin + (k+1)·period)`, or, for a grid whose window 0 began `lead`
/// before the timeline's start (its origin is then 0), `[k·period − lead, (k+1)·period −
/// lead)`, window 0 cut to `[0, period − lead)`.
///
/// At exactly a window's start it is in effect. An instant before the origin (a clock that
/// stepped back before the window a limiter was built in) belongs to window 0. All arithmetic
/// is exact: windows that start past [`END_OF_TIME`] are reported as absent, never wrapped.
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
    /// How long before the timeline's start window 0 began: 0, or below the period with the
    /// origin 0.
    lead: u128,
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
            lead: 0,
        }
    }

    /// The grid with a boundary `boundary` after the timeline's start, or `before` the start
    /// if `before` (a boundary of the timeline of a clock that could read it), and windows
    /// `period` long, numbered from the window holding `reading`: `Origin::At` (a boundary
    /// after the start) and `Origin::Creation` (the reading) for a limiter built at `reading`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::num::NonZeroU128;
    /// use fixed_window_spec::Grid;
    ///
    /// let period = NonZeroU128::new(10).expect("positive");
    /// // A boundary at 45, built at 12: window 0 is [5, 15).
    /// let grid = Grid::through(45, false, period, 12);
    /// assert_eq!((grid.start(0), grid.end(0)), (5, Some(15)));
    /// // Built at 2: window 0 began at -5, and is cut to [0, 5).
    /// let grid = Grid::through(45, false, period, 2);
    /// assert_eq!((grid.start(0), grid.end(0)), (0, Some(5)));
    /// // A boundary 3 before the timeline's start, built at 2: [0, 7).
    /// let grid = Grid::through(3, true, period, 2);
    /// assert_eq!((grid.start(0), grid.end(0)), (0, Some(7)));
    /// ```
    pub fn through(boundary: u128, before: bool, period: NonZeroU128, reading: u128) -> Grid {
        let p = period.get();
        // How far the window holding the reading began before it: the distance from the
        // boundary to the reading, modulo the period, on whichever side the boundary is.
        let into = if before {
            (boundary % p + reading % p) % p
        } else if boundary <= reading {
            (reading - boundary) % p
        } else {
            (p - (boundary - reading) % p) % p
        };
        match reading.checked_sub(into) {
            Some(origin) => Grid::new(origin, period),
            None => Grid {
                origin: 0,
                period: p,
                lead: into - reading,
            },
        }
    }

    /// The grid of windows at whole periods of Unix time (`Origin::UnixEpoch`) of a limiter
    /// built at `reading` on a clock whose reading `reading` stands for `unix` nanoseconds
    /// after 1970, numbered from the window holding the reading: the boundary before it lies
    /// `unix mod period` before it, before the timeline's start if the clock is younger than
    /// that.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::num::NonZeroU128;
    /// use fixed_window_spec::Grid;
    ///
    /// let s = 1_000_000_000;
    /// let minute = NonZeroU128::new(60 * s).expect("positive");
    /// // 25 s into a minute at reading 100 s: the minute began at reading 75 s.
    /// let grid = Grid::unix(100 * s, minute, 1_800_000_025 * s);
    /// assert_eq!((grid.start(0), grid.end(0)), (75 * s, Some(135 * s)));
    /// // At reading 10 s it began before the timeline, and ends at 45 s all the same.
    /// let grid = Grid::unix(10 * s, minute, 1_800_000_025 * s);
    /// assert_eq!((grid.start(0), grid.end(0)), (0, Some(45 * s)));
    /// ```
    pub fn unix(reading: u128, period: NonZeroU128, unix: u128) -> Grid {
        let into = unix % period.get();
        match reading.checked_sub(into) {
            Some(boundary) => Grid::through(boundary, false, period, reading),
            None => Grid::through(into - reading, true, period, reading),
        }
    }

    /// This grid numbered from the window holding `at`: the same windows, window 0 the one
    /// holding `at` (cut at the timeline's start if it began before it).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_spec::Grid;
    ///
    /// let grid = Grid::checked(5, 10).expect("a positive period").numbered_from(27);
    /// assert_eq!((grid.start(0), grid.end(0)), (25, Some(35)));
    /// ```
    #[must_use]
    pub fn numbered_from(&self, at: u128) -> Grid {
        let period = NonZeroU128::new(self.period).unwrap_or(NonZeroU128::MIN);
        if self.lead > 0 {
            Grid::through(self.lead, true, period, at)
        } else {
            Grid::through(self.origin, false, period, at)
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

    /// Where window 0 starts (the timeline's start if it began before it).
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
        at.saturating_sub(self.origin).saturating_add(self.lead) / self.period
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
        product
            .saturating_add(self.origin)
            .saturating_sub(self.lead)
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
        // Below 2^64 as long as `at` and the lead are (the lead is below a 64-bit period).
        let since = (at - self.origin).saturating_add(self.lead);
        // Within 64 bits (as a clock's nanoseconds are), one remainder, rather than a call to
        // the `u128` one at every sleep and rejection a checker judges.
        if (since | self.period) >> 64 == 0 {
            (since as u64).is_multiple_of(self.period as u64)
        } else {
            since.is_multiple_of(self.period)
        }
    }
}
