//! A chosen origin on a real server: windows at whole periods since the Unix epoch (or at a
//! given instant), stored and checked with the configuration, and calls sent without waiting
//! for a registration.

use core::time::Duration;

use fixed_window::{Instant, Origin, RateLimiterError};
use fixed_window_redis::{Config, SharedError, SharedRateLimiter, UnavailableKind, redis};
use fixed_window_redis_test::RedisServer;

use crate::support::{HOUR, TestResult, connect, on_time_key, raw, server, set_time};

/// 2023-11-14T22:13:20.25Z: a quarter of a second into a second, in microseconds.
const NOW: u64 = 1_700_000_000_250_000;

fn rejected_after(result: Result<fixed_window_redis::SharedPermit, SharedError>) -> Duration {
    match result {
        Err(SharedError::Limited(RateLimiterError::Rejected { retry_after, .. })) => retry_after,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn epoch_windows_end_at_whole_periods_of_unix_time() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, NOW)?;
    let config = on_time_key("epoch", 1, Duration::from_secs(1))?.with_origin(Origin::UnixEpoch)?;
    let limiter = connect(&server, config)?;
    assert_eq!(limiter.origin(), Some(0));
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    // The window is the second [NOW - 250 ms, NOW + 750 ms), not one begun at NOW.
    assert_eq!(
        rejected_after(limiter.try_acquire("k")),
        Duration::from_millis(750)
    );
    set_time(&mut redis, NOW + 750_000)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    Ok(())
}

#[test]
fn a_given_origin_aligns_the_windows_to_it() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, NOW)?;
    // Windows of 400 ms from 100 ms past the second before NOW: NOW is 150 ms into one.
    let at = Instant::from_nanos((NOW - 250_000 + 100_000) * 1_000);
    let config =
        on_time_key("given", 1, Duration::from_millis(400))?.with_origin(Origin::At(at))?;
    let limiter = connect(&server, config)?;
    // Stored as the grid's first boundary after the epoch.
    assert_eq!(limiter.origin(), Some((NOW - 150_000) % 400_000));
    limiter.try_acquire("k")?;
    assert_eq!(
        rejected_after(limiter.try_acquire("k")),
        Duration::from_millis(250)
    );
    Ok(())
}

#[test]
fn a_given_origin_after_the_servers_time_extends_its_grid_back() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, NOW)?;
    // A boundary three windows and 250 ms after NOW: NOW is 150 ms into a window of the grid,
    // which ends 250 ms on, not a window counted from the boundary.
    let at = Instant::from_nanos((NOW + 3 * 400_000 + 250_000) * 1_000);
    let config =
        on_time_key("ahead", 1, Duration::from_millis(400))?.with_origin(Origin::At(at))?;
    let limiter = connect(&server, config)?;
    limiter.try_acquire("k")?;
    assert_eq!(
        rejected_after(limiter.try_acquire("k")),
        Duration::from_millis(250)
    );
    // Another process naming an earlier boundary of the same grid agrees with it.
    let earlier = Instant::from_nanos((NOW - 150_000) * 1_000);
    let config =
        on_time_key("ahead", 1, Duration::from_millis(400))?.with_origin(Origin::At(earlier))?;
    let other = connect(&server, config)?;
    assert_eq!(other.origin(), limiter.origin());
    assert_eq!(
        rejected_after(other.try_acquire("k")),
        Duration::from_millis(250)
    );
    Ok(())
}

#[test]
fn processes_agree_on_a_fixed_origin_and_a_creation_one_adopts_it() -> TestResult {
    let server = server()?;
    let config = Config::of("agree", 2, HOUR)?.with_origin(Origin::UnixEpoch)?;
    let first = connect(&server, config.clone())?;
    let second = connect(&server, config)?;
    // One window for both: two permits between them, then none.
    first.try_acquire("k")?;
    second.try_acquire("k")?;
    assert!(first.try_acquire("k").is_err());
    // A process aligned to the limiter's creation finds the stored origin and adopts it.
    let creation = connect(&server, Config::of("agree", 2, HOUR)?)?;
    assert_eq!(creation.origin(), Some(0));
    assert!(creation.try_acquire("k").is_err());
    Ok(())
}

#[test]
fn a_fixed_origin_other_than_the_stored_one_is_a_conflict() -> TestResult {
    let server = server()?;
    let created = connect(&server, Config::of("apart", 2, HOUR)?)?;
    let stored = created.origin().ok_or("registered")?;
    let epoch = Config::of("apart", 2, HOUR)?.with_origin(Origin::UnixEpoch)?;
    let err = connect(&server, epoch.clone())
        .err()
        .ok_or("an epoch origin was accepted beside a creation one")?
        .downcast::<SharedError>()?;
    let SharedError::Conflict(conflict) = *err else {
        return Err(format!("not a conflict: {err}").into());
    };
    assert_eq!((conflict.origin, conflict.stored_origin), (Some(0), stored));
    assert!(conflict.to_string().contains("aligned to 0 µs here"));
    // A limiter started without connecting sends its calls at once; the server refuses them.
    let started = SharedRateLimiter::start_blocking(epoch, server.client()?)?;
    assert!(matches!(
        started.try_acquire("k"),
        Err(SharedError::Conflict(_))
    ));
    Ok(())
}

#[test]
fn a_fixed_origin_sends_the_first_call_without_registering() -> TestResult {
    // Nothing listens: a limiter aligned to its creation has no limiter to call until it has
    // registered, so its call fails as not registered; one with a fixed origin went to the
    // server, and its call fails on the connection itself.
    let port = RedisServer::free_port()?;
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
    let config = Config::of("nowhere", 1, HOUR)?.with_timeout(Duration::from_millis(200))?;
    let creation = SharedRateLimiter::start_blocking(config.clone(), client.clone())?;
    let kind = |result| match result {
        Err(SharedError::Unavailable { cause, .. }) => Ok(cause.kind()),
        other => Err(format!("expected Unavailable, got {other:?}")),
    };
    assert_eq!(
        kind(creation.try_acquire("k"))?,
        UnavailableKind::NotRegistered
    );
    let fixed = SharedRateLimiter::start_blocking(config.with_origin(Origin::UnixEpoch)?, client)?;
    assert_eq!(fixed.origin(), Some(0));
    assert_ne!(
        kind(fixed.try_acquire("k"))?,
        UnavailableKind::NotRegistered
    );
    Ok(())
}
