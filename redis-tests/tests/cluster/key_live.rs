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

/// The configuration's slot loses its keys (as a failover to a replica that had not received
/// them would; the counters, in other slots, stay): `a` holds `paid`'s live limit 5 (the
/// limiter's is 2), `b` registers afterwards with none. Once `a`'s background read (at most
/// every `LIMIT_REFRESH` while it makes attempts) finds them lost, it writes them back with a
/// new version; `b` learns it from `a`'s counter of that version or its own background read,
/// and decides `paid` by 5 from the count `a` made. The origin is fixed, so that the lost
/// configuration does not realign `b`'s windows (a separate, documented effect).
#[test]
fn live_limits_lost_with_the_configurations_slot_are_written_back_on_a_cluster() -> TestResult {
    use core::time::Duration;

    use fixed_window::Origin;
    use fixed_window_redis::{Config, SharedError, SharedRateLimiter, redis};

    let cluster = RedisCluster::start()?;
    let client = cluster.client()?;
    let config = Config::of("live-lost", 2, Duration::from_secs(3600))?
        .with_origin(Origin::UnixEpoch)?
        .with_timeout(Duration::from_secs(2))?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), client.clone())?;
    a.set_key_limit("paid", 5)?;
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(4));
    let mut redis = client.get_connection()?;
    for key in [
        "fixed-window:{live-lost}",
        "fixed-window:{live-lost}/limits",
    ] {
        redis::cmd("DEL").arg(key).exec(&mut redis)?;
    }
    let b = SharedRateLimiter::connect_blocking(config, client)?;
    assert_eq!(b.key_limit("paid"), 2, "b registered with no live limits");

    // Each round, `a` makes an attempt on a key of its own and `b` one on `paid`; at most 60
    // rounds 100 ms apart (6 s). Until then `b` is refused by `a`'s counter (a conflict, or
    // a change it cannot read the live limits of).
    let (mut refused, mut decided) = (Vec::new(), None);
    for round in 0..60 {
        a.try_acquire(&format!("tick-{round}"))?;
        match b.try_acquire("paid") {
            Ok(permit) => {
                decided = Some(permit.remaining());
                break;
            }
            Err(err @ (SharedError::Conflict(_) | SharedError::Unavailable { .. })) => {
                refused.push(err.to_string());
            }
            Err(other) => return Err(other.into()),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(decided, Some(Some(3)), "refused: {refused:?}");
    assert_eq!((a.key_limit("paid"), b.key_limit("paid")), (5, 5));
    let live: String = redis::cmd("GET")
        .arg("fixed-window:{live-lost}/limits")
        .query(&mut redis)?;
    assert_eq!(live, "5 4:paid");
    Ok(())
}
