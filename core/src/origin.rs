//! Where a limiter's windows are aligned.

use core::time::Duration;

use crate::clock::Clock;
use crate::instant::Instant;

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
    /// This instant of the limiter's clock. Readings before it belong to the first window.
    At(Instant),
    /// Whole multiples of the period since the Unix epoch (1970-01-01T00:00:00Z), as envoy's
    /// ratelimit aligns its windows. The clock's reading at build is matched once with the Unix
    /// time it stands for ([`Clock::unix_time`]: the system's wall clock unless the clock says
    /// otherwise); a later step of the wall clock does not move
    /// the windows, which follow the limiter's own clock from then on. A period that does not
    /// divide a day evenly aligns to its multiples since 1970 all the same. (A clock whose
    /// readings start later than the boundary before now, as a new
    /// [`ManualClock`](crate::ManualClock)'s may, takes the next boundary: the readings before
    /// it belong to the first window; a boundary past [`Instant::MAX`] leaves the origin at the
    /// reading.)
    UnixEpoch,
}

impl Origin {
    /// The origin's instant for a limiter built now on `clock` with windows `period` long.
    pub(crate) fn instant(self, clock: &impl Clock, period: Duration) -> Instant {
        match self {
            Origin::Creation => clock.now(),
            Origin::At(at) => at,
            Origin::UnixEpoch => aligned(clock.now(), period, clock.unix_time()),
        }
    }
}

/// The boundary of the grid of `period` since the epoch at or before `now`, given that `now`
/// is `wall` after the epoch; the next one if the clock's timeline starts after it (a clock
/// reading smaller than the offset into the period), so that nothing underflows.
fn aligned(now: Instant, period: Duration, wall: Duration) -> Instant {
    let period = period.as_nanos().max(1);
    let into = wall.as_nanos() % period;
    let now_nanos = u128::from(now.as_nanos());
    let origin = now_nanos
        .checked_sub(into)
        .or_else(|| now_nanos.checked_add(period - into))
        .and_then(|origin| u64::try_from(origin).ok());
    origin.map_or(now, Instant::from_nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_falls_on_a_whole_period_of_wall_time() {
        // 1,000,000,123.4 s after the epoch (16,666,668 minutes and 43.4 s), at clock reading
        // 50 s: the minute began 43.4 s ago.
        let wall = Duration::from_millis(1_000_000_123_400);
        let now = Instant::from_nanos(50_000_000_000);
        let origin = aligned(now, Duration::from_secs(60), wall);
        assert_eq!(origin, Instant::from_nanos(6_600_000_000));
    }

    #[test]
    fn a_clock_younger_than_the_offset_takes_the_next_boundary() {
        // 10 s into a minute, at clock reading 10 ns: the minute's start is before the
        // timeline, so the next minute's, 50 s on.
        let wall = Duration::from_secs(1_000_000_030);
        let origin = aligned(Instant::from_nanos(10), Duration::from_secs(60), wall);
        assert_eq!(origin, Instant::from_nanos(50_000_000_010));
    }

    #[test]
    fn periods_past_the_timeline_keep_the_reading() {
        let origin = aligned(Instant::MAX, Duration::MAX, Duration::from_secs(5));
        assert_eq!(origin, Instant::from_nanos(u64::MAX - 5_000_000_000));
        let origin = aligned(
            Instant::from_nanos(1),
            Duration::MAX,
            Duration::from_secs(5),
        );
        assert_eq!(origin, Instant::from_nanos(1));
    }
}
