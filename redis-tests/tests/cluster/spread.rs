//! A limiter's keys spread over every primary.

use core::time::Duration;

use fixed_window_redis::{Config, SharedRateLimiter};
use fixed_window_redis_test::RedisCluster;

use crate::support::TestResult;

#[test]
fn a_thousand_keys_of_one_limiter_spread_over_the_three_primaries() -> TestResult {
    let cluster = RedisCluster::start()?;
    let config = Config::of("spread", 3, Duration::from_secs(3600))?;
    let limiter = SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?)?;
    for client in 0..1_000 {
        let key = format!("client-{client}");
        assert_eq!(limiter.try_acquire(&key)?.remaining(), Some(2), "{key}");
    }
    // Every key's count is its own, wherever its slot is.
    assert_eq!(limiter.try_acquire("client-7")?.remaining(), Some(1));

    let configuration = cluster.master_of(cluster.slot_of(config.config_key())?)?;
    let per_primary = cluster.keys_per_master()?;
    assert_eq!(per_primary.len(), 3, "{per_primary:?}");
    let counters: Vec<u64> = per_primary
        .iter()
        .map(|&(port, keys)| keys - u64::from(port == configuration))
        .collect();
    assert_eq!(counters.iter().sum::<u64>(), 1_000, "{per_primary:?}");
    for &count in &counters {
        assert!((250..=420).contains(&count), "{counters:?}");
    }
    Ok(())
}
