//! Draining a key on a real server: its window full for every process until it ends.

use core::time::Duration;

use crate::support::{TestResult, connect, on_time_key, raw, server, set_time};

const T0: u64 = 4_000_000;

#[test]
fn a_drained_window_is_full_for_every_process_until_it_ends() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0 + 2_500)?;
    let config = on_time_key("drain", 5, Duration::from_millis(10))?;
    let a = connect(&server, config.clone())?;
    let b = connect(&server, config)?;
    assert_eq!(a.try_acquire_n("k", 2)?.remaining(), Some(3));
    // The first window is [T0 + 2,500, T0 + 12,500): 4 ms in, 6 ms to go.
    set_time(&mut redis, T0 + 6_500)?;
    assert_eq!(a.drain("k")?, Duration::from_millis(6));
    let refused = b.try_acquire("k").unwrap_err();
    assert_eq!(refused.retry_after(), Some(Duration::from_millis(6)));
    // Draining a full window again changes nothing; other keys are untouched.
    assert_eq!(b.drain("k")?, Duration::from_millis(6));
    assert_eq!(b.try_acquire("j")?.remaining(), Some(4));
    // The next window is whole.
    set_time(&mut redis, T0 + 12_500)?;
    assert_eq!(b.try_acquire_n("k", 5)?.remaining(), Some(0));
    Ok(())
}

#[test]
fn a_key_never_counted_is_drained_too() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let limiter = connect(
        &server,
        on_time_key("drain-new", 3, Duration::from_millis(10))?,
    )?;
    assert_eq!(limiter.drain("fresh")?, Duration::from_millis(10));
    assert!(limiter.try_acquire("fresh").is_err());
    Ok(())
}
