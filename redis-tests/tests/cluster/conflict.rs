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
