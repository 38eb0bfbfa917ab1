//! Where a limiter's windows are aligned.

use core::time::Duration;

use crate::clock::Clock;
use crate::instant::Instant;
use crate::window::Grid;

/// Where a limiter's grid of windows starts: its first window begins at the origin, and each
/// lasts one period. Chosen on the builder ([`LimiterBuilder::origin`](crate::LimiterBuilder::origin)).
///
/// # Examples
///
/// Windows of a minute at whole minutes of the Unix time, so that every process on every
/// machine agrees on the boundaries.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Origin, RateLimiter};
///
/// let limiter = RateLimiter::builder("api", 100, Duration::from_secs(60))?
///     .origin(Origin::UnixEpoch)
///     .build();
/// assert!(limiter.try_acquire().is_ok());
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Origin {
    /// The clock's reading when the limiter is built (the default): its first window starts
    /// as it is made.
    #[default]
    Creation,
    /// This instant of the limiter's clock is a boundary: the windows start at every whole
    /// number of periods before and after it. Readings before it belong to the windows before
    /// it, as readings after it to the windows after it: the instant fixes the grid, not
    /// where counting begins. A grid whose boundaries all lie before the clock's timeline
    /// starts (as the instants before `Instant::ZERO` are not representable) is given by any
    /// later boundary of it, such as the first one after the timeline starts.
    At(Instant),
    /// Whole multiples of the period since the Unix epoch (1970-01-01T00:00:00Z), as envoy's
    /// ratelimit aligns its windows. The clock's reading at build is matched once with the Unix
    /// time it stands for ([`Clock::unix_time`]: the system's wall clock unless the clock says
    /// otherwise); a later step of the wall clock does not move
    /// the windows, which follow the limiter's own clock from then on. A period that does not
    /// divide a day evenly aligns to its multiples since 1970 all the same.
    ///
    /// Every process agrees on every boundary, whatever its age: a limiter built in a young
    /// process, whose clock's timeline started after the boundary before the build (as
    /// [`SystemClock`](crate::SystemClock)'s starts at its first reading), counts its first
    /// window from the timeline's start but ends it on the boundary every older process
    /// ends it on. An hourly limiter built at 10:55 ends its first window at 11:00.
    UnixEpoch,
}

impl Origin {
    /// The grid of windows `period` long of a limiter built now on `clock`.
    pub(crate) fn grid(self, clock: &impl Clock, period: Duration) -> Grid {
        let now = clock.now();
        let boundary = match self {
            Origin::At(at) => i128::from(at.as_nanos()),
            Origin::UnixEpoch => unix_boundary(now, period, clock.unix_time()),
            Origin::Creation => i128::from(now.as_nanos()),
        };
        Grid::through(boundary, period, now)
    }
}

/// The boundary of the grid of `period` since the epoch at or before `now`, given that `now`
/// is `wall` after the epoch: on the clock's timeline, or before its start (negative) in a
/// process younger than the time since that boundary. Taking the next boundary instead, as
/// a reading cannot be negative, would end the first window a period late, on another grid
/// than older processes'; [`Grid::through`] takes a boundary before the timeline as it is.
fn unix_boundary(now: Instant, period: Duration, wall: Duration) -> i128 {
    let into = wall.as_nanos() % period.as_nanos().max(1);
    // Below the period, at most Duration::MAX's 1.8·10^28 ns: it fits an i128, and so does
    // a u64 less it.
    i128::from(now.as_nanos()) - i128::try_from(into).unwrap_or(i128::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_falls_on_a_whole_period_of_wall_time() {
        // 1,000,000,123.4 s after the epoch (16,666,668 minutes and 43.4 s), at clock reading
        // 50 s: the minute began 43.4 s ago.
        let wall = Duration::from_millis(1_000_000_123_400);
        let now = Instant::from_nanos(50_000_000_000);
        let boundary = unix_boundary(now, Duration::from_secs(60), wall);
        assert_eq!(boundary, 6_600_000_000);
    }

    #[test]
    fn a_clock_younger_than_the_offset_keeps_the_boundary_before_its_timeline() {
        // 30 s into a minute, at clock reading 10 ns: the minute began before the timeline,
        // and the grid ends it 30 s on, as every older process does.
        let wall = Duration::from_secs(1_000_000_050);
        let boundary = unix_boundary(Instant::from_nanos(10), Duration::from_secs(60), wall);
        assert_eq!(boundary, 10 - 30_000_000_000);
        let grid = Grid::through(boundary, Duration::from_secs(60), Instant::from_nanos(10));
        assert_eq!(grid.start(0), Instant::ZERO);
        assert_eq!(grid.end(0), Some(Instant::from_nanos(30_000_000_010)));
    }

    #[test]
    fn periods_past_the_timeline_keep_one_window() {
        let boundary = unix_boundary(Instant::MAX, Duration::MAX, Duration::from_secs(5));
        assert_eq!(boundary, i128::from(u64::MAX) - 5_000_000_000);
        let grid = Grid::through(boundary, Duration::MAX, Instant::MAX);
        assert_eq!(grid.last_index(), 0);
        assert_eq!(grid.start(0), Instant::from_nanos(u64::MAX - 5_000_000_000));
        let boundary = unix_boundary(
            Instant::from_nanos(1),
            Duration::MAX,
            Duration::from_secs(5),
        );
        let grid = Grid::through(boundary, Duration::MAX, Instant::from_nanos(1));
        assert_eq!(grid.start(0), Instant::ZERO);
        assert_eq!(grid.end(0), None);
    }
}
