//! The test servers themselves: a restart is without persistence even for a server that
//! synchronised as a replica (which writes what it received to its directory), and no server
//! loads another's data.

use fixed_window_redis_test::RedisServer;

use crate::TestResult;

fn keys(server: &RedisServer) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut connection = server.client()?.get_connection()?;
    Ok(redis::cmd("KEYS").arg("*").query(&mut connection)?)
}

#[test]
fn a_replica_restarted_and_servers_started_after_it_begin_empty() -> TestResult {
    let primary = RedisServer::start()?;
    let mut replica = RedisServer::start()?;
    let mut on_primary = primary.client()?.get_connection()?;
    redis::cmd("SET").arg("kept").arg(1).exec(&mut on_primary)?;
    // The primary would otherwise wait 5 s for more replicas before the sync.
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("repl-diskless-sync-delay")
        .arg(0)
        .exec(&mut on_primary)?;
    let mut on_replica = replica.client()?.get_connection()?;
    redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(primary.port())
        .exec(&mut on_replica)?;
    // Until the replica has the key (its synchronisation is then on disk), at most 10 s.
    let started = std::time::Instant::now();
    while keys(&replica)? != ["kept"] {
        assert!(
            started.elapsed().as_secs() < 10,
            "the replica never synchronised"
        );
        std::thread::sleep(core::time::Duration::from_millis(10));
    }
    let later = RedisServer::start()?;
    assert_eq!(keys(&later)?, Vec::<String>::new());
    replica.restart()?;
    assert_eq!(keys(&replica)?, Vec::<String>::new());
    Ok(())
}
