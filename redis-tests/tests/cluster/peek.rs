//! Peeking on a cluster: each counter read alone, on its own primary, in the script's
//! read-only mode.

use core::time::Duration;

use fixed_window_redis::{Config, SharedRateLimiter};
use fixed_window_redis_test::RedisCluster;

use crate::support::TestResult;

/// Two limiters, as two processes, on a real cluster, with keys on different primaries'
/// slots: a peek answers what the other took, takes nothing, and a key never counted answers
/// the whole limit without a counter being written on any primary.
#[test]
fn a_peek_reads_each_counter_on_its_own_primary_and_writes_nothing() -> TestResult {
    let cluster = RedisCluster::start()?;
    let config = Config::of("cluster-peek", 5, Duration::from_secs(3600))?.with_local_memory(0);
    let a = SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?)?;
    let b = SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?)?;
    let keys = ["client-1", "client-2", "client-3", "client-4", "client-5"];
    let primaries: std::collections::BTreeSet<u16> = keys
        .iter()
        .map(|key| cluster.master_of(cluster.slot_of(&config.cluster_counter_key(key))?))
        .collect::<Result<_, _>>()?;
    assert!(primaries.len() >= 2, "{primaries:?}");
    let before: u64 = cluster
        .keys_per_master()?
        .iter()
        .map(|(_, keys)| keys)
        .sum();
    for key in keys {
        assert_eq!(b.peek(key)?.remaining(), 5);
    }
    let after: u64 = cluster
        .keys_per_master()?
        .iter()
        .map(|(_, keys)| keys)
        .sum();
    assert_eq!(before, after, "a peek wrote a key");
    for key in keys {
        a.try_acquire_n(key, 2)?;
        for _ in 0..3 {
            let peek = b.peek(key)?;
            assert_eq!((peek.remaining(), peek.limit()), (3, 5), "{key}");
        }
        assert_eq!(a.try_acquire_n(key, 3)?.remaining(), Some(0));
        assert_eq!(b.peek(key)?.remaining(), 0);
    }
    Ok(())
}
