//! A server that stops, restarts without its data, or pauses: `Unavailable` under both
//! policies, and recovery when it is back.

use core::time::Duration;

use fixed_window_redis::{
    Config, FailPolicy, SharedError, SharedEvent, SharedPermit, SharedRateLimiter, UnavailableKind,
};
use fixed_window_redis_test::RedisServer;

use crate::support::{HOUR, TestResult, connect, events, logged, server};

/// Attempts until the server counts one, at most 200 attempts 50 ms apart (10 s): the
/// limiter reconnects on the calls that find the connection broken.
fn recovered(limiter: &SharedRateLimiter, key: &str) -> Result<SharedPermit, SharedError> {
    let mut last = limiter.try_acquire(key);
    for _ in 0..200 {
        match &last {
            Ok(permit) if permit.remaining().is_some() => break,
            Err(SharedError::Limited(_)) => break,
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
        last = limiter.try_acquire(key);
    }
    last
}

fn config(name: &'static str, policy: FailPolicy) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of(name, 3, HOUR)?
        .with_fail_policy(policy)
        .with_timeout(Duration::from_millis(200))?)
}

fn stop(server: &mut RedisServer) -> TestResult {
    server.stop()?;
    Ok(())
}

#[test]
fn fail_closed_a_stopped_server_gives_unavailable_and_the_limiter_recovers() -> TestResult {
    let mut server = server()?;
    let (limiter, log) = logged(connect(&server, config("closed", FailPolicy::Closed)?)?);
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(2));
    stop(&mut server)?;

    let err = limiter.try_acquire("k").unwrap_err();
    let cause = err.unavailable().ok_or("not Unavailable")?;
    assert!(
        matches!(
            cause.kind(),
            UnavailableKind::Connection | UnavailableKind::Timeout
        ),
        "{cause}"
    );
    assert!(matches!(
        events(&log).last(),
        Some((key, SharedEvent::Unavailable { failed_open: false, .. })) if key == "k"
    ));

    // Back without its data (no persistence): a fresh window, a new origin.
    server.restart()?;
    assert_eq!(recovered(&limiter, "k")?.remaining(), Some(2));
    Ok(())
}

#[test]
fn fail_open_a_stopped_server_gives_flagged_uncounted_permits_and_the_limiter_recovers()
-> TestResult {
    let mut server = server()?;
    let (limiter, log) = logged(connect(&server, config("open", FailPolicy::Open)?)?);
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(2));
    stop(&mut server)?;

    for _ in 0..5 {
        let permit = limiter.try_acquire("k")?;
        assert_eq!(permit.remaining(), None);
        assert!(permit.failed_open().is_some());
    }
    let failed_open = events(&log)
        .iter()
        .filter(|(_, event)| {
            matches!(
                event,
                SharedEvent::Unavailable {
                    failed_open: true,
                    ..
                }
            )
        })
        .count();
    assert_eq!(failed_open, 5);

    server.restart()?;
    assert_eq!(recovered(&limiter, "k")?.remaining(), Some(2));
    Ok(())
}

#[test]
fn a_paused_server_times_out_under_both_policies_and_is_used_again_when_it_resumes() -> TestResult {
    let server = server()?;
    let closed = connect(&server, config("paused", FailPolicy::Closed)?)?;
    let open = connect(&server, config("paused", FailPolicy::Open)?)?;
    assert_eq!(closed.try_acquire("k")?.remaining(), Some(2));
    server.pause()?;
    let result = (closed.try_acquire("k"), open.try_acquire("k"));
    server.resume()?;

    let (closed_result, open_result) = result;
    let cause = closed_result.unwrap_err();
    assert_eq!(
        cause
            .unavailable()
            .map(fixed_window_redis::Unavailable::kind),
        Some(UnavailableKind::Timeout)
    );
    assert!(
        cause
            .unavailable()
            .is_some_and(fixed_window_redis::Unavailable::may_have_counted)
    );
    let permit = open_result?;
    assert_eq!(
        permit
            .failed_open()
            .map(fixed_window_redis::Unavailable::kind),
        Some(UnavailableKind::Timeout)
    );
    // The paused server kept its data; requests that timed out may have run when it resumed
    // (their replies were lost), so at most two permits are left.
    let next = recovered(&closed, "k");
    assert!(
        matches!(&next, Ok(permit) if permit.remaining() <= Some(1))
            || matches!(next, Err(SharedError::Limited(_))),
        "{next:?}"
    );
    Ok(())
}
