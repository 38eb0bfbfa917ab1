//! Attempts of one limiter that wait at the same moment go to the server as one script call,
//! each with its own decision; a call whose reply is lost leaves each of its attempts
//! undecided; a caller dropped while queued takes nothing and holds nobody up; a caller gone
//! while leading, or before taking the lead handed to it, strands nobody.
//!
//! The server's `CLIENT PAUSE` holds the first call in flight while the others queue behind
//! it; a plain command on another connection returns once the pause is over. Nothing here
//! asserts on durations.

use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::Arc;

use fixed_window_redis::{
    Config, FailPolicy, MAX_BATCH, SharedError, SharedPermit, SharedRateLimiter,
};
use fixed_window_redis_test::RedisServer;
use futures::FutureExt;
use tokio::task::{JoinError, JoinHandle};

use crate::support::{HOUR, TestResult, pause, raw, server};

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Waits (on a plain connection) until the server answers again.
fn resumed(server: &RedisServer) -> TestResult {
    redis::cmd("PING").exec(&mut raw(server)?)?;
    Ok(())
}

/// `EVALSHA` calls the server ran since its statistics were reset.
fn script_calls(redis: &mut redis::Connection) -> Result<u64, Box<dyn std::error::Error>> {
    let info: String = redis::cmd("INFO").arg("commandstats").query(redis)?;
    Ok(info
        .lines()
        .find_map(|line| line.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(Ok(0), str::parse)?)
}

fn reset_stats(redis: &mut redis::Connection) -> TestResult {
    redis::cmd("CONFIG").arg("RESETSTAT").exec(redis)?;
    Ok(())
}

async fn limiter(
    server: &RedisServer,
    config: Config,
) -> Result<Arc<SharedRateLimiter>, Box<dyn std::error::Error>> {
    Ok(Arc::new(
        SharedRateLimiter::connect(config, server.client()?).await?,
    ))
}

/// A limiter named `name` (10 per hour, a 30 s timeout) on a runtime of two workers, with the
/// server pausing every client for 300 ms: the first call sent is held in flight.
fn held(
    server: &RedisServer,
    name: &'static str,
) -> Result<(tokio::runtime::Runtime, Arc<SharedRateLimiter>), Box<dyn std::error::Error>> {
    let runtime = runtime()?;
    let config = Config::of(name, 10, HOUR)?.with_timeout(Duration::from_secs(30))?;
    let limiter = runtime.block_on(limiter(server, config))?;
    pause(&mut raw(server)?, 300)?;
    Ok((runtime, limiter))
}

/// An attempt on key `k` in a task of its own.
fn attempt(limiter: &Arc<SharedRateLimiter>) -> JoinHandle<Result<SharedPermit, SharedError>> {
    let limiter = Arc::clone(limiter);
    tokio::spawn(async move { limiter.try_acquire_async("k").await })
}

/// The remaining counts of two permits, in order.
fn both_remaining(
    first: Result<Result<SharedPermit, SharedError>, JoinError>,
    last: Result<Result<SharedPermit, SharedError>, JoinError>,
) -> Result<[u32; 2], Box<dyn std::error::Error>> {
    let mut remaining = [
        first??.remaining().ok_or("counted")?,
        last??.remaining().ok_or("counted")?,
    ];
    remaining.sort_unstable();
    Ok(remaining)
}

#[test]
fn attempts_queued_behind_a_call_in_flight_go_in_one_call_each_decided_on_its_key() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let runtime = runtime()?;
    let config = Config::of("coalesce", 5, HOUR)?.with_timeout(Duration::from_secs(30))?;
    let limiter = runtime.block_on(limiter(&server, config))?;
    reset_stats(&mut redis)?;
    pause(&mut redis, 300)?;
    let keys = ["a", "a", "b", "a", "a", "b", "a", "a", "b", "a", "b", "a"];
    let results = runtime.block_on(async {
        let tasks: Vec<_> = keys
            .iter()
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
    // Remaining permits per key, and rejections per key.
    let mut remaining: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    let mut rejected: BTreeMap<&str, usize> = BTreeMap::new();
    for result in results {
        match result? {
            (key, Ok(permit)) => remaining
                .entry(key)
                .or_default()
                .push(permit.remaining().ok_or("a counted permit")?),
            (key, Err(SharedError::Limited(_))) => *rejected.entry(key).or_default() += 1,
            (key, Err(other)) => return Err(format!("{key}: {other}").into()),
        }
    }
    for list in remaining.values_mut() {
        list.sort_unstable();
    }
    // Key a: eight attempts, five permits (each with its own remaining), three rejections;
    // key b: four attempts, four permits. As one at a time would have had it.
    assert_eq!(remaining["a"], [0, 1, 2, 3, 4]);
    assert_eq!(rejected.get("a"), Some(&3));
    assert_eq!(remaining["b"], [1, 2, 3, 4]);
    assert_eq!(rejected.get("b"), None);
    // The first call held in flight by the pause, everything after it in one more.
    let calls = script_calls(&mut redis)?;
    assert!(
        (1..=2).contains(&calls),
        "{calls} script calls for {} attempts",
        keys.len()
    );
    Ok(())
}

/// More attempts queued than one call carries go in calls of at most `MAX_BATCH` attempts.
/// (Caught: a batch bound computed as `MAX_BATCH + len` took all 600 in one call.)
#[test]
fn more_attempts_queued_than_a_call_carries_go_in_calls_of_at_most_max_batch() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let runtime = runtime()?;
    let queued = MAX_BATCH + 88;
    let limit = u32::try_from(queued + 1)?;
    let config = Config::of("bounded", limit, HOUR)?.with_timeout(Duration::from_secs(30))?;
    let limiter = runtime.block_on(limiter(&server, config))?;
    reset_stats(&mut redis)?;
    // Long enough for every attempt to queue, on a loaded machine too.
    pause(&mut redis, 1_000)?;
    let permits = runtime.block_on(async {
        let first = attempt(&limiter);
        // Long enough for the first caller to have sent its call (which the pause holds).
        tokio::time::sleep(Duration::from_millis(50)).await;
        let behind: Vec<_> = (0..queued).map(|_| attempt(&limiter)).collect();
        let mut permits = vec![first.await];
        for task in behind {
            permits.push(task.await);
        }
        permits
    });
    for permit in permits {
        permit??;
    }
    // The first call, then the queue in two: MAX_BATCH attempts, then the rest.
    assert_eq!(script_calls(&mut redis)?, 3);
    Ok(())
}

#[test]
fn a_lost_reply_leaves_every_attempt_of_its_call_undecided_under_the_policy() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let runtime = runtime()?;
    // Short against the pause, yet long enough for connecting on a loaded machine.
    let short = Duration::from_millis(400);
    for (name, policy) in [
        ("lost-closed", FailPolicy::Closed),
        ("lost-open", FailPolicy::Open),
    ] {
        let config = Config::of(name, 100, HOUR)?
            .with_timeout(short)?
            .with_fail_policy(policy);
        let limiter = runtime.block_on(limiter(&server, config))?;
        // The server holds the call past the timeout: its reply is as good as lost.
        pause(&mut redis, 2_000)?;
        let results = runtime.block_on(async {
            let tasks: Vec<_> = (0..6)
                .map(|_| {
                    let limiter = Arc::clone(&limiter);
                    tokio::spawn(async move { limiter.try_acquire_async("k").await })
                })
                .collect();
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await);
            }
            results
        });
        for result in results {
            let cause = match (policy, result?) {
                (FailPolicy::Closed, Err(SharedError::Unavailable { cause, .. })) => cause,
                (FailPolicy::Open, Ok(permit)) => permit
                    .failed_open()
                    .cloned()
                    .ok_or("a fail-open permit, flagged")?,
                (_, other) => return Err(format!("{policy:?}: {other:?}").into()),
            };
            assert!(cause.may_have_counted(), "{cause:?}");
        }
        resumed(&server)?;
        // The call held in flight ran when the pause ended: its permits counted though no
        // caller learnt it (the queued attempts, whose callers gave up, were never sent).
        let counted = limiter
            .try_acquire("k")?
            .remaining()
            .ok_or("a counted permit")?;
        assert!((93..99).contains(&counted), "{counted} remaining");
    }
    Ok(())
}

#[test]
fn a_caller_dropped_while_queued_takes_nothing_and_holds_nobody_up() -> TestResult {
    let server = server()?;
    let (runtime, limiter) = held(&server, "dropped")?;
    let (first, last) = runtime.block_on(async {
        let in_flight = attempt(&limiter);
        // Long enough for the first caller to have sent its call (which the pause holds).
        tokio::time::sleep(Duration::from_millis(50)).await;
        // Queued behind it, then dropped: polled once, so its attempt is in the queue.
        assert!(limiter.try_acquire_async("k").now_or_never().is_none());
        let after = attempt(&limiter);
        (in_flight.await, after.await)
    });
    // Both decided; the dropped one was never sent.
    assert_eq!(both_remaining(first, last)?, [8, 9]);
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(7));
    Ok(())
}

#[test]
fn a_leader_dropped_with_its_call_in_flight_strands_nobody() -> TestResult {
    let server = server()?;
    let (runtime, limiter) = held(&server, "leader-dropped")?;
    let (first, last) = runtime.block_on(async {
        let leader = attempt(&limiter);
        // Long enough for the leader to have sent its call (which the pause holds).
        tokio::time::sleep(Duration::from_millis(50)).await;
        let behind = [attempt(&limiter), attempt(&limiter)];
        tokio::time::sleep(Duration::from_millis(50)).await;
        // The leader's caller goes while its call is in flight.
        leader.abort();
        let [first, last] = behind;
        (first.await, last.await)
    });
    // The attempts queued behind it were sent when its call returned, and decided.
    assert_eq!(both_remaining(first, last)?, [7, 8]);
    // The leader's own attempt was in flight when it went: it counted.
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(6));
    Ok(())
}

#[test]
fn the_lead_handed_to_a_caller_gone_before_taking_it_passes_on() -> TestResult {
    let server = server()?;
    let (runtime, limiter) = held(&server, "lead-dropped")?;
    let (first, last) = runtime.block_on(async {
        let leader = attempt(&limiter);
        tokio::time::sleep(Duration::from_millis(50)).await;
        // First in the queue behind the call in flight: polled once, then not again.
        let mut next = Box::pin(limiter.try_acquire_async("k"));
        assert!(futures::poll!(&mut next).is_pending());
        let last = attempt(&limiter);
        // When the leader's caller has its answer, the lead is on its way to `next`, which
        // goes without taking it.
        let first = leader.await;
        drop(next);
        (first, last.await)
    });
    // The lead passed on and the last attempt was decided; the dropped one was never sent.
    assert_eq!(both_remaining(first, last)?, [8, 9]);
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(7));
    Ok(())
}
