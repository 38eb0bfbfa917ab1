//! A coarse clock's tick (`Config::with_clock_resolution`) against a real server: a window
//! remembered full is rejected locally no later than the server's window ends, although the
//! process reads its clock up to a tick behind the time.

use core::time::Duration;

use fixed_window::{Instant, ManualClock, Origin};
use fixed_window_redis::{Config, SharedError};

use crate::support::{TIME_KEY, TestResult, connect, raw, server, set_time};

/// The clock's tick: a default Windows timer's.
const TICK: Duration = Duration::from_micros(15_625);

/// When (on the server's clock) the process's timeline starts: 10 ms into the server's
/// window, so that the process's ticks fall off the server's boundaries.
const AGE_MS: u64 = 10;

/// What the process's coarse clock reads at `ms` on the server's clock: its timeline's
/// time, rounded down to a whole tick.
fn coarse(ms: u64) -> Instant {
    let local = (ms - AGE_MS) * 1_000_000;
    let tick = u64::try_from(TICK.as_nanos()).unwrap_or(u64::MAX);
    Instant::from_nanos(local - local % tick)
}

/// Takes the one permit of a 1 s window at 10 ms on the server's clock, then tries again
/// every millisecond, the server's time (the time key) and the process's coarse clock moved
/// together; returns when (server milliseconds) the next permit came. Every call before it
/// must be rejected (`Limited`), by the server or by the process's memory of the full window.
fn next_permit(
    name: &'static str,
    resolution: Duration,
) -> Result<u64, Box<dyn std::error::Error>> {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, AGE_MS * 1_000)?;
    let config = Config::of(name, 1, Duration::from_secs(1))?
        .with_time_key(TIME_KEY)?
        .with_origin(Origin::UnixEpoch)?
        .with_clock_resolution(resolution);
    let clock = ManualClock::new();
    clock.set(coarse(AGE_MS));
    let limiter = connect(&server, config)?.with_clock(clock.clone());
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    // Bounded: a permit is due at 1 s; past 1.1 s something else is wrong.
    for ms in AGE_MS + 1..=1_100 {
        set_time(&mut redis, ms * 1_000)?;
        clock.set(coarse(ms));
        match limiter.try_acquire("k") {
            Ok(_) => return Ok(ms),
            Err(SharedError::Limited(_)) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Err("no permit within 1.1 s".into())
}

#[test]
fn a_local_rejection_on_a_coarse_clock_never_outlasts_the_servers_window() -> TestResult {
    // The server's window ends at 1 s: the next permit is the first call from then on.
    assert_eq!(next_permit("coarse", TICK)?, 1_000);
    // The same clock declared exact: at 1 s it still reads 984.375 ms of its timeline, before
    // the end it remembers (989.01 ms: the 990 ms the first reply said were left, less a
    // thousandth), so the key stays rejected locally after the server's window ended, until
    // the clock ticks to 1 s of its timeline (1.01 s on the server's).
    let late = next_permit("declared-exact", Duration::ZERO)?;
    assert!(late > 1_000, "permitted at {late} ms");
    Ok(())
}
