//! The configuration a model runs a limiter with, and the window arithmetic the checkers judge
//! it by.
//!
//! The arithmetic comes from `fixed-window-spec`, the one model of the rules (`docs/rules.md`)
//! every checker uses, never from core's window code, or a bug shared by both would hide itself.

use core::num::NonZeroU128;
use core::time::Duration;

use fixed_window::Instant;
use fixed_window_spec::Grid;

/// A limiter's configuration as the checkers see it: where its windows start, how long they
/// are, how many permits each holds, and how long an excess call may wait.
///
/// # Examples
///
/// Windows are numbered from the origin; the boundary instant belongs to the next window.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_models::Config;
///
/// let config = Config::new(Instant::from_nanos(100), 2, Duration::from_nanos(10), Duration::ZERO);
/// assert_eq!(config.window_of(Instant::from_nanos(109)), 0);
/// assert_eq!(config.window_of(Instant::from_nanos(110)), 1);
/// assert_eq!(config.window_end(1), Some(Instant::from_nanos(120)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The clock reading at the limiter's creation: window 0 holds it.
    pub origin: Instant,
    /// A boundary of the grid (`Origin::At`): the origin unless the grid was chosen apart
    /// from the creation, as a limiter aligned to Unix time in a young process has a grid
    /// whose window 0 began before the clock's timeline and ends before a period is out.
    pub boundary: Instant,
    /// Permits per window.
    pub limit: u32,
    /// Window length in nanoseconds, at least 1.
    pub period: u64,
    /// How long an excess waiting call may wait, in nanoseconds.
    pub max_wait: u64,
}

impl Config {
    /// A configuration; durations are taken in whole nanoseconds (saturating), and a zero
    /// period counts as one nanosecond.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::Config;
    ///
    /// let config = Config::new(Instant::ZERO, 3, Duration::from_micros(1), Duration::from_nanos(5));
    /// assert_eq!((config.period, config.max_wait), (1_000, 5));
    /// ```
    pub fn new(origin: Instant, limit: u32, period: Duration, max_wait: Duration) -> Config {
        Config {
            origin,
            boundary: origin,
            limit,
            period: nanos(period).max(1),
            max_wait: nanos(max_wait),
        }
    }

    /// This configuration on the grid through `boundary` (the limiter built with
    /// `Origin::At(boundary)`), still created at the origin.
    ///
    /// # Examples
    ///
    /// A limiter created at 3 on a grid through 7 of 10 ns periods: its first window began
    /// before the timeline, at -3, and ends at 7.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::Config;
    ///
    /// let config = Config::new(Instant::from_nanos(3), 1, Duration::from_nanos(10), Duration::ZERO)
    ///     .through(Instant::from_nanos(7));
    /// assert_eq!(config.window_end(0), Some(Instant::from_nanos(7)));
    /// assert_eq!(config.window_of(Instant::from_nanos(7)), 1);
    /// ```
    #[must_use]
    pub fn through(self, boundary: Instant) -> Config {
        Config { boundary, ..self }
    }

    /// The period as a `Duration`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::Config;
    ///
    /// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(7), Duration::ZERO);
    /// assert_eq!(config.period_duration(), Duration::from_nanos(7));
    /// ```
    pub fn period_duration(&self) -> Duration {
        Duration::from_nanos(self.period)
    }

    /// The max wait as a `Duration`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::Config;
    ///
    /// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(7), Duration::from_nanos(9));
    /// assert_eq!(config.max_wait_duration(), Duration::from_nanos(9));
    /// ```
    pub fn max_wait_duration(&self) -> Duration {
        Duration::from_nanos(self.max_wait)
    }

    /// The index of the window holding `t`; instants before the origin count as window 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::Config;
    ///
    /// let config = Config::new(Instant::from_nanos(5), 1, Duration::from_nanos(10), Duration::ZERO);
    /// assert_eq!(config.window_of(Instant::from_nanos(25)), 2);
    /// assert_eq!(config.window_of(Instant::ZERO), 0);
    /// ```
    pub fn window_of(&self, t: Instant) -> u64 {
        // A window index never exceeds the instant it holds, so it fits.
        u64::try_from(self.grid().index_of(u128::from(t.as_nanos()))).unwrap_or(u64::MAX)
    }

    /// Where window `w` starts, or `None` past [`Instant::MAX`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::Config;
    ///
    /// let config = Config::new(Instant::from_nanos(5), 1, Duration::from_nanos(10), Duration::ZERO);
    /// assert_eq!(config.window_start(2), Some(Instant::from_nanos(25)));
    /// assert_eq!(config.window_start(u64::MAX), None);
    /// ```
    pub fn window_start(&self, w: u64) -> Option<Instant> {
        instant(self.grid().start(u128::from(w)))
    }

    /// Where window `w` ends (the next one starts), or `None` past [`Instant::MAX`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::Config;
    ///
    /// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(10), Duration::ZERO);
    /// assert_eq!(config.window_end(0), Some(Instant::from_nanos(10)));
    /// ```
    pub fn window_end(&self, w: u64) -> Option<Instant> {
        self.grid().end(u128::from(w)).and_then(instant)
    }

    /// The grid of windows, as the spec models it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_models::Config;
    ///
    /// let config = Config::new(Instant::from_nanos(5), 1, Duration::from_nanos(10), Duration::ZERO);
    /// assert_eq!(config.grid().start(1), 15);
    /// ```
    pub fn grid(&self) -> Grid {
        // `new` keeps the period at one nanosecond or more.
        let period = NonZeroU128::new(u128::from(self.period)).unwrap_or(NonZeroU128::MIN);
        Grid::through(
            u128::from(self.boundary.as_nanos()),
            false,
            period,
            u128::from(self.origin.as_nanos()),
        )
    }
}

/// The instant `nanos` after the epoch, or `None` past [`Instant::MAX`].
fn instant(nanos: u128) -> Option<Instant> {
    u64::try_from(nanos).ok().map(Instant::from_nanos)
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
