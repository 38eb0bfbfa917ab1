//! A live change of one key's limit on a cluster, where a process learns a change from the
//! first counter of the new version it meets (or its background read): the checks of
//! `tests/common/key_live.rs`, as on one node.

use fixed_window_redis::Server;
use fixed_window_redis_test::RedisCluster;

#[path = "../common/key_live.rs"]
mod checks;

use checks::TestResult;

fn on_a_cluster(check: fn(&dyn Fn() -> Server) -> TestResult) -> TestResult {
    let cluster = RedisCluster::start()?;
    let client = cluster.client()?;
    check(&|| Server::from(client.clone()))
}

#[test]
fn a_raise_frees_room_for_every_process_on_a_cluster() -> TestResult {
    on_a_cluster(checks::a_raise_frees_room_for_every_process)
}

#[test]
fn a_lowering_below_the_count_fills_the_window_at_once_on_a_cluster() -> TestResult {
    on_a_cluster(checks::a_lowering_below_the_count_fills_the_window_at_once)
}

#[test]
fn clearing_goes_back_to_the_configured_limit_on_a_cluster() -> TestResult {
    on_a_cluster(checks::clearing_goes_back_to_the_configured_limit)
}

#[test]
fn a_process_registering_later_adopts_the_live_limits_on_a_cluster() -> TestResult {
    on_a_cluster(checks::a_process_registering_later_adopts_the_live_limits)
}

#[test]
fn a_configured_own_limit_outlasts_a_change_of_the_limiters_limit_on_a_cluster() -> TestResult {
    on_a_cluster(checks::a_configured_own_limit_outlasts_a_change_of_the_limiters_limit)
}

#[test]
fn a_key_never_holds_more_than_the_limit_in_force_on_a_cluster() -> TestResult {
    on_a_cluster(checks::a_key_never_holds_more_than_the_limit_in_force)
}
