//! A configuration that conflicts with the stored one, on a cluster: `Conflict` on every
//! call, never a permit, for `connect` and `start`, before and after the registration
//! completes, under either policy (the checks of `tests/common/conflict.rs`, as on one node).

use fixed_window_redis::Server;
use fixed_window_redis_test::RedisCluster;

#[path = "../common/conflict.rs"]
mod checks;

#[test]
fn a_conflicting_configuration_is_refused_on_every_call_whether_connected_or_started_on_a_cluster()
-> checks::TestResult {
    let cluster = RedisCluster::start()?;
    let client = cluster.client()?;
    checks::every_call_is_refused(&|| Server::from(client.clone()))
}

/// On a cluster no attempt reads the configuration: once its key is lost (evicted, or a
/// failover lost it), a process of another period registers afresh, and each process counts
/// on the counters its own settings wrote, refused (`Conflict`, nothing counted) on those the
/// other's wrote.
#[test]
fn after_the_configuration_key_is_lost_each_period_is_refused_by_the_others_counters_on_a_cluster()
-> checks::TestResult {
    use core::time::Duration;

    use fixed_window_redis::{Config, Conflict, SharedError, SharedRateLimiter};

    const HOUR: Duration = Duration::from_secs(3600);
    let cluster = RedisCluster::start()?;
    let client = cluster.client()?;
    let hourly = Config::of("lost", 4, HOUR)?;
    let first = SharedRateLimiter::connect_blocking(hourly.clone(), Server::from(client.clone()))?;
    assert_eq!(first.try_acquire("a")?.remaining(), Some(3));

    redis::cmd("DEL")
        .arg(hourly.config_key())
        .exec(&mut client.get_connection()?)?;
    let other = SharedRateLimiter::connect_blocking(
        Config::of("lost", 4, 2 * HOUR)?,
        Server::from(client.clone()),
    )?;
    for _ in 0..2 {
        assert!(
            matches!(
                other.try_acquire("a"),
                Err(SharedError::Conflict(Conflict { stored_period, .. })) if stored_period == HOUR
            ),
            "the other period on the first's counter"
        );
    }
    assert_eq!(other.try_acquire("b")?.remaining(), Some(3));
    assert!(
        matches!(
            first.try_acquire("b"),
            Err(SharedError::Conflict(Conflict { stored_period, .. })) if stored_period == 2 * HOUR
        ),
        "the first period on the other's counter"
    );
    // Neither refusal counted.
    assert_eq!(first.try_acquire("a")?.remaining(), Some(2));
    assert_eq!(other.try_acquire("b")?.remaining(), Some(2));
    Ok(())
}
