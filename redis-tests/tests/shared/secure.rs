//! Secure connections: TLS with a certificate the test made, a password, an ACL user with the
//! least the limiter needs; and each way of getting them wrong an `Unavailable` that says so,
//! never a permit under fail-closed.

use core::time::Duration;

use fixed_window_redis::{
    Config, FailPolicy, SharedError, SharedRateLimiter, UnavailableKind, redis,
};
use fixed_window_redis_test::{RedisServer, ServerOptions};

use crate::support::{HOUR, TestResult, retried};

/// The least a limiter's user needs: the script by its SHA-1 and loading it, the commands it
/// runs, on the limiters' keys. (The line redis/README.md gives.)
const LIMITER_ACL: &str = "limiter on >limiter-secret resetkeys ~fixed-window:* resetchannels -@all +evalsha +script|load +time +get +set";

fn config(name: &'static str) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of(name, 2, HOUR)?.with_timeout(Duration::from_secs(2))?)
}

/// The cause of a connection that must fail, checked to be `Unavailable` of `kind`.
fn refused(
    result: Result<SharedRateLimiter, SharedError>,
    kind: UnavailableKind,
) -> Result<String, Box<dyn std::error::Error>> {
    let err = result.err().ok_or("connected")?;
    let cause = err
        .unavailable()
        .ok_or_else(|| format!("not Unavailable: {err}"))?;
    assert_eq!(cause.kind(), kind, "{cause}");
    assert!(!cause.may_have_counted());
    Ok(cause.to_string())
}

#[test]
fn a_permit_over_tls_and_an_untrusted_certificate_is_access_denied() -> TestResult {
    let server = RedisServer::start_with(&ServerOptions::new().with_tls())?;
    assert!(server.url().starts_with("rediss://"));
    let limiter = SharedRateLimiter::connect_blocking(config("tls")?, server.client()?)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));
    let limiter = SharedRateLimiter::start_blocking(config("tls")?, server.client()?)?;
    let permit = retried(100, Duration::from_millis(50), || limiter.try_acquire("k"));
    assert_eq!(permit?.remaining(), Some(0));

    // The system's authorities do not know the test's.
    let untrusting = redis::Client::open(server.url())?;
    let cause = refused(
        SharedRateLimiter::connect_blocking(config("tls")?, untrusting.clone()),
        UnavailableKind::Denied,
    )?;
    assert!(cause.contains("certificate"), "{cause}");
    // Started with it, fail closed: every call refused, none permitted.
    let started = SharedRateLimiter::start_blocking(config("tls")?, untrusting)?;
    for _ in 0..3 {
        let err = started.try_acquire("k").unwrap_err();
        assert!(err.to_string().contains("certificate"), "{err}");
    }
    // Plain TCP to a TLS port: the server drops it.
    let plain = redis::Client::open(format!("redis://127.0.0.1:{}/", server.port()))?;
    assert!(SharedRateLimiter::connect_blocking(config("tls")?, plain).is_err());
    Ok(())
}

#[test]
fn a_password_lets_the_limiter_in_and_a_wrong_one_is_access_denied_under_both_policies()
-> TestResult {
    let server = RedisServer::start_with(&ServerOptions::new().with_password("s3cret"))?;
    let limiter = SharedRateLimiter::connect_blocking(config("auth")?, server.client()?)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));

    let wrong = redis::Client::open(format!("redis://:wrong@127.0.0.1:{}/", server.port()))?;
    let cause = refused(
        SharedRateLimiter::connect_blocking(config("auth")?, wrong.clone()),
        UnavailableKind::Denied,
    )?;
    assert!(cause.contains("uthentication"), "{cause}");
    let none = redis::Client::open(format!("redis://127.0.0.1:{}/", server.port()))?;
    let cause = refused(
        SharedRateLimiter::connect_blocking(config("auth")?, none),
        UnavailableKind::Denied,
    )?;
    assert!(cause.contains("NOAUTH"), "{cause}");

    // Started with the wrong password: fail closed refuses each call, fail open lets each
    // through flagged, and the server counts none of them.
    let closed = SharedRateLimiter::start_blocking(config("auth")?, wrong.clone())?;
    let open = SharedRateLimiter::start_blocking(
        config("auth")?.with_fail_policy(FailPolicy::Open),
        wrong,
    )?;
    for _ in 0..3 {
        let err = closed.try_acquire("k").unwrap_err();
        assert!(err.to_string().contains("access denied"), "{err}");
        let permit = open.try_acquire("k")?;
        assert!(permit.failed_open().is_some());
    }
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    Ok(())
}

#[test]
fn an_acl_user_with_the_least_the_limiter_needs_gets_permits_and_one_without_is_denied()
-> TestResult {
    let server = RedisServer::start_with(
        &ServerOptions::new()
            .with_password("admin")
            .with_acl(LIMITER_ACL)
            .with_acl(
                "no-time on >pw resetkeys ~fixed-window:* -@all +evalsha +script|load +get +set",
            )
            .with_acl("no-load on >pw resetkeys ~fixed-window:* -@all +evalsha +time +get +set")
            .with_acl(
                "other-keys on >pw resetkeys ~cache:* -@all +evalsha +script|load +time +get +set",
            ),
    )?;
    let limiter = SharedRateLimiter::connect_blocking(
        config("acl")?,
        server.client_as("limiter", "limiter-secret")?,
    )?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));
    assert_eq!(limiter.call("k", || "ran")?, "ran");
    assert!(matches!(
        limiter.try_acquire("k"),
        Err(SharedError::Limited(_))
    ));

    let mut admin = server.client()?.get_connection()?;
    for (user, says) in [
        ("no-time", "the script runs TIME, GET and SET"),
        ("no-load", "script|load"),
        ("other-keys", "keys"),
    ] {
        // Each finds the server without the script, as after a restart: it must load it.
        redis::cmd("SCRIPT").arg("FLUSH").exec(&mut admin)?;
        let cause = refused(
            SharedRateLimiter::connect_blocking(config("acl")?, server.client_as(user, "pw")?),
            UnavailableKind::Denied,
        )?;
        assert!(cause.contains(says), "{user}: {cause}");
    }

    // A permission taken away from a registered limiter's user: each call is refused, none
    // permitted.
    redis::cmd("ACL")
        .arg(&["SETUSER", "limiter", "-evalsha"][..])
        .exec(&mut admin)?;
    let err = limiter.try_acquire("other").unwrap_err();
    assert_eq!(
        err.unavailable().map(fixed_window_redis::Unavailable::kind),
        Some(UnavailableKind::Denied),
        "{err}"
    );
    Ok(())
}
