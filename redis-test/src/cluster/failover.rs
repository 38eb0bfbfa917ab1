//! Faults of a [`RedisCluster`]'s masters: one killed as in a crash, then its replica taking
//! over; a replica taking over on request.

use core::time::Duration;
use std::io;

use super::{RedisCluster, SETTLE, field, unknown_port, wait_until};

impl RedisCluster {
    /// Kills the master on `port` (`SIGKILL`, as a crash): its keyspace is gone, and its replica
    /// takes over once the other masters agree it failed (see
    /// [`wait_for_failover`](RedisCluster::wait_for_failover)).
    ///
    /// # Errors
    ///
    /// If no running node listens on `port`, the node is not a master, or the process cannot be
    /// killed.
    ///
    /// # Examples
    ///
    /// See [`wait_for_failover`](RedisCluster::wait_for_failover).
    ///
    /// ```no_run
    /// let mut cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let replica = cluster.replicas()?[0].port;
    /// assert!(cluster.kill_master(replica).is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn kill_master(&mut self, port: u16) -> io::Result<()> {
        let replicas: Vec<u16> = {
            let view = self.live_view()?;
            let master = view
                .iter()
                .find(|line| line.node.port == port && line.is_master())
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("no running master listens on port {port}"),
                    )
                })?;
            view.iter()
                .filter(|line| line.node.master_id.as_deref() == Some(master.node.id.as_str()))
                .map(|line| line.node.port)
                .collect()
        };
        let node = self
            .nodes
            .iter_mut()
            .find(|node| node.port == port)
            .ok_or_else(|| unknown_port(port))?;
        node.heirs = replicas;
        node.stop()
    }

    /// Waits until a replica of the master killed on `old_master_port` has been promoted
    /// (`role:master`), every running node sees the cluster `ok` again, and every running node
    /// lists the new master as serving the old one's slots; returns the port of the new master.
    ///
    /// # Errors
    ///
    /// If the node on `old_master_port` was not killed by
    /// [`kill_master`](RedisCluster::kill_master), or the failover is not complete within
    /// `timeout` (the error says what was last seen).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// let mut cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let old = cluster.master_of(0)?;
    /// cluster.kill_master(old)?;
    /// let new = cluster.wait_for_failover(old, Duration::from_secs(20))?;
    /// assert_eq!(cluster.master_of(0)?, new);
    /// assert_eq!(cluster.masters()?.len(), 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn wait_for_failover(&self, old_master_port: u16, timeout: Duration) -> io::Result<u16> {
        let old = self.node(old_master_port)?;
        if old.child.is_some() || old.heirs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the master on port {old_master_port} was not killed by kill_master"),
            ));
        }
        let mut promoted = 0;
        wait_until(
            timeout,
            &format!("a replica of {old_master_port} to take over"),
            || {
                promoted = 0;
                for &port in &old.heirs {
                    let heir = self.node(port).map_err(|err| err.to_string())?;
                    let replication = heir.info("INFO", "replication")?;
                    if field(&replication, "role") == Some("master") {
                        promoted = port;
                    }
                }
                if promoted == 0 {
                    return Err(format!("no replica of {old_master_port} is a master yet"));
                }
                for node in self.running() {
                    let info = node.info("CLUSTER", "INFO")?;
                    if field(&info, "cluster_state") != Some("ok") {
                        return Err(format!("node {} reports {info}", node.port));
                    }
                }
                Ok(())
            },
        )?;
        self.wait_until_all_see(
            timeout,
            &format!("every node to see {promoted} serve the slots of {old_master_port}"),
            |lines| {
                let serves = |port| {
                    lines.iter().any(|line| {
                        line.node.port == port
                            && line.is_master()
                            && !line.failed
                            && !line.slots.is_empty()
                    })
                };
                serves(promoted) && !serves(old_master_port)
            },
        )?;
        Ok(promoted)
    }

    /// Has the replica on `replica_port` take over from its master (`CLUSTER FAILOVER`: the
    /// master stops writes until the replica has caught up, so nothing is lost), and waits until
    /// their roles have swapped, the old master's link to the new one is up, every running node
    /// lists the new roles, and every running node sees the cluster `ok`.
    ///
    /// # Errors
    ///
    /// If no running node listens on `replica_port`, the node is not a replica, it refuses, or
    /// the roles have not swapped within 10 s.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let replica = cluster.replicas()?[0].clone();
    /// cluster.failover(replica.port)?;
    /// assert!(cluster.masters()?.iter().any(|node| node.port == replica.port));
    /// assert!(cluster.replicas()?.iter().any(|node| node.id == replica.master_id.clone().unwrap()));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn failover(&self, replica_port: u16) -> io::Result<()> {
        let replica = self.node(replica_port)?;
        let view = self.live_view()?;
        let master_id = view
            .iter()
            .find(|line| line.node.port == replica_port)
            .and_then(|line| line.node.master_id.clone())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("no running replica listens on port {replica_port}"),
                )
            })?;
        let master_port = view
            .iter()
            .find(|line| line.node.id == master_id)
            .map(|line| line.node.port)
            .ok_or_else(|| {
                io::Error::other(format!("the master of {replica_port} is not listed"))
            })?;
        let master = self.node(master_port)?;
        let mut connection = replica.connect().map_err(io::Error::other)?;
        redis::cmd("CLUSTER")
            .arg("FAILOVER")
            .exec(&mut connection)
            .map_err(|err| {
                io::Error::other(format!("CLUSTER FAILOVER on node {replica_port}: {err}"))
            })?;
        wait_until(
            SETTLE,
            &format!("{replica_port} to take over from {master_port}"),
            || {
                let replication = replica.info("INFO", "replication")?;
                if field(&replication, "role") != Some("master") {
                    return Err(format!("node {replica_port} reports {replication}"));
                }
                let replication = master.info("INFO", "replication")?;
                if field(&replication, "role") != Some("slave")
                    || field(&replication, "master_link_status") != Some("up")
                {
                    return Err(format!("node {master_port} reports {replication}"));
                }
                Ok(())
            },
        )?;
        let new_id = self
            .live_view()?
            .into_iter()
            .find(|line| line.node.port == replica_port)
            .map(|line| line.node.id)
            .ok_or_else(|| io::Error::other(format!("node {replica_port} is not listed")))?;
        self.wait_until_all_see(
            SETTLE,
            &format!("every node to see {replica_port} as the master of {master_port}"),
            |lines| {
                lines.iter().any(|line| {
                    line.node.port == master_port
                        && line.node.master_id.as_deref() == Some(new_id.as_str())
                }) && lines
                    .iter()
                    .any(|line| line.node.port == replica_port && line.is_master())
            },
        )?;
        self.wait_until_settled(SETTLE)
    }
}
