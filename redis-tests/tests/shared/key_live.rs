//! A live change of one key's limit on one node: the checks of `tests/common/key_live.rs`
//! (the same run on a cluster in `tests/cluster/key_live.rs`), and what one node adds: every
//! attempt reads the configuration, so a process of an older version is told of a change by
//! its first attempt on any key, whoever touched the key since.

use core::time::Duration;

use fixed_window::RateLimiterError;
use fixed_window_redis::{Config, Server, SharedError, SharedRateLimiter, redis};
use fixed_window_redis_test::RedisServer;

use crate::support::HOUR;

#[path = "../common/key_live.rs"]
mod checks;

use checks::TestResult;

fn on_one_node(check: fn(&dyn Fn() -> Server) -> TestResult) -> TestResult {
    let server = RedisServer::start()?;
    let client = server.client()?;
    check(&|| Server::from(client.clone()))
}

#[test]
fn a_raise_frees_room_for_every_process() -> TestResult {
    on_one_node(checks::a_raise_frees_room_for_every_process)
}

#[test]
fn a_lowering_below_the_count_fills_the_window_at_once() -> TestResult {
    on_one_node(checks::a_lowering_below_the_count_fills_the_window_at_once)
}

#[test]
fn clearing_goes_back_to_the_configured_limit() -> TestResult {
    on_one_node(checks::clearing_goes_back_to_the_configured_limit)
}

#[test]
fn a_process_registering_later_adopts_the_live_limits() -> TestResult {
    on_one_node(checks::a_process_registering_later_adopts_the_live_limits)
}

#[test]
fn a_configured_own_limit_outlasts_a_change_of_the_limiters_limit() -> TestResult {
    on_one_node(checks::a_configured_own_limit_outlasts_a_change_of_the_limiters_limit)
}

#[test]
fn a_key_never_holds_more_than_the_limit_in_force() -> TestResult {
    on_one_node(checks::a_key_never_holds_more_than_the_limit_in_force)
}

/// A process still at the old version, whose attempts on the key nobody made since the
/// change, is told by the server, reads the live limits and counts by the new limit: of its
/// five attempts after the key is lowered from 10 to 3 with 1 used, exactly two are granted,
/// and the counter records the live limit with its version.
#[test]
fn an_old_process_is_told_and_never_counts_by_the_old_limit() -> TestResult {
    let server = RedisServer::start()?;
    let config = Config::of("live-old", 10, HOUR)?.with_timeout(Duration::from_secs(2))?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), server.client()?)?;
    let b = SharedRateLimiter::connect_blocking(config, server.client()?)?;
    assert_eq!(b.try_acquire("paid")?.remaining(), Some(9));
    a.set_key_limit("paid", 3)?;
    let mut granted = Vec::new();
    for _ in 0..5 {
        match b.try_acquire("paid") {
            Ok(permit) => granted.push(permit.remaining()),
            Err(SharedError::Limited(RateLimiterError::Rejected { limit: 3, .. })) => {}
            Err(other) => return Err(other.into()),
        }
    }
    assert_eq!(granted, [Some(1), Some(0)]);
    assert_eq!(b.key_limit("paid"), 3);
    let mut redis = server.client()?.get_connection()?;
    let counter: String = redis::cmd("GET")
        .arg("fixed-window:{live-old}:paid")
        .query(&mut redis)?;
    assert!(counter.ends_with(":3=3/1"), "{counter}");
    // A weight above the new limit is refused before any round trip, by both.
    for limiter in [&a, &b] {
        assert!(matches!(
            limiter.try_acquire_n("paid", 4),
            Err(SharedError::Limited(RateLimiterError::TooMany {
                limit: 3,
                ..
            }))
        ));
    }
    Ok(())
}

/// A process that remembers a key's window full rejects it without a round trip; its first
/// attempt on any other key after a raise tells it of the change, and the key has room again.
#[test]
fn a_process_remembering_a_window_full_learns_a_raise_from_an_attempt_on_another_key() -> TestResult
{
    let server = RedisServer::start()?;
    let config = Config::of("live-remembered", 1, HOUR)?.with_timeout(Duration::from_secs(2))?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), server.client()?)?;
    let b = SharedRateLimiter::connect_blocking(config, server.client()?)?;
    assert_eq!(b.try_acquire("paid")?.remaining(), Some(0));
    assert!(matches!(
        b.try_acquire("paid"),
        Err(SharedError::Limited(RateLimiterError::Rejected { .. }))
    ));
    a.set_key_limit("paid", 3)?;
    assert_eq!(b.try_acquire("free")?.remaining(), Some(0));
    assert_eq!(b.try_acquire("paid")?.remaining(), Some(1));
    Ok(())
}
