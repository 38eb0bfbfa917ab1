//! Rejections of windows known to be full, without a round trip; the memory is bounded.

use core::time::Duration;

use fixed_window::{Clock, Instant, ManualClock, RateLimiterEvent};
use fixed_window_redis::{Config, SharedError, SharedEvent};

use crate::support::{HOUR, TIME_KEY, TestResult, connect, events, logged, raw, server, set_time};

#[test]
fn a_full_window_is_rejected_locally_even_with_the_server_gone() -> TestResult {
    let mut server = server()?;
    let (limiter, log) = logged(connect(&server, Config::of("local", 2, HOUR)?)?);
    limiter.try_acquire("k")?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    server.stop()?;
    // No round trip: the stopped server cannot make it unavailable.
    let err = limiter.try_acquire("k").unwrap_err();
    assert!(matches!(err, SharedError::Limited(_)), "{err}");
    assert!(err.retry_after().is_some_and(|wait| wait <= HOUR));
    assert!(matches!(
        events(&log).last(),
        Some((_, SharedEvent::Limiter(RateLimiterEvent::Rejected { .. })))
    ));
    // Another key needs the server.
    assert!(
        limiter
            .try_acquire("other")
            .unwrap_err()
            .unavailable()
            .is_some()
    );
    Ok(())
}

#[test]
fn without_local_memory_every_rejection_is_a_round_trip() -> TestResult {
    let mut server = server()?;
    let limiter = connect(&server, Config::of("remote", 1, HOUR)?.with_local_memory(0))?;
    limiter.try_acquire("k")?;
    assert!(matches!(
        limiter.try_acquire("k"),
        Err(SharedError::Limited(_))
    ));
    server.stop()?;
    assert!(
        limiter
            .try_acquire("k")
            .unwrap_err()
            .unavailable()
            .is_some()
    );
    Ok(())
}

#[test]
fn a_local_rejection_ends_a_thousandth_of_the_wait_before_the_earliest_end() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, 0)?;
    let config = Config::of("cutoff", 1, Duration::from_secs(1))?.with_time_key(TIME_KEY)?;
    let clock = ManualClock::new();
    let limiter = connect(&server, config)?.with_clock(clock.clone());
    // Full for 1 s from local 0 (the round trip takes no time on the manual clock).
    limiter.try_acquire("k")?;
    // The server's window opens; the local memory does not know.
    set_time(&mut redis, 1_000_000)?;
    clock.set(Instant::from_nanos(998_999_000));
    let err = limiter.try_acquire("k").unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_micros(1_001)));
    // From 1 s − 1 ms on, the key goes to the server again.
    clock.set(Instant::from_nanos(999_000_000));
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    assert_eq!(limiter.clock().now(), Instant::from_nanos(999_000_000));
    Ok(())
}

#[test]
fn the_memory_of_full_windows_never_exceeds_its_capacity() -> TestResult {
    let server = server()?;
    let limiter = connect(
        &server,
        Config::of("bounded", 1, HOUR)?.with_local_memory(3),
    )?;
    for key in 0..10 {
        limiter.try_acquire(&key.to_string())?;
        assert!(limiter.protocol().remembered() <= 3);
    }
    assert_eq!(limiter.protocol().remembered(), 3);
    // Keys not remembered are still rejected, by the server.
    assert!(matches!(
        limiter.try_acquire("9"),
        Err(SharedError::Limited(_))
    ));
    Ok(())
}
