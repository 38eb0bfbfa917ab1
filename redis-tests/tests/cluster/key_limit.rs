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
