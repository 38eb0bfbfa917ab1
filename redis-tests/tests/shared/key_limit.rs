//! Limits per key on one node: see the checks in `tests/common/key_limit.rs` (the same run on
//! a cluster in `tests/cluster/key_limit.rs`).

use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::Arc;

use fixed_window_redis::{Config, Lease, Server, SharedError, SharedRateLimiter};
use fixed_window_redis_test::RedisServer;
use fixed_window_spec::KeyWindow;

use crate::support::{HOUR, on_time_key, pause, set_time};

#[path = "../common/key_limit.rs"]
mod checks;

#[test]
fn keys_are_counted_by_their_own_limits_in_every_process() -> checks::TestResult {
    let server = RedisServer::start()?;
    let client = server.client()?;
    checks::keys_are_counted_by_their_own_limits(&|| Server::from(client.clone()))
}

#[test]
fn a_key_decided_by_another_limit_is_a_conflict_under_every_policy() -> checks::TestResult {
    let server = RedisServer::start()?;
    let client = server.client()?;
    checks::a_key_decided_by_another_limit_is_a_conflict(&|| Server::from(client.clone()))
}

/// Attempts on keys of different limits queued behind a call in flight (the server paused)
/// go in calls of one limit each: every key is counted by its own limit.
#[test]
fn attempts_queued_together_are_each_decided_by_their_keys_limit() -> checks::TestResult {
    let server = RedisServer::start()?;
    let mut redis = server.client()?.get_connection()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let config = Config::of("coalesce-own", 2, HOUR)?
        .with_timeout(Duration::from_secs(30))?
        .key_limit("paid", 5)?;
    let limiter = Arc::new(runtime.block_on(SharedRateLimiter::connect(config, server.client()?))?);
    pause(&mut redis, 300)?;
    let keys = [
        "paid", "free", "paid", "free", "paid", "free", "paid", "paid", "free", "paid",
    ];
    let results = runtime.block_on(async {
        let tasks: Vec<_> = keys
            .iter()
            .chain(&keys)
            .map(|&key| {
                let limiter = Arc::clone(&limiter);
                tokio::spawn(async move { (key, limiter.try_acquire_async(key).await) })
            })
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await);
        }
        results
    });
    let mut granted: BTreeMap<&str, u32> = BTreeMap::new();
    for result in results {
        match result? {
            (key, Ok(_)) => *granted.entry(key).or_default() += 1,
            (_, Err(SharedError::Limited(_))) => {}
            (key, Err(other)) => return Err(format!("{key}: {other}").into()),
        }
    }
    assert_eq!(granted, BTreeMap::from([("free", 2), ("paid", 5)]));
    Ok(())
}

/// A leasing process takes its shares of a key's own limit: 40 by the rule's divisor of 4
/// gives the largest share, 8, where the default of 4 would give 1.
#[test]
fn a_lease_is_a_share_of_the_keys_own_limit() -> checks::TestResult {
    let server = RedisServer::start()?;
    let config = Config::of("lease-own", 4, HOUR)?.key_limit("paid", 40)?;
    let leasing = SharedRateLimiter::connect_blocking(
        config.clone().with_lease(Lease::new(8)?),
        server.client()?,
    )?;
    let exact = SharedRateLimiter::connect_blocking(config, server.client()?)?;
    leasing.try_acquire("paid")?;
    assert_eq!(exact.peek("paid")?.remaining(), 32);
    leasing.try_acquire("free")?;
    assert_eq!(exact.peek("free")?.remaining(), 3);
    Ok(())
}

/// Three processes, one giving the key the default of 3 and two its own limit of 5, attempt on
/// it in a pseudo-random order across windows (the server's time set by the test): every
/// decision is the spec's, where the window's first count settles the limit it is counted by
/// (`fixed_window_spec::KeyWindow`) and an attempt by another limit is a conflict.
#[test]
fn every_decision_follows_the_spec_of_a_window_settled_by_its_first_count() -> checks::TestResult {
    const PERIOD_MICROS: u64 = 10_000_000;
    let server = RedisServer::start()?;
    let mut redis = server.client()?.get_connection()?;
    let mut now = 1_000_000_000;
    set_time(&mut redis, now)?;
    let base = on_time_key("settled", 3, Duration::from_micros(PERIOD_MICROS))?;
    let processes = [
        SharedRateLimiter::connect_blocking(base.clone(), server.client()?)?,
        SharedRateLimiter::connect_blocking(base.clone().key_limit("k", 5)?, server.client()?)?,
        SharedRateLimiter::connect_blocking(base.key_limit("k", 5)?, server.client()?)?,
    ];
    let (mut window, mut used) = (KeyWindow::default(), 0_u32);
    let (mut conflicts, mut permits, mut rejections) = (0, 0, 0);
    // xorshift: the same order on every run.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for step in 0..300 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if state.is_multiple_of(11) {
            now += PERIOD_MICROS;
            set_time(&mut redis, now)?;
            (window, used) = (KeyWindow::default(), 0);
        }
        let process = &processes[usize::try_from(state % 3)?];
        let result = process.try_acquire("k");
        match (window.settle(process.key_limit("k")), &result) {
            (Err(_), Err(SharedError::Conflict(_))) => conflicts += 1,
            (Ok(limit), Ok(_)) if used < limit => {
                used += 1;
                permits += 1;
            }
            (Ok(limit), Err(SharedError::Limited(_))) if used >= limit => rejections += 1,
            (expected, _) => {
                return Err(format!(
                    "step {step}: the spec says {expected:?} after {used}, got {result:?}"
                )
                .into());
            }
        }
    }
    // The order reached every kind of decision.
    assert!(
        conflicts > 0 && permits > 0 && rejections > 0,
        "{conflicts} {permits} {rejections}"
    );
    Ok(())
}
