//! Counters expire at their window's end plus the margin; the configuration does not.

use core::time::Duration;

use fixed_window_redis::{Config, EXPIRY_MARGIN_MILLIS};

use crate::support::{TestResult, connect, on_time_key, raw, server, set_time};

fn pttl(redis: &mut redis::Connection, key: &str) -> Result<i64, redis::RedisError> {
    redis::cmd("PTTL").arg(key).query(redis)
}

#[test]
fn a_counter_expires_at_its_windows_end_plus_the_margin_not_a_period_after_its_first_hit()
-> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, 0)?;
    let limiter = connect(&server, on_time_key("ttl", 5, Duration::from_secs(10))?)?;
    let counter = limiter.config().counter_key("k");

    set_time(&mut redis, 4_000_000)?;
    limiter.try_acquire("k")?;
    let ttl_first = pttl(&mut redis, &counter)?;
    // 6 s left in the window, plus the margin; PTTL only counts down from there.
    let bound = i64::try_from(6_000 + EXPIRY_MARGIN_MILLIS)?;
    assert!(
        0 < ttl_first && ttl_first <= bound,
        "PTTL {ttl_first} not in (0, {bound}]"
    );

    // A key whose window begins a millisecond before its end expires a margin after the end,
    // whereas an expiry set a period after the first hit would still be 10 s away.
    set_time(&mut redis, 9_999_000)?;
    limiter.try_acquire("late")?;
    let ttl = pttl(&mut redis, &limiter.config().counter_key("late"))?;
    let bound = i64::try_from(1 + EXPIRY_MARGIN_MILLIS)?;
    assert!(0 < ttl && ttl <= bound, "PTTL {ttl} not in (0, {bound}]");

    // Later attempts in a window keep the expiry its first one set (the time key moves the
    // script's clock, not the server's, so the kept expiry is still about 7 s away).
    limiter.try_acquire("k")?;
    let kept = pttl(&mut redis, &counter)?;
    assert!(
        bound < kept && kept <= ttl_first,
        "PTTL {kept} not in ({bound}, {ttl_first}]"
    );

    // The configuration key never expires: it holds the origin.
    assert_eq!(pttl(&mut redis, limiter.config().config_key())?, -1);
    Ok(())
}

#[test]
fn a_counter_is_gone_once_its_window_and_the_margin_have_passed() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let limiter = connect(&server, Config::of("gone", 1, Duration::from_millis(10))?)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    let counter = limiter.config().counter_key("k");
    let mut exists = true;
    // About 1.01 s on the server's clock; bounded at 20 s in case the machine is slow.
    for _ in 0..400 {
        exists = redis::cmd("EXISTS")
            .arg(&counter)
            .query::<bool>(&mut redis)?;
        if !exists {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!exists, "the counter {counter} never expired");
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    Ok(())
}
