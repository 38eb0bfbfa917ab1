//! Waiting for replicas on a cluster: each call waits for the replica of the primary that ran
//! it, and no other, so a stalled replica stops the permits of its primary's slots alone.

use core::time::Duration;

use fixed_window_redis::{Config, SharedError, SharedRateLimiter, UnavailableKind};
use fixed_window_redis_test::RedisCluster;

use crate::support::{Stopped, TestResult};

/// Bounds the waits for a permit while replicas synchronise or continue.
const DEADLINE: Duration = Duration::from_secs(10);

#[test]
fn a_stalled_replica_stops_the_permits_of_its_primary_alone() -> TestResult {
    let cluster = RedisCluster::start()?;
    let config = Config::of("replicated", 1_000, Duration::from_secs(3600))?
        .with_local_memory(0)
        .with_timeout(Duration::from_secs(2))?
        .with_wait_for_replicas(1);
    // Registers in the background: a replica may still be synchronising when the cluster first
    // reports itself ok, and until it acknowledges, nothing is granted.
    let limiter = SharedRateLimiter::start_blocking(config.clone(), cluster.client()?)?;
    let masters = cluster.masters()?;
    // A key on each primary.
    let mut keys: Vec<(u16, String)> = Vec::new();
    for candidate in 0..1_000 {
        let key = format!("client-{candidate}");
        let master = cluster.master_of(cluster.slot_of(&config.cluster_counter_key(&key))?)?;
        if keys.iter().all(|(port, _)| *port != master) {
            keys.push((master, key));
        }
        if keys.len() == masters.len() {
            break;
        }
    }
    assert_eq!(keys.len(), 3, "{keys:?}");
    let mut remaining = Vec::new();
    for (_, key) in &keys {
        remaining.push(permitted(&limiter, key)?);
    }

    let (stalled_master, stalled_key) = &keys[0];
    let master_id = &masters
        .iter()
        .find(|node| node.port == *stalled_master)
        .ok_or("the stalled key's primary is not listed")?
        .id;
    let replica = cluster
        .replicas()?
        .into_iter()
        .find(|node| node.master_id.as_ref() == Some(master_id))
        .ok_or("the primary has no replica")?;
    {
        let _stopped = Stopped::node(&cluster, replica.port)?;
        match limiter.try_acquire(stalled_key) {
            Err(SharedError::Unavailable { cause, .. }) => {
                assert_eq!(cause.kind(), UnavailableKind::Unreplicated, "{cause}");
            }
            other => panic!("a count its replica never acknowledged gave {other:?}"),
        }
        for ((_, key), before) in keys.iter().zip(&remaining).skip(1) {
            assert_eq!(
                limiter.try_acquire(key)?.remaining(),
                Some(before - 1),
                "{key}"
            );
        }
    }
    // Served again once the replica acknowledges (the unacknowledged call's count stands).
    let after = permitted(&limiter, stalled_key)?;
    assert!(
        after <= remaining[0] - 2,
        "{after} left after {}",
        remaining[0]
    );
    Ok(())
}

/// The permits left after a permit for `key`, attempted until one is granted (at most
/// [`DEADLINE`]).
fn permitted(limiter: &SharedRateLimiter, key: &str) -> Result<u32, Box<dyn std::error::Error>> {
    let started = std::time::Instant::now();
    loop {
        match limiter.try_acquire(key) {
            Ok(permit) => return Ok(permit.remaining().ok_or("a permit not counted")?),
            Err(err) if started.elapsed() < DEADLINE => drop(err),
            Err(err) => return Err(err.into()),
        }
    }
}
