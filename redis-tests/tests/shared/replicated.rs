//! Waiting for replicas (`Config::with_wait_for_replicas`): a permit is granted only once the
//! replica holds its count, and never while the replica cannot acknowledge it.

use core::time::Duration;

use fixed_window_redis::{
    Config, FailPolicy, SharedError, SharedRateLimiter, Unavailable, UnavailableKind,
};
use fixed_window_redis_test::RedisServer;

use crate::support::TestResult;

const HOUR: Duration = Duration::from_secs(3600);
/// Bounds the wait for the limiter to serve again.
const DEADLINE: Duration = Duration::from_secs(10);

/// A primary and a replica that has caught up with it.
fn replicated() -> Result<(RedisServer, RedisServer), Box<dyn std::error::Error>> {
    let primary = RedisServer::start()?;
    let replica = RedisServer::start()?;
    replica.replicate(&primary)?;
    Ok((primary, replica))
}

/// The permits a key's counter on `server` holds (`window_start:used`, hexadecimal).
fn counted(
    server: &RedisServer,
    config: &Config,
    key: &str,
) -> Result<u64, Box<dyn std::error::Error>> {
    let mut connection = server.client()?.get_connection()?;
    let state: Option<String> = redis::cmd("GET")
        .arg(config.counter_key(key))
        .query(&mut connection)?;
    let Some(state) = state else { return Ok(0) };
    let used = state
        .split(':')
        .nth(1)
        .ok_or("a counter without its count")?;
    Ok(u64::from_str_radix(used, 16)?)
}

#[test]
fn every_permit_granted_is_held_by_the_replica() -> TestResult {
    let (primary, replica) = replicated()?;
    // Timeouts a loaded machine's replication fits in.
    let config = Config::of("replicated", 1_000, HOUR)?
        .with_local_memory(0)
        .with_timeout(Duration::from_secs(2))?
        .with_wait_for_replicas(1);
    let limiter = SharedRateLimiter::connect_blocking(config.clone(), primary.client()?)?;
    for granted in 1..=50 {
        let permit = limiter.try_acquire("k")?;
        assert_eq!(permit.failed_open(), None);
        assert!(
            counted(&replica, &config, "k")? >= granted,
            "permit {granted} granted before the replica held it"
        );
    }
    // A script the primary lost is loaded again, the wait kept.
    redis::cmd("SCRIPT")
        .arg("FLUSH")
        .exec(&mut primary.client()?.get_connection()?)?;
    limiter.try_acquire("k")?;
    assert_eq!(counted(&replica, &config, "k")?, 51);
    Ok(())
}

#[test]
fn no_permit_is_granted_while_the_replica_cannot_acknowledge_it() -> TestResult {
    let (primary, replica) = replicated()?;
    let config = Config::of("unreplicated", 1_000, HOUR)?
        .with_local_memory(0)
        .with_timeout(Duration::from_secs(2))?
        .with_wait_for_replicas(1);
    let closed = SharedRateLimiter::connect_blocking(config.clone(), primary.client()?)?;
    let open = SharedRateLimiter::connect_blocking(
        config.clone().with_fail_policy(FailPolicy::Open),
        primary.client()?,
    )?;
    assert_eq!(closed.try_acquire("k")?.remaining(), Some(999));

    replica.pause()?;
    let refused = closed.try_acquire("k");
    let flagged = open.try_acquire("k");
    replica.resume()?;
    match refused {
        Err(SharedError::Unavailable { cause, .. }) => {
            assert_eq!(cause.kind(), UnavailableKind::Unreplicated, "{cause}");
            assert!(cause.kind().may_have_counted());
        }
        other => panic!("failing closed, an unacknowledged count gave {other:?}"),
    }
    let flagged = flagged?;
    assert_eq!(flagged.remaining(), None);
    assert_eq!(
        flagged.failed_open().map(Unavailable::kind),
        Some(UnavailableKind::Unreplicated)
    );
    // Both calls counted on the primary; the limiter serves again once the replica answers.
    assert_eq!(counted(&primary, &config, "k")?, 3);
    let started = std::time::Instant::now();
    loop {
        match closed.try_acquire("k") {
            Ok(permit) => {
                assert!(permit.remaining().is_some());
                break;
            }
            Err(err) if started.elapsed() < DEADLINE => drop(err),
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}
