//! Limits per key on one node: see the checks in `tests/common/key_limit.rs` (the same run on
//! a cluster in `tests/cluster/key_limit.rs`).

use fixed_window_redis::Server;
use fixed_window_redis_test::RedisServer;

#[path = "../common/key_limit.rs"]
mod checks;

#[test]
fn keys_are_counted_by_their_own_limits_in_every_process() -> checks::TestResult {
    let server = RedisServer::start()?;
    let client = server.client()?;
    checks::keys_are_counted_by_their_own_limits(&|| Server::from(client.clone()))
}

#[test]
fn a_key_decided_by_another_limit_is_a_conflict_under_every_policy() -> checks::TestResult {
    let server = RedisServer::start()?;
    let client = server.client()?;
    checks::a_key_decided_by_another_limit_is_a_conflict(&|| Server::from(client.clone()))
}
