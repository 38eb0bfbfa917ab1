//! Leased shares on a cluster ("lease-count"): leasing and exact processes on keys of several
//! slots share each key's one count and never pass the limit.

use core::time::Duration;

use fixed_window_redis::{Config, Lease, SharedRateLimiter};
use fixed_window_redis_test::RedisCluster;

use crate::support::TestResult;

const LIMIT: u32 = 40;
/// No window boundary falls inside the test.
const PERIOD: Duration = Duration::from_secs(3_600);
const KEYS: [&str; 3] = ["alice", "bob", "carol"];

fn config(lease: bool) -> Result<Config, Box<dyn std::error::Error>> {
    let config = Config::of("leased", LIMIT, PERIOD)?.with_timeout(Duration::from_secs(2))?;
    Ok(if lease {
        config.with_lease(Lease::new(8)?)
    } else {
        config
    })
}

#[test]
fn leasing_and_exact_processes_fill_each_key_exactly_to_the_limit() -> TestResult {
    let cluster = RedisCluster::start()?;
    let limiters = [
        SharedRateLimiter::connect_blocking(config(true)?, cluster.client()?)?,
        SharedRateLimiter::connect_blocking(config(true)?, cluster.client()?)?,
        SharedRateLimiter::connect_blocking(config(false)?, cluster.client()?)?,
    ];
    for key in KEYS {
        let mut granted = [0_u32; 3];
        let mut refused = [false; 3];
        for _ in 0..200 {
            for (index, limiter) in limiters.iter().enumerate() {
                match limiter.try_acquire(key) {
                    Ok(_) => granted[index] += 1,
                    Err(error) => {
                        assert!(error.retry_after().is_some(), "{key}: {error}");
                        refused[index] = true;
                    }
                }
            }
            if refused.iter().all(|&r| r) {
                break;
            }
        }
        // Never over the limit; and nothing dropped (no deadline passed, no call failed), so
        // every share was spent and the window filled exactly.
        assert_eq!(granted.iter().sum::<u32>(), LIMIT, "{key}: {granted:?}");
        assert!(granted.iter().all(|&g| g > 0), "{key}: {granted:?}");
    }
    Ok(())
}

/// Handing back on a cluster ("release-count"): the rest of each key's share, handed back,
/// comes off that key's counter in its own slot, and the exact process is granted it: each
/// key's window grants exactly its limit.
#[test]
fn handed_back_permits_are_granted_to_another_process_on_each_key() -> TestResult {
    let cluster = RedisCluster::start()?;
    let leasing = SharedRateLimiter::connect_blocking(config(true)?, cluster.client()?)?;
    let exact = SharedRateLimiter::connect_blocking(config(false)?, cluster.client()?)?;
    for key in KEYS {
        // A share of min(40 / 4, 8) = 8: the caller's one and 7 held.
        assert_eq!(leasing.try_acquire(key)?.remaining(), Some(7), "{key}");
    }
    let mut granted = [1_u32; KEYS.len()];
    for (index, key) in KEYS.iter().enumerate() {
        while exact.try_acquire(key).is_ok() {
            granted[index] += 1;
        }
    }
    assert_eq!(granted, [LIMIT - 7; KEYS.len()]);
    assert_eq!(leasing.hand_back()?, 7 * 3);
    // The exact process remembers the windows full until they end; one that does not asks.
    let late = SharedRateLimiter::connect_blocking(config(false)?, cluster.client()?)?;
    for (index, key) in KEYS.iter().enumerate() {
        while late.try_acquire(key).is_ok() {
            granted[index] += 1;
        }
        let after = leasing.try_acquire(key);
        assert!(after.is_err(), "{key}: {after:?} {granted:?}");
    }
    assert_eq!(granted, [LIMIT; KEYS.len()]);
    Ok(())
}
