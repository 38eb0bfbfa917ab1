//! Where a shared limiter's windows are aligned: core's [`Origin`], read on the server's clock,
//! whose readings are microseconds since the Unix epoch.
//!
//! - [`Origin::Creation`] (the default): the limiter's creation on the server, the server's
//!   time when the first process stored the configuration. Every process learns it by
//!   registering.
//! - [`Origin::UnixEpoch`]: whole periods since 1970 on the server's clock, as envoy's
//!   ratelimit aligns its windows. Every process knows the grid without asking.
//! - [`Origin::At`]: this instant, read as nanoseconds since the Unix epoch on the server's
//!   clock, in whole microseconds (the clock's resolution): a boundary of the grid, which has
//!   boundaries whole periods before it as well as after it, as in core. It is stored as the
//!   grid's first boundary at or after the epoch (the instant less whole periods), so that the
//!   server, whose time is past that boundary for any period up to the time since 1970, finds
//!   the window holding its time on the whole grid (the script counts a time before the
//!   stored origin in the window starting there), and two processes naming boundaries of one
//!   grid store the same origin.
//!
//! A fixed origin (the last two) is stored with the configuration and checked like the limit
//! and period: a process with another origin, or one that aligns to the first registration
//! while the stored origin is fixed otherwise, is told of the conflict.

use core::time::Duration;

use fixed_window::Origin;

use crate::config::{ConfigError, MAX_PERIOD};

/// The latest fixed origin, in microseconds: a window's end, at most an origin plus
/// [`MAX_PERIOD`], stays below 2^53, where Lua's doubles are exact.
pub const MAX_ORIGIN_MICROS: u64 = (1 << 53) - 1 - MAX_PERIOD.as_secs() * 1_000_000;

/// The origin in microseconds on the server's clock if `origin` fixes it, `None` if the first
/// registration does: for windows `period` long, the first boundary at or after the epoch.
pub(crate) fn fixed_micros(origin: Origin, period: Duration) -> Result<Option<u64>, ConfigError> {
    match origin {
        Origin::UnixEpoch => Ok(Some(0)),
        Origin::At(at) => {
            let nanos = at.as_nanos();
            if !nanos.is_multiple_of(1_000) {
                return Err(ConfigError::OriginNotWholeMicros(at));
            }
            let micros = nanos / 1_000;
            if micros > MAX_ORIGIN_MICROS {
                return Err(ConfigError::OriginTooLate(at));
            }
            // A configured period is whole microseconds, at least one.
            let period = u64::try_from(period.as_micros()).unwrap_or(u64::MAX).max(1);
            Ok(Some(micros % period))
        }
        // `Origin` may grow: anything else aligns to the first registration, as by default.
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use fixed_window::Instant;

    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn the_epoch_and_a_whole_microsecond_are_fixed_the_creation_is_not() {
        assert_eq!(fixed_micros(Origin::Creation, MINUTE), Ok(None));
        assert_eq!(fixed_micros(Origin::UnixEpoch, MINUTE), Ok(Some(0)));
        // 1,700,000,000 s is 28,333,333 minutes and 20 s.
        let at = Instant::from_nanos(1_700_000_000_000_000_000);
        assert_eq!(fixed_micros(Origin::At(at), MINUTE), Ok(Some(20_000_000)));
        let period = Duration::from_micros(1_700_000_000_000_001);
        assert_eq!(
            fixed_micros(Origin::At(at), period),
            Ok(Some(1_700_000_000_000_000))
        );
    }

    #[test]
    fn boundaries_of_one_grid_fix_one_origin() {
        let early = Instant::from_nanos(1_700_000_000_000_000_000);
        let later = Instant::from_nanos(1_700_000_000_000_000_000 + 7 * 60_000_000_000);
        assert_eq!(
            fixed_micros(Origin::At(early), MINUTE),
            fixed_micros(Origin::At(later), MINUTE)
        );
        // An instant after the server's time is a boundary all the same: the grid extends back.
        let future = Instant::from_nanos(4_000_000_000_000_000_000);
        assert_eq!(
            fixed_micros(Origin::At(future), MINUTE),
            Ok(Some(40_000_000))
        );
    }

    #[test]
    fn an_origin_the_script_cannot_hold_exactly_is_refused() {
        let odd = Instant::from_nanos(1_500);
        assert_eq!(
            fixed_micros(Origin::At(odd), MINUTE),
            Err(ConfigError::OriginNotWholeMicros(odd))
        );
        let last = Instant::from_nanos(MAX_ORIGIN_MICROS * 1_000);
        assert_eq!(
            fixed_micros(Origin::At(last), MAX_PERIOD),
            Ok(Some(
                MAX_ORIGIN_MICROS % u64::try_from(MAX_PERIOD.as_micros()).unwrap()
            ))
        );
        let late = Instant::from_nanos((MAX_ORIGIN_MICROS + 1) * 1_000);
        assert_eq!(
            fixed_micros(Origin::At(late), MINUTE),
            Err(ConfigError::OriginTooLate(late))
        );
        assert!(
            fixed_micros(Origin::At(Instant::MAX), MINUTE).is_err(),
            "far past 2^53 µs"
        );
    }
}
