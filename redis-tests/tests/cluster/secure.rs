//! A cluster that speaks TLS only: the limiter over `rediss://` on every primary, and a client
//! that does not trust the cluster's authority refused, never a permit under fail-closed.

use core::time::Duration;

use fixed_window_redis::{Config, SharedRateLimiter, UnavailableKind, redis};
use fixed_window_redis_test::RedisCluster;

use crate::support::TestResult;

#[test]
fn a_cluster_over_tls_counts_on_every_primary_and_refuses_an_untrusting_client() -> TestResult {
    let cluster = RedisCluster::start_tls()?;
    assert!(
        cluster
            .urls()
            .iter()
            .all(|url| url.starts_with("rediss://"))
    );
    let config =
        Config::of("secure", 2, Duration::from_secs(3600))?.with_timeout(Duration::from_secs(2))?;
    let limiter = SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?)?;
    for client in 0..60 {
        let key = format!("client-{client}");
        assert_eq!(limiter.try_acquire(&key)?.remaining(), Some(1), "{key}");
        assert_eq!(limiter.try_acquire(&key)?.remaining(), Some(0), "{key}");
        let refused = limiter
            .try_acquire(&key)
            .err()
            .ok_or("a third permit of two")?;
        assert!(refused.retry_after().is_some(), "{refused}");
    }
    let per_primary = cluster.keys_per_master()?;
    assert_eq!(per_primary.len(), 3, "{per_primary:?}");
    assert!(
        per_primary.iter().all(|&(_, keys)| keys > 0),
        "{per_primary:?}"
    );

    // The system's authorities do not know the cluster's.
    let untrusting = redis::cluster::ClusterClient::new(cluster.urls())?;
    let err = SharedRateLimiter::connect_blocking(config.clone(), untrusting.clone())
        .err()
        .ok_or("connected without trusting the cluster's authority")?;
    let cause = err
        .unavailable()
        .ok_or_else(|| format!("not Unavailable: {err}"))?;
    assert_eq!(cause.kind(), UnavailableKind::Denied, "{cause}");
    assert!(!cause.may_have_counted());
    assert!(cause.to_string().contains("certificate"), "{cause}");
    // Started with it, fail closed: every call refused, none permitted.
    let started = SharedRateLimiter::start_blocking(config, untrusting)?;
    for _ in 0..3 {
        let err = started
            .try_acquire("k")
            .err()
            .ok_or("a permit without trust")?;
        assert!(err.unavailable().is_some(), "{err}");
    }
    Ok(())
}
