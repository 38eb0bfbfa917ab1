//! Exact boundaries on the server's clock, with the time the script reads set by the test.

use core::time::Duration;

use fixed_window_redis::{Protocol, ScriptReply};

use crate::support::{TestResult, connect, on_time_key, raw, run, server, set_time};

const T0: u64 = 1_000_000;

fn micros(n: u64) -> Duration {
    Duration::from_micros(n)
}

#[test]
fn windows_start_at_the_origin_plus_whole_periods_and_nothing_carries_over() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let limiter = connect(&server, on_time_key("edges", 2, micros(1_000))?)?;
    assert_eq!(limiter.origin(), Some(T0));

    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    assert_eq!(
        limiter.try_acquire("k").unwrap_err().retry_after(),
        Some(micros(1_000))
    );

    // The last microsecond of the first window.
    set_time(&mut redis, T0 + 999)?;
    assert_eq!(
        limiter.try_acquire("k").unwrap_err().retry_after(),
        Some(micros(1))
    );

    // Exactly at the boundary the next window is in effect, with the full limit.
    set_time(&mut redis, T0 + 1_000)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));

    // Ten idle windows and a half later: the window starts at T0 + 11,000, not at the time
    // of the call, and starts at zero used.
    set_time(&mut redis, T0 + 11_500)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    assert_eq!(
        limiter.try_acquire("k").unwrap_err().retry_after(),
        Some(micros(500))
    );
    Ok(())
}

#[test]
fn a_server_clock_that_steps_back_counts_against_the_keys_current_window() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let limiter = connect(&server, on_time_key("backwards", 1, micros(1_000))?)?;
    set_time(&mut redis, T0 + 5_200)?;
    assert!(limiter.try_acquire("k").is_ok());
    // Back into an earlier window: the key's window [T0 + 5,000, T0 + 6,000) is full, and it
    // still ends at its usual instant.
    set_time(&mut redis, T0 + 1_300)?;
    assert_eq!(
        limiter.try_acquire("k").unwrap_err().retry_after(),
        Some(micros(4_700))
    );
    // Before the origin: likewise.
    set_time(&mut redis, T0 - 400)?;
    assert_eq!(
        limiter.try_acquire("k").unwrap_err().retry_after(),
        Some(micros(6_400))
    );
    // Once the clock passes that end, the next window opens as usual.
    set_time(&mut redis, T0 + 6_000)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    Ok(())
}

#[test]
fn the_script_reports_the_window_it_counted_in() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    // Large numbers: near 2^52 microseconds (the year 2112), a period of 7 µs.
    let origin = 1 << 52;
    set_time(&mut redis, origin)?;
    let protocol = Protocol::new(on_time_key("script", 3, micros(7))?);
    let registered = run(&mut redis, &protocol.register_call())?;
    assert_eq!(
        ScriptReply::parse(&registered),
        Some(ScriptReply::Registered {
            origin,
            now: origin
        })
    );
    let now = origin + 7 * 1_000_000 + 6;
    set_time(&mut redis, now)?;
    let fixed_window_redis::Begin::Call(call) = protocol.begin(
        "k",
        fixed_window::Instant::ZERO,
        fixed_window::Instant::ZERO,
    )?
    else {
        return Err("nothing is remembered, so the server decides".into());
    };
    let reply = run(&mut redis, &call)?;
    assert_eq!(
        ScriptReply::parse(&reply),
        Some(ScriptReply::Permitted {
            remaining: 2,
            now,
            window_start: origin + 7_000_000
        })
    );
    Ok(())
}
