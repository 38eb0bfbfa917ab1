//! Limits per key on a cluster, where each counter records the limit it was written under
//! beside the settings: the checks of `tests/common/key_limit.rs`, as on one node.

use fixed_window_redis::Server;
use fixed_window_redis_test::RedisCluster;

#[path = "../common/key_limit.rs"]
mod checks;

#[test]
fn keys_are_counted_by_their_own_limits_in_every_process_on_a_cluster() -> checks::TestResult {
    let cluster = RedisCluster::start()?;
    let client = cluster.client()?;
    checks::keys_are_counted_by_their_own_limits(&|| Server::from(client.clone()))
}

#[test]
fn a_key_decided_by_another_limit_is_a_conflict_under_every_policy_on_a_cluster()
-> checks::TestResult {
    let cluster = RedisCluster::start()?;
    let client = cluster.client()?;
    checks::a_key_decided_by_another_limit_is_a_conflict(&|| Server::from(client.clone()))
}

/// A change of the limiter's limit on a cluster, where each counter records the version of the
/// limit it was written at: a process of the new version rewrites a counter of the old one
/// (its count kept), the key's own limit marked in it included, and decides each key as
/// before the change (a key with a limit of its own by it, one without by the new limiter's
/// limit); a process still holding the old version is told the new one, and then refused on
/// the key whose window another limit counts.
///
/// Before the script read the key's own limit in a counter of other settings, each attempt of
/// the new version on `paid` failed with the script's "malformed counter" error (found by the
/// simulator's sweeps of limits per key on clusters with changes of the limit).
#[test]
fn a_change_of_the_limit_keeps_each_keys_own_on_a_cluster() -> checks::TestResult {
    use core::time::Duration;
    use fixed_window_redis::{Config, SharedError, SharedRateLimiter};

    let cluster = RedisCluster::start()?;
    // No local memory: every attempt goes to the server.
    let config = Config::of("own-limits-change", 2, Duration::from_secs(3600))?
        .with_timeout(Duration::from_secs(2))?
        .with_local_memory(0);
    let a = SharedRateLimiter::connect_blocking(
        config.clone().key_limit("paid", 5)?,
        cluster.client()?,
    )?;
    let b = SharedRateLimiter::connect_blocking(config, cluster.client()?)?;
    a.try_acquire_n("paid", 2)?;
    a.try_acquire("free")?;
    b.try_acquire("free")?; // 2 of 2

    a.set_limit(3)?;
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(2));
    assert_eq!(a.try_acquire("free")?.remaining(), Some(0));
    // B learns the new limit from the counter, then meets `paid`'s window counted by 5.
    let refused = b.try_acquire("paid");
    assert!(
        matches!(&refused, Err(SharedError::Conflict(c)) if (c.limit, c.stored_limit) == (3, 5)),
        "{refused:?}"
    );
    assert_eq!(b.limit(), 3);
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(1));
    Ok(())
}
