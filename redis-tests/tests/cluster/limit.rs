//! Changing the limit on a cluster: the counters, each in a slot of its own, tell a process
//! still holding the old limit.

use core::time::Duration;

use fixed_window::RateLimiterError;
use fixed_window_redis::{Config, SharedError, SharedRateLimiter};
use fixed_window_redis_test::RedisCluster;

use crate::support::TestResult;

/// Two limiters, as two processes, on a real cluster, with keys on different primaries'
/// slots. One lowers the limit and takes a permit on each key (rewriting its counter under the
/// new version, count kept); the other, still holding the old limit, gets no permit past the
/// new one on any of them and reports it. A raise reaches the other the same way. A third
/// limiter connecting afterwards starts at the stored limit.
///
/// Run by hand with the counter's newer-version check removed from `script.lua` (`if v >
/// known then` made `if false then`, as the shared tests' `counter_version_check_removed`
/// plants it), it fails at the first key: `b.try_acquire("client-1")` is granted,
/// `remaining: Some(0)`, the 5th permit, counted by the old limit of 5 under a limit of 4.
#[test]
fn a_process_holding_the_old_limit_is_told_by_the_counters() -> TestResult {
    let cluster = RedisCluster::start()?;
    // No local memory: a key remembered full would be rejected without asking the server,
    // which is what tells a process of a change (see the shared tests for that case).
    let config = Config::of("cluster-limit", 5, Duration::from_secs(3600))?.with_local_memory(0);
    let a = SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?)?;
    let b = SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?)?;
    let keys = ["client-1", "client-2", "client-3", "client-4", "client-5"];
    let slots: Vec<u16> = keys
        .iter()
        .map(|key| cluster.slot_of(&config.cluster_counter_key(key)))
        .collect::<Result<_, _>>()?;
    let primaries: std::collections::BTreeSet<u16> = slots
        .iter()
        .map(|&slot| cluster.master_of(slot))
        .collect::<Result<_, _>>()?;
    assert!(primaries.len() >= 2, "{slots:?} on {primaries:?}");
    for key in keys {
        a.try_acquire_n(key, 2)?;
        b.try_acquire(key)?; // 3 used of 5
    }

    a.set_limit(4)?;
    for key in keys {
        // A's version is newer than the counter's: it counts the 4th, rewriting the counter.
        assert_eq!(a.try_acquire(key)?.remaining(), Some(0), "{key}");
        let refused = b.try_acquire(key);
        assert!(
            matches!(
                refused,
                Err(SharedError::Limited(RateLimiterError::Rejected {
                    limit: 4,
                    ..
                }))
            ),
            "{key}: {refused:?}"
        );
        assert_eq!(b.limit(), 4);
    }

    b.set_limit(6)?;
    for key in keys {
        assert_eq!(b.try_acquire(key)?.remaining(), Some(1), "{key}");
        assert_eq!(a.try_acquire(key)?.remaining(), Some(0), "{key}");
        assert_eq!(a.limit(), 6);
    }

    let c = SharedRateLimiter::connect_blocking(config, cluster.client()?)?;
    assert_eq!(c.limit(), 6);
    assert!(c.try_acquire("client-1").is_err());
    Ok(())
}

/// On a cluster a change reaches a process even on keys no process of the new limit has
/// written: an active limiter reads the configuration again in the background, at most every
/// `LIMIT_REFRESH` (1 s). Here the other limiter only ever takes permits on fresh keys,
/// and holds the new limit within a few refreshes (bounded at 10 s of attempts, 50 ms apart).
///
/// Run by hand with the calls of `refresh_limit` removed from the limiter's attempts, it
/// fails: "after 195 attempts", 10 s, the other limiter still holds 5.
#[test]
fn an_active_process_reads_a_changed_limit_on_its_own() -> TestResult {
    let cluster = RedisCluster::start()?;
    let config = Config::of("cluster-refresh", 5, Duration::from_secs(3600))?.with_local_memory(0);
    let a = SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?)?;
    let b = SharedRateLimiter::connect_blocking(config, cluster.client()?)?;
    a.set_limit(2)?;
    let started = std::time::Instant::now();
    let mut fresh = 0;
    while b.limit() != 2 && started.elapsed() < Duration::from_secs(10) {
        b.try_acquire(&format!("fresh-{fresh}"))?;
        fresh += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(b.limit(), 2, "after {fresh} attempts");
    assert_eq!(b.try_acquire("after")?.remaining(), Some(1));
    Ok(())
}
