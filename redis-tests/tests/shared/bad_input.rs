//! Bad input gets a clear error, never a panic.

use core::time::Duration;

use fixed_window_redis::{
    Config, ConfigError, KeyError, MAX_KEY_LEN, MAX_PERIOD, SharedError, SharedRateLimiter,
    UnavailableKind,
};

use crate::support::{HOUR, TIME_KEY, TestResult, connect, on_time_key, raw, server};

#[test]
fn configurations_the_rules_forbid_are_refused_naming_the_field() {
    let cases = [
        (Config::of("api", 0, HOUR), "limit"),
        (Config::of("api", 1, Duration::ZERO), "period"),
        (Config::of("api", 1, Duration::from_nanos(1)), "period"),
        (
            Config::of("api", 1, MAX_PERIOD + Duration::from_secs(1)),
            "period",
        ),
        (Config::of("", 1, HOUR), "name"),
        (Config::of("{api}", 1, HOUR), "name"),
    ];
    for (config, field) in cases {
        let err = config.unwrap_err();
        assert_eq!(err.field(), field, "{err}");
        assert!(err.to_string().contains(field), "{err}");
    }
    let config = Config::of("api", 1, HOUR).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(
        config.clone().with_timeout(Duration::ZERO).unwrap_err(),
        ConfigError::ZeroTimeout
    );
    assert_eq!(
        config.with_time_key("").unwrap_err(),
        ConfigError::EmptyTimeKey
    );
}

#[test]
fn keys_that_cannot_name_a_counter_are_refused_before_any_round_trip() -> TestResult {
    let server = server()?;
    let limiter = connect(&server, Config::of("keys", 1, HOUR)?)?;
    assert_eq!(
        limiter.try_acquire(""),
        Err(SharedError::InvalidKey {
            name: "keys",
            error: KeyError::Empty
        })
    );
    let long = "k".repeat(MAX_KEY_LEN + 1);
    assert_eq!(
        limiter.try_acquire(&long),
        Err(SharedError::InvalidKey {
            name: "keys",
            error: KeyError::TooLong {
                len: MAX_KEY_LEN + 1
            }
        })
    );
    // Any other text is a key: braces, spaces, non-ASCII.
    for key in ["{x}", "a b", "ключ", &"k".repeat(MAX_KEY_LEN)] {
        assert_eq!(limiter.try_acquire(key)?.remaining(), Some(0));
    }
    Ok(())
}

#[test]
fn a_server_that_is_not_there_is_unavailable_at_connection() -> TestResult {
    // Bind a port, then free it: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
    let config = Config::of("absent", 1, HOUR)?.with_timeout(Duration::from_millis(200))?;
    let err = SharedRateLimiter::connect_blocking(config, client).unwrap_err();
    assert!(err.unavailable().is_some(), "{err}");
    Ok(())
}

#[test]
fn garbage_in_the_limiters_keys_is_a_server_error_not_a_permit() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    redis::cmd("SET")
        .arg(TIME_KEY)
        .arg("not a time")
        .exec(&mut redis)?;
    let err = connect(&server, on_time_key("garbage", 1, HOUR)?)
        .err()
        .ok_or("a garbage time was accepted")?
        .downcast::<SharedError>()?;
    let cause = err.unavailable().ok_or("not Unavailable")?;
    assert_eq!(cause.kind(), UnavailableKind::Server);
    assert!(
        cause.message().contains("the time key holds no time"),
        "{cause}"
    );

    let limiter = connect(&server, Config::of("mangled", 1, HOUR)?)?;
    redis::cmd("SET")
        .arg(limiter.config().counter_key("k"))
        .arg("what")
        .exec(&mut redis)?;
    let err = limiter.try_acquire("k").unwrap_err();
    assert!(
        err.unavailable()
            .is_some_and(|cause| cause.message().contains("malformed counter")),
        "{err}"
    );
    redis::cmd("SET")
        .arg(limiter.config().config_key())
        .arg("what")
        .exec(&mut redis)?;
    let err = limiter.try_acquire("other").unwrap_err();
    assert!(
        err.unavailable()
            .is_some_and(|cause| cause.message().contains("malformed configuration")),
        "{err}"
    );
    Ok(())
}

#[test]
fn a_panicking_listener_does_not_break_the_call() -> TestResult {
    let server = server()?;
    let limiter = connect(&server, Config::of("listener", 1, HOUR)?)?
        .with_listener(|_, _| panic!("a listener's own bug"));
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    assert!(matches!(
        limiter.try_acquire("k"),
        Err(SharedError::Limited(_))
    ));
    Ok(())
}

#[test]
fn a_timeout_past_the_clocks_end_waits_as_long_as_it_can_without_a_panic() -> TestResult {
    let server = server()?;
    let config = Config::of("endless", 2, HOUR)?.with_timeout(Duration::MAX)?;
    let limiter = connect(&server, config.clone())?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let remaining = runtime.block_on(async {
        let limiter = SharedRateLimiter::connect(config, server.client()?).await?;
        Ok::<_, Box<dyn std::error::Error>>(limiter.try_acquire_async("k").await?.remaining())
    })?;
    assert_eq!(remaining, Some(0));
    Ok(())
}
