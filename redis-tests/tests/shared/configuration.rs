//! The shared configuration: the first process's origin adopted, a different limit or period
//! refused.

use core::time::Duration;

use fixed_window_redis::{Config, Conflict, SharedError};

use crate::support::{HOUR, TestResult, connect, on_time_key, raw, server, set_time};

#[test]
fn the_first_process_fixes_the_origin_and_later_ones_adopt_it() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let config = on_time_key("origin", 1, Duration::from_micros(1_000))?;
    set_time(&mut redis, 5_000)?;
    let first = connect(&server, config.clone())?;
    set_time(&mut redis, 9_300)?;
    let second = connect(&server, config)?;
    assert_eq!(
        (first.origin(), second.origin()),
        (Some(5_000), Some(5_000))
    );
    let stored: String = redis::cmd("GET")
        .arg("fixed-window:{origin}")
        .query(&mut redis)?;
    assert_eq!(stored, "5000:1000:1");
    // The second process's windows are the first one's: [9,000, 10,000), not [9,300, 10,300).
    set_time(&mut redis, 9_550)?;
    assert!(second.try_acquire("k").is_ok());
    assert_eq!(
        first.try_acquire("k").unwrap_err().retry_after(),
        Some(Duration::from_micros(450))
    );
    Ok(())
}

#[test]
fn a_process_with_another_limit_or_period_is_refused_at_connection() -> TestResult {
    let server = server()?;
    let first = connect(&server, Config::of("shared", 10, HOUR)?)?;
    let err = connect(&server, Config::of("shared", 11, HOUR)?)
        .err()
        .ok_or("a different limit was accepted")?;
    let conflict = err.downcast::<SharedError>()?;
    assert_eq!(
        *conflict,
        SharedError::Conflict(Conflict {
            name: "shared",
            limit: 11,
            period: HOUR,
            origin: None,
            stored_limit: 10,
            stored_period: HOUR,
            stored_origin: first.origin().ok_or("registered")?,
        })
    );
    assert!(conflict.to_string().contains("stored 10 per 3600s"));
    let other_period = connect(&server, Config::of("shared", 10, HOUR * 2)?)
        .err()
        .ok_or("a different period was accepted")?
        .downcast::<SharedError>()?;
    assert!(matches!(
        *other_period,
        SharedError::Conflict(Conflict { stored_period, .. }) if stored_period == HOUR
    ));
    // A different name is a different limiter.
    assert!(connect(&server, Config::of("shared-2", 11, HOUR)?).is_ok());
    Ok(())
}

#[test]
fn a_configuration_changed_behind_a_running_process_is_refused_on_its_next_call() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let limiter = connect(&server, Config::of("changed", 10, HOUR)?)?;
    assert!(limiter.try_acquire("k").is_ok());
    // Another deployment (after the key was deleted) stored 20 per hour.
    redis::cmd("DEL")
        .arg("fixed-window:{changed}")
        .exec(&mut redis)?;
    let _other = connect(&server, Config::of("changed", 20, HOUR)?)?;
    assert!(matches!(
        limiter.try_acquire("k"),
        Err(SharedError::Conflict(Conflict {
            limit: 10,
            stored_limit: 20,
            ..
        }))
    ));
    Ok(())
}
