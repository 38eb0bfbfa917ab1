//! A configuration that conflicts with the stored one, on one node: see the checks in
//! `tests/common/conflict.rs` (the same run on a cluster in `tests/cluster/conflict.rs`).

use fixed_window_redis::Server;
use fixed_window_redis_test::RedisServer;

#[path = "../common/conflict.rs"]
mod checks;

#[test]
fn a_conflicting_configuration_is_refused_on_every_call_whether_connected_or_started()
-> checks::TestResult {
    let server = RedisServer::start()?;
    let client = server.client()?;
    checks::every_call_is_refused(&|| Server::from(client.clone()))
}
