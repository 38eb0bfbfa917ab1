//! Tests that start a whole cluster: its topology, a client over it, and the faults it makes.

use core::time::Duration;
use std::io;

use super::RedisCluster;

/// Long enough for a killed master's replica to take over on a busy two-core machine; it
/// takes a few seconds.
const FAILOVER: Duration = Duration::from_secs(20);

fn cluster_connection(cluster: &RedisCluster) -> redis::cluster::ClusterConnection {
    cluster.client().unwrap().get_connection().unwrap()
}

#[test]
fn starts_three_masters_each_with_one_replica() {
    let cluster = RedisCluster::start().unwrap();
    assert_eq!(cluster.urls().len(), 6);
    let masters = cluster.masters().unwrap();
    let replicas = cluster.replicas().unwrap();
    assert_eq!(masters.len(), 3);
    assert_eq!(replicas.len(), 3);
    for master in &masters {
        let followers = replicas
            .iter()
            .filter(|replica| replica.master_id.as_deref() == Some(master.id.as_str()))
            .count();
        assert_eq!(followers, 1, "replicas of {master:?} among {replicas:?}");
    }
    // Every slot is served, by one of the masters.
    for slot in [0, 5460, 5461, 10922, 10923, 16383] {
        let port = cluster.master_of(slot).unwrap();
        assert!(masters.iter().any(|master| master.port == port));
    }
    assert_eq!(
        cluster.slot_of("{user}:a").unwrap(),
        cluster.slot_of("user").unwrap()
    );
    let mut connection = cluster
        .node_client(masters[0].port)
        .unwrap()
        .get_connection()
        .unwrap();
    let role: Vec<redis::Value> = redis::cmd("ROLE").query(&mut connection).unwrap();
    assert_eq!(role[0], redis::Value::BulkString(b"master".to_vec()));
    // Bad input is an error, not a panic.
    assert_eq!(
        cluster.master_of(16384).unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
    assert_eq!(
        cluster.node_client(0).unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
    assert!(
        cluster
            .begin_migration(0, cluster.master_of(0).unwrap())
            .is_err()
    );
    assert!(cluster.begin_migration(0, replicas[0].port).is_err());
}

#[test]
fn a_cluster_client_spreads_keys_over_all_masters() {
    let cluster = RedisCluster::start().unwrap();
    let mut connection = cluster_connection(&cluster);
    for i in 0..100 {
        redis::cmd("SET")
            .arg(format!("key-{i}"))
            .arg(i)
            .exec(&mut connection)
            .unwrap();
    }
    for i in 0..100 {
        let value: u32 = redis::cmd("GET")
            .arg(format!("key-{i}"))
            .query(&mut connection)
            .unwrap();
        assert_eq!(value, i);
    }
    let keys = cluster.keys_per_master().unwrap();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|&(_, count)| count > 0), "{keys:?}");
    assert_eq!(keys.iter().map(|&(_, count)| count).sum::<u64>(), 100);
}

#[test]
fn a_migration_moves_a_slot_and_its_keys() {
    let cluster = RedisCluster::start().unwrap();
    let mut connection = cluster_connection(&cluster);
    redis::cmd("SET")
        .arg("{moving}:a")
        .arg(1)
        .exec(&mut connection)
        .unwrap();
    let slot = cluster.slot_of("{moving}:a").unwrap();
    let source = cluster.master_of(slot).unwrap();
    let target = cluster
        .masters()
        .unwrap()
        .into_iter()
        .find(|master| master.port != source)
        .unwrap()
        .port;

    let migration = cluster.begin_migration(slot, target).unwrap();
    assert_eq!(migration.slot(), slot);
    // Begun, nothing moved: the source still answers.
    let value: u32 = redis::cmd("GET")
        .arg("{moving}:a")
        .query(&mut connection)
        .unwrap();
    assert_eq!(value, 1);
    assert_eq!(migration.move_keys().unwrap(), 1);
    // Half done: the key is on the target, and the source sends the client there (`ASK`).
    let value: u32 = redis::cmd("GET")
        .arg("{moving}:a")
        .query(&mut connection)
        .unwrap();
    assert_eq!(value, 1);
    // A new key of the slot goes to the target too.
    redis::cmd("SET")
        .arg("{moving}:b")
        .arg(2)
        .exec(&mut connection)
        .unwrap();
    assert_eq!(cluster.master_of(slot).unwrap(), source);
    migration.finish().unwrap();

    assert_eq!(cluster.master_of(slot).unwrap(), target);
    let values: Vec<u32> = redis::cmd("MGET")
        .arg("{moving}:a")
        .arg("{moving}:b")
        .query(&mut connection)
        .unwrap();
    assert_eq!(values, [1, 2]);
    let keys = cluster.keys_per_master().unwrap();
    assert!(keys.contains(&(target, 2)), "{keys:?}");
    assert!(keys.contains(&(source, 0)), "{keys:?}");
}

#[test]
fn a_killed_master_fails_over_to_its_replica_with_its_replicated_keys() {
    let mut cluster = RedisCluster::start().unwrap();
    let slot = cluster.slot_of("survivor").unwrap();
    let old = cluster.master_of(slot).unwrap();
    let old_id = cluster
        .masters()
        .unwrap()
        .into_iter()
        .find(|master| master.port == old)
        .unwrap()
        .id;
    let replica = cluster
        .replicas()
        .unwrap()
        .into_iter()
        .find(|replica| replica.master_id.as_deref() == Some(old_id.as_str()))
        .unwrap()
        .port;
    {
        let mut connection = cluster.node_client(old).unwrap().get_connection().unwrap();
        redis::cmd("SET")
            .arg("survivor")
            .arg("kept")
            .exec(&mut connection)
            .unwrap();
        // Replicated before the crash: the replica acknowledged it.
        let acknowledged: u32 = redis::cmd("WAIT")
            .arg(1)
            .arg(1000)
            .query(&mut connection)
            .unwrap();
        assert_eq!(acknowledged, 1);
    }
    // Only a running master can be killed.
    assert!(cluster.kill_master(replica).is_err());
    assert!(cluster.wait_for_failover(old, FAILOVER).is_err());

    cluster.kill_master(old).unwrap();
    assert_eq!(cluster.wait_for_failover(old, FAILOVER).unwrap(), replica);

    assert_eq!(cluster.master_of(slot).unwrap(), replica);
    assert_eq!(cluster.masters().unwrap().len(), 3);
    assert_eq!(cluster.replicas().unwrap().len(), 2);
    assert_eq!(cluster.urls().len(), 5);
    let mut connection = cluster_connection(&cluster);
    let value: String = redis::cmd("GET")
        .arg("survivor")
        .query(&mut connection)
        .unwrap();
    assert_eq!(value, "kept");
}

#[test]
fn a_manual_failover_swaps_a_replica_and_its_master_without_loss() {
    let cluster = RedisCluster::start().unwrap();
    let mut connection = cluster_connection(&cluster);
    redis::cmd("SET")
        .arg("swapped")
        .arg("kept")
        .exec(&mut connection)
        .unwrap();
    let slot = cluster.slot_of("swapped").unwrap();
    let old = cluster.master_of(slot).unwrap();
    let old_id = cluster
        .masters()
        .unwrap()
        .into_iter()
        .find(|master| master.port == old)
        .unwrap()
        .id;
    let replica = cluster
        .replicas()
        .unwrap()
        .into_iter()
        .find(|replica| replica.master_id.as_deref() == Some(old_id.as_str()))
        .unwrap();
    assert!(cluster.failover(old).is_err());

    cluster.failover(replica.port).unwrap();

    assert_eq!(cluster.master_of(slot).unwrap(), replica.port);
    let demoted = cluster
        .replicas()
        .unwrap()
        .into_iter()
        .find(|node| node.port == old)
        .unwrap();
    assert_eq!(demoted.master_id.as_deref(), Some(replica.id.as_str()));
    let value: String = redis::cmd("GET")
        .arg("swapped")
        .query(&mut connection)
        .unwrap();
    assert_eq!(value, "kept");
}
