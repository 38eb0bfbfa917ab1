//! A throwaway Redis Cluster: six `redis-server` processes, three masters with a replica each.

use core::fmt;
use core::time::Duration;
use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Nodes a cluster starts: three masters, each with one replica.
const NODES: usize = 6;

/// Hash slots of a Redis Cluster.
const SLOTS: u16 = 16384;

/// How long a node's cluster bus may go unanswered before it is suspected to have failed: short,
/// so a killed master fails over in a few seconds.
const NODE_TIMEOUT_MS: u32 = 1000;

/// How long a starting node may take to answer `PING`.
const NODE_STARTUP: Duration = Duration::from_secs(10);

/// How long `redis-cli --cluster create` may take, and then the cluster to settle.
const CLUSTER_STARTUP: Duration = Duration::from_secs(30);

/// How long a manual failover or the end of a migration may take to be seen by every node.
const SETTLE: Duration = Duration::from_secs(10);

/// How often a node is asked while waiting.
const POLL: Duration = Duration::from_millis(50);

/// How long one command to a node may wait for its answer.
const RESPONSE: Duration = Duration::from_secs(5);

/// Ports tried for one node before giving up, should another process take a free port first.
const PORT_TRIES: usize = 5;

/// Keys a migration moves per `MIGRATE`.
const KEYS_PER_MIGRATE: usize = 100;

/// How long one `MIGRATE` may wait for the target, in milliseconds.
const MIGRATE_TIMEOUT_MS: u64 = 5000;

/// `MIGRATE` rounds a migration makes at most: enough for the 100 000 keys of one slot, far more
/// than a test writes.
const MIGRATE_ROUNDS: usize = 1000;

/// Tells apart the directories of clusters started by one process.
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// A local Redis Cluster of six `redis-server` processes on free loopback ports: three masters
/// serving all 16384 hash slots, each with one replica; stopped when dropped.
///
/// Each node runs with persistence off (`--save '' --appendonly no`) in a directory of its own
/// (removed when dropped), and a cluster node timeout of 1 s, so that a killed master's replica
/// takes over within a few seconds. [`start`](RedisCluster::start) runs `redis-cli --cluster
/// create` and returns once every node sees the cluster as `ok` and every replica is linked to
/// its master. Both programs are found on `PATH` (Debian's packages `redis-server` and
/// `redis-tools`; `.ci/run` installs them when missing).
///
/// It hands out a redis-rs cluster [`client`](RedisCluster::client), which follows `MOVED` and
/// `ASK` redirections, and a [`node_client`](RedisCluster::node_client) for one node. Its
/// topology is read from `CLUSTER NODES` ([`masters`](RedisCluster::masters),
/// [`replicas`](RedisCluster::replicas), [`master_of`](RedisCluster::master_of)); faults are made
/// on demand: a master crashes ([`kill_master`](RedisCluster::kill_master), then
/// [`wait_for_failover`](RedisCluster::wait_for_failover)), a replica takes over on request
/// ([`failover`](RedisCluster::failover)), a slot moves to another master in steps
/// ([`begin_migration`](RedisCluster::begin_migration)).
///
/// # Examples
///
/// A cluster client writes a key, which one of the three masters holds.
///
/// ```
/// use fixed_window_redis_test::RedisCluster;
///
/// let cluster = RedisCluster::start()?;
/// assert_eq!(cluster.masters()?.len(), 3);
/// assert_eq!(cluster.replicas()?.len(), 3);
///
/// let mut connection = cluster.client()?.get_connection()?;
/// redis::cmd("SET").arg("greeting").arg("hello").exec(&mut connection)?;
/// let greeting: String = redis::cmd("GET").arg("greeting").query(&mut connection)?;
/// assert_eq!(greeting, "hello");
///
/// let keys: u64 = cluster.keys_per_master()?.iter().map(|&(_, keys)| keys).sum();
/// assert_eq!(keys, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisCluster {
    /// The nodes in the order they were started; a killed node stays, without a process.
    nodes: Vec<Process>,
    /// The directory holding each node's own directory.
    dir: PathBuf,
}

/// One node of a [`RedisCluster`] as `CLUSTER NODES` lists it.
///
/// # Examples
///
/// ```no_run
/// let cluster = fixed_window_redis_test::RedisCluster::start()?;
/// let masters = cluster.masters()?;
/// for replica in cluster.replicas()? {
///     let master = replica.master_id.as_deref().expect("a replica has a master");
///     assert!(masters.iter().any(|node| node.id == master));
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The port its clients connect to, on 127.0.0.1.
    pub port: u16,
    /// Its cluster node id (40 hexadecimal characters).
    pub id: String,
    /// For a replica, the id of the master it replicates; `None` for a master.
    pub master_id: Option<String>,
}

/// A slot moving from one master to another, begun by [`RedisCluster::begin_migration`]: the
/// source answers `ASK` for the slot's keys it no longer holds until
/// [`finish`](Migration::finish).
///
/// Dropped unfinished, the slot stays half migrated until the cluster is dropped.
///
/// # Examples
///
/// ```no_run
/// let cluster = fixed_window_redis_test::RedisCluster::start()?;
/// let mut connection = cluster.client().unwrap().get_connection().unwrap();
/// redis::cmd("SET").arg("moving").arg(1).exec(&mut connection).unwrap();
///
/// let slot = cluster.slot_of("moving")?;
/// let source = cluster.master_of(slot)?;
/// let target = cluster.masters()?.into_iter().find(|node| node.port != source).unwrap().port;
/// let migration = cluster.begin_migration(slot, target)?;
/// assert_eq!(migration.move_keys()?, 1);
/// // Half done: the source sends the client on with `ASK`.
/// let value: u32 = redis::cmd("GET").arg("moving").query(&mut connection).unwrap();
/// assert_eq!(value, 1);
/// migration.finish()?;
/// assert_eq!(cluster.master_of(slot)?, target);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Migration<'a> {
    cluster: &'a RedisCluster,
    slot: u16,
    source: Node,
    target: Node,
}

impl RedisCluster {
    /// Starts six nodes on free loopback ports, makes them a cluster of three masters with one
    /// replica each (`redis-cli --cluster create --cluster-replicas 1`), and waits until every
    /// node sees all 16384 slots served (`cluster_state:ok`) and every replica's link to its
    /// master is up.
    ///
    /// # Errors
    ///
    /// If `redis-server` or `redis-cli` is not installed, a node exits at once or does not
    /// answer within 10 s, `redis-cli` fails (its output is in the error), or the cluster does
    /// not settle within 30 s. The nodes started so far are stopped.
    ///
    /// # Examples
    ///
    /// See [`RedisCluster`].
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// assert_eq!(cluster.urls().len(), 6);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start() -> io::Result<RedisCluster> {
        let dir = std::env::temp_dir().join(format!(
            "fixed-window-redis-cluster-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        // Dropped on any error below, which stops the nodes started so far.
        let mut cluster = RedisCluster {
            nodes: Vec::with_capacity(NODES),
            dir,
        };
        for _ in 0..NODES {
            let node = Process::start(&cluster.dir)?;
            cluster.nodes.push(node);
        }
        cluster.create()?;
        cluster.wait_until_settled(CLUSTER_STARTUP)?;
        Ok(cluster)
    }

    /// Runs `redis-cli --cluster create` on the nodes, bounded in time.
    fn create(&self) -> io::Result<()> {
        let output_path = self.dir.join("redis-cli.out");
        let output = std::fs::File::create(&output_path)?;
        let mut cli = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(
                self.nodes
                    .iter()
                    .map(|node| format!("127.0.0.1:{}", node.port)),
            )
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .spawn()
            .map_err(|err| not_installed(err, "redis-cli", "redis-tools"))?;
        let started = Instant::now();
        let status = loop {
            if let Some(status) = cli.try_wait()? {
                break Some(status);
            }
            if started.elapsed() > CLUSTER_STARTUP {
                let _ = cli.kill();
                let _ = cli.wait();
                break None;
            }
            std::thread::sleep(POLL);
        };
        let output = std::fs::read_to_string(&output_path).unwrap_or_default();
        match status {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(io::Error::other(format!(
                "redis-cli --cluster create failed ({status}): {output}"
            ))),
            None => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "redis-cli --cluster create did not finish within {CLUSTER_STARTUP:?}: {output}"
                ),
            )),
        }
    }

    /// Waits until every running node sees the whole cluster `ok` with all slots assigned, and
    /// every running replica's link to its master is up.
    fn wait_until_settled(&self, timeout: Duration) -> io::Result<()> {
        wait_until(timeout, "the cluster to settle", || {
            for node in self.running() {
                let info = node.info("CLUSTER", "INFO")?;
                if field(&info, "cluster_state") != Some("ok") {
                    return Err(format!("node {} reports {info}", node.port));
                }
                if field(&info, "cluster_slots_assigned") != Some("16384") {
                    return Err(format!("node {} reports {info}", node.port));
                }
                let replication = node.info("INFO", "replication")?;
                if field(&replication, "role") == Some("slave")
                    && field(&replication, "master_link_status") != Some("up")
                {
                    return Err(format!("replica {} reports {replication}", node.port));
                }
            }
            Ok(())
        })
    }

    /// The URL of every running node, `redis://127.0.0.1:<port>/`; a node stopped by
    /// [`kill_master`](RedisCluster::kill_master) is left out.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// assert!(cluster.urls().iter().all(|url| url.starts_with("redis://127.0.0.1:")));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn urls(&self) -> Vec<String> {
        self.running().map(Process::url).collect()
    }

    /// A redis-rs cluster client whose initial nodes are the running nodes: it learns the slots
    /// from them, and follows `MOVED` and `ASK` redirections.
    ///
    /// # Errors
    ///
    /// If every node was killed; otherwise never for the URLs it makes: the `Result` is
    /// redis-rs's.
    ///
    /// # Examples
    ///
    /// See [`RedisCluster`].
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// assert!(cluster.client().is_ok());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn client(&self) -> redis::RedisResult<redis::cluster::ClusterClient> {
        redis::cluster::ClusterClient::new(self.urls())
    }

    /// A plain redis-rs client for the one node on `port`, which answers for its own slots only
    /// (`MOVED` for the others).
    ///
    /// # Errors
    ///
    /// If no node of the cluster listens on `port`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let port = cluster.masters()?[0].port;
    /// let mut connection = cluster.node_client(port)?.get_connection().unwrap();
    /// let role: Vec<redis::Value> = redis::cmd("ROLE").query(&mut connection).unwrap();
    /// assert_eq!(role[0], redis::Value::BulkString(b"master".to_vec()));
    /// assert!(cluster.node_client(0).is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn node_client(&self, port: u16) -> io::Result<redis::Client> {
        self.node(port)?.client()
    }

    /// The hash slot of `key`, as the cluster computes it (`CLUSTER KEYSLOT`).
    ///
    /// # Errors
    ///
    /// If no running node answers.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// // Only the hash tag counts.
    /// assert_eq!(cluster.slot_of("{user}:a")?, cluster.slot_of("user")?);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn slot_of(&self, key: &str) -> io::Result<u16> {
        self.ask_any(|node| {
            let mut connection = node.connect()?;
            redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(key)
                .query::<u16>(&mut connection)
                .map_err(|err| format!("CLUSTER KEYSLOT on node {}: {err}", node.port))
        })
    }

    /// The masters serving slots, ordered by port, as a running master sees them; a master that
    /// failed or was killed is left out.
    ///
    /// # Errors
    ///
    /// If no running master answers, or its `CLUSTER NODES` cannot be read.
    ///
    /// # Examples
    ///
    /// See [`Node`].
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// assert!(cluster.masters()?.iter().all(|node| node.master_id.is_none()));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn masters(&self) -> io::Result<Vec<Node>> {
        Ok(self
            .live_view()?
            .into_iter()
            .filter(Line::is_master)
            .map(|line| line.node)
            .collect())
    }

    /// The replicas, ordered by port, as a running master sees them; a replica that failed is
    /// left out.
    ///
    /// # Errors
    ///
    /// As [`masters`](RedisCluster::masters).
    ///
    /// # Examples
    ///
    /// See [`Node`].
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// assert!(cluster.replicas()?.iter().all(|node| node.master_id.is_some()));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn replicas(&self) -> io::Result<Vec<Node>> {
        Ok(self
            .live_view()?
            .into_iter()
            .filter(|line| !line.is_master())
            .map(|line| line.node)
            .collect())
    }

    /// The port of the master serving `slot`, as a running master sees it.
    ///
    /// # Errors
    ///
    /// If `slot` is not below 16384, no running master answers, or none serves the slot (its
    /// master failed and no replica took over yet).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let master = cluster.master_of(0)?;
    /// assert!(cluster.masters()?.iter().any(|node| node.port == master));
    /// assert!(cluster.master_of(16384).is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn master_of(&self, slot: u16) -> io::Result<u16> {
        check_slot(slot)?;
        self.live_view()?
            .into_iter()
            .find(|line| line.is_master() && line.serves(slot))
            .map(|line| line.node.port)
            .ok_or_else(|| io::Error::other(format!("no running master serves slot {slot}")))
    }

    /// The number of keys (`DBSIZE`) of each master, by port.
    ///
    /// # Errors
    ///
    /// As [`masters`](RedisCluster::masters); also if a master does not answer `DBSIZE`.
    ///
    /// # Examples
    ///
    /// See [`RedisCluster`].
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// assert_eq!(cluster.keys_per_master()?.len(), 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn keys_per_master(&self) -> io::Result<Vec<(u16, u64)>> {
        self.masters()?
            .into_iter()
            .map(|master| {
                let node = self.node(master.port)?;
                let mut connection = node.connect().map_err(io::Error::other)?;
                let keys = redis::cmd("DBSIZE")
                    .query::<u64>(&mut connection)
                    .map_err(|err| {
                        io::Error::other(format!("DBSIZE on node {}: {err}", master.port))
                    })?;
                Ok((master.port, keys))
            })
            .collect()
    }

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

    /// Begins moving `slot` to the master on `to_port`: the target is told it imports the slot
    /// (`CLUSTER SETSLOT <slot> IMPORTING <source id>`), then the source that it migrates it
    /// (`MIGRATING <target id>`). Keys move with [`Migration::move_keys`]; the slot changes
    /// hands with [`Migration::finish`].
    ///
    /// # Errors
    ///
    /// If `slot` is not below 16384, `to_port` is not a running master, it serves the slot
    /// already, or a node refuses.
    ///
    /// # Examples
    ///
    /// See [`Migration`].
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let source = cluster.master_of(0)?;
    /// assert!(cluster.begin_migration(0, source).is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn begin_migration(&self, slot: u16, to_port: u16) -> io::Result<Migration<'_>> {
        check_slot(slot)?;
        let view = self.live_view()?;
        let source = view
            .iter()
            .find(|line| line.is_master() && line.serves(slot))
            .map(|line| line.node.clone())
            .ok_or_else(|| io::Error::other(format!("no running master serves slot {slot}")))?;
        let target = view
            .iter()
            .find(|line| line.is_master() && line.node.port == to_port)
            .map(|line| line.node.clone())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("no running master listens on port {to_port}"),
                )
            })?;
        if source.port == to_port {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the master on port {to_port} serves slot {slot} already"),
            ));
        }
        // The target first: once the source answers `ASK`, the target must accept `ASKING`.
        self.set_slot(target.port, slot, "IMPORTING", &source.id)?;
        self.set_slot(source.port, slot, "MIGRATING", &target.id)?;
        Ok(Migration {
            cluster: self,
            slot,
            source,
            target,
        })
    }

    /// `CLUSTER SETSLOT <slot> <state> <id>` on the node on `port`.
    fn set_slot(&self, port: u16, slot: u16, state: &str, id: &str) -> io::Result<()> {
        let mut connection = self.node(port)?.connect().map_err(io::Error::other)?;
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg(state)
            .arg(id)
            .exec(&mut connection)
            .map_err(|err| {
                io::Error::other(format!(
                    "CLUSTER SETSLOT {slot} {state} {id} on node {port}: {err}"
                ))
            })
    }

    /// The node on `port`, running or killed.
    fn node(&self, port: u16) -> io::Result<&Process> {
        self.nodes
            .iter()
            .find(|node| node.port == port)
            .ok_or_else(|| unknown_port(port))
    }

    fn running(&self) -> impl Iterator<Item = &Process> {
        self.nodes.iter().filter(|node| node.child.is_some())
    }

    /// The first answer of `ask` from a running node.
    fn ask_any<T>(&self, mut ask: impl FnMut(&Process) -> Result<T, String>) -> io::Result<T> {
        let mut errors = Vec::new();
        for node in self.running() {
            match ask(node) {
                Ok(answer) => return Ok(answer),
                Err(err) => errors.push(err),
            }
        }
        Err(io::Error::other(format!(
            "no running node answered: {}",
            errors.join("; ")
        )))
    }

    /// `CLUSTER NODES` as the first running master sees it, without the nodes marked failed
    /// and those killed.
    fn live_view(&self) -> io::Result<Vec<Line>> {
        let mut lines = self.ask_any(|node| {
            let lines = node.view()?;
            // A replica may lag behind its master's view of the slots.
            match lines.iter().find(|line| line.myself) {
                Some(line) if line.is_master() => Ok(lines),
                _ => Err(format!("node {} is not a master", node.port)),
            }
        })?;
        lines.retain(|line| {
            !line.failed
                && self
                    .node(line.node.port)
                    .is_ok_and(|node| node.child.is_some())
        });
        lines.sort_by_key(|line| line.node.port);
        Ok(lines)
    }

    /// Waits until `agrees` holds for the `CLUSTER NODES` of every running node.
    fn wait_until_all_see(
        &self,
        timeout: Duration,
        what: &str,
        agrees: impl Fn(&[Line]) -> bool,
    ) -> io::Result<()> {
        wait_until(timeout, what, || {
            for node in self.running() {
                if !agrees(&node.view()?) {
                    return Err(format!("node {} does not see it yet", node.port));
                }
            }
            Ok(())
        })
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.stop();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl fmt::Debug for RedisCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisCluster")
            .field("nodes", &self.nodes)
            .field("dir", &self.dir)
            .finish()
    }
}

impl Migration<'_> {
    /// The slot moving.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let target = cluster.masters()?.into_iter().find(|node| node.port != cluster.master_of(7).unwrap()).unwrap();
    /// assert_eq!(cluster.begin_migration(7, target.port)?.slot(), 7);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn slot(&self) -> u16 {
        self.slot
    }

    /// Moves the keys of the slot still on the source to the target, 100 per `MIGRATE`, and
    /// returns how many moved. Keys written to the source meanwhile move in a later call.
    ///
    /// # Errors
    ///
    /// If a node refuses (`MIGRATE` waits 5 s at most), or keys remain after 1000 rounds.
    ///
    /// # Examples
    ///
    /// See [`Migration`].
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let target = cluster.masters()?.into_iter().find(|node| node.port != cluster.master_of(7).unwrap()).unwrap();
    /// let migration = cluster.begin_migration(7, target.port)?;
    /// assert_eq!(migration.move_keys()?, 0); // nothing written in slot 7
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn move_keys(&self) -> io::Result<u64> {
        let source = self.cluster.node(self.source.port)?;
        let mut connection = source.connect().map_err(io::Error::other)?;
        let mut moved = 0;
        for _ in 0..MIGRATE_ROUNDS {
            let keys: Vec<Vec<u8>> = redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(self.slot)
                .arg(KEYS_PER_MIGRATE)
                .query(&mut connection)
                .map_err(|err| {
                    io::Error::other(format!(
                        "CLUSTER GETKEYSINSLOT {} on node {}: {err}",
                        self.slot, self.source.port
                    ))
                })?;
            if keys.is_empty() {
                return Ok(moved);
            }
            redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(self.target.port)
                .arg("")
                .arg(0)
                .arg(MIGRATE_TIMEOUT_MS)
                .arg("KEYS")
                .arg(&keys)
                .exec(&mut connection)
                .map_err(|err| {
                    io::Error::other(format!(
                        "MIGRATE from node {} to node {}: {err}",
                        self.source.port, self.target.port
                    ))
                })?;
            moved += keys.len() as u64;
        }
        Err(io::Error::other(format!(
            "keys of slot {} remain on node {} after {MIGRATE_ROUNDS} rounds of MIGRATE",
            self.slot, self.source.port
        )))
    }

    /// Moves any keys left, then gives the slot to the target (`CLUSTER SETSLOT <slot> NODE
    /// <target id>`) on the target, the source and every other master, and waits until every
    /// running node sees the target serve it.
    ///
    /// # Errors
    ///
    /// As [`move_keys`](Migration::move_keys); also if a node refuses, or some node does not
    /// see the new owner within 10 s.
    ///
    /// # Examples
    ///
    /// See [`Migration`].
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// let target = cluster.masters()?.into_iter().find(|node| node.port != cluster.master_of(7).unwrap()).unwrap();
    /// cluster.begin_migration(7, target.port)?.finish()?;
    /// assert_eq!(cluster.master_of(7)?, target.port);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn finish(self) -> io::Result<()> {
        self.move_keys()?;
        let cluster = self.cluster;
        let others = cluster
            .masters()?
            .into_iter()
            .map(|master| master.port)
            .filter(|&port| port != self.target.port && port != self.source.port);
        // The target first, then the source: the order Redis documents for the end of a
        // migration, so that no moment has both refuse the slot.
        for port in [self.target.port, self.source.port]
            .into_iter()
            .chain(others)
        {
            cluster.set_slot(port, self.slot, "NODE", &self.target.id)?;
        }
        let slot = self.slot;
        let target = &self.target;
        cluster.wait_until_all_see(
            SETTLE,
            &format!("every node to see slot {slot} on {}", target.port),
            |lines| {
                lines
                    .iter()
                    .find(|line| line.serves(slot))
                    .is_some_and(|line| line.node.id == target.id)
            },
        )
    }
}

impl fmt::Debug for Migration<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Migration")
            .field("slot", &self.slot)
            .field("source", &self.source)
            .field("target", &self.target)
            .finish()
    }
}

/// One `redis-server` process of a cluster.
struct Process {
    port: u16,
    /// `None` once killed.
    child: Option<Child>,
    /// The replicas it had when killed, one of which takes over.
    heirs: Vec<u16>,
}

impl Process {
    /// Starts a cluster-enabled node in a directory of its own under `parent`, on free ports
    /// (one for clients, one for the cluster bus), and waits until it answers.
    fn start(parent: &Path) -> io::Result<Process> {
        let mut last = None;
        for _ in 0..PORT_TRIES {
            // Both bound at once, so they differ; the nodes started before hold theirs.
            let (port, bus_port) = {
                let client = TcpListener::bind("127.0.0.1:0")?;
                let bus = TcpListener::bind("127.0.0.1:0")?;
                (client.local_addr()?.port(), bus.local_addr()?.port())
            };
            let dir = parent.join(port.to_string());
            std::fs::create_dir_all(&dir)?;
            match Process::launch(&dir, port, bus_port) {
                Ok(process) => return Ok(process),
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(err),
                Err(err) => last = Some(err),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no cluster node started")))
    }

    fn launch(dir: &Path, port: u16, bus_port: u16) -> io::Result<Process> {
        let mut child = Command::new("redis-server")
            .args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1", "--protected-mode", "yes"])
            .args(["--cluster-enabled", "yes"])
            .args(["--cluster-port", &bus_port.to_string()])
            .args(["--cluster-config-file", "nodes.conf"])
            .args(["--cluster-node-timeout", &NODE_TIMEOUT_MS.to_string()])
            // A replica takes over however long ago it last heard from its master: a test's
            // failover must not hang on how busy the machine was.
            .args(["--cluster-replica-validity-factor", "0"])
            // A master serves its replica's first synchronisation at once, not 5 s later in
            // case more replicas ask.
            .args(["--repl-diskless-sync-delay", "0"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--dir", &dir.to_string_lossy()])
            .args(["--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| not_installed(err, "redis-server", "redis-server"))?;
        let mut process = Process {
            port,
            child: None,
            heirs: Vec::new(),
        };
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
                return Err(io::Error::other(format!(
                    "cluster node redis-server on port {port} exited at once: {status}"
                )));
            }
            if process.answers() {
                process.child = Some(child);
                return Ok(process);
            }
            if started.elapsed() > NODE_STARTUP {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "cluster node redis-server on port {port} did not answer within {NODE_STARTUP:?}"
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn client(&self) -> io::Result<redis::Client> {
        redis::Client::open(self.url()).map_err(io::Error::other)
    }

    /// A connection whose commands wait 5 s at most.
    fn connect(&self) -> Result<redis::Connection, String> {
        let connect = || -> redis::RedisResult<redis::Connection> {
            let connection = redis::Client::open(self.url())?
                .get_connection_with_timeout(Duration::from_secs(1))?;
            connection.set_read_timeout(Some(RESPONSE))?;
            connection.set_write_timeout(Some(RESPONSE))?;
            Ok(connection)
        };
        connect().map_err(|err| format!("node {}: {err}", self.port))
    }

    fn answers(&self) -> bool {
        self.connect()
            .and_then(|mut connection| {
                redis::cmd("PING")
                    .query::<String>(&mut connection)
                    .map_err(|err| err.to_string())
            })
            .is_ok()
    }

    /// Its `CLUSTER NODES`.
    fn view(&self) -> Result<Vec<Line>, String> {
        let mut connection = self.connect()?;
        let text: String = redis::cmd("CLUSTER")
            .arg("NODES")
            .query(&mut connection)
            .map_err(|err| format!("CLUSTER NODES on node {}: {err}", self.port))?;
        text.lines()
            .map(Line::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| format!("CLUSTER NODES on node {}: {err}", self.port))
    }

    /// The text of `CLUSTER INFO` or `INFO <section>`.
    fn info(&self, command: &str, argument: &str) -> Result<String, String> {
        let mut connection = self.connect()?;
        redis::cmd(command)
            .arg(argument)
            .query(&mut connection)
            .map_err(|err| format!("{command} {argument} on node {}: {err}", self.port))
    }

    /// Kills the process (`SIGKILL`) if it runs.
    fn stop(&mut self) -> io::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }
}

impl fmt::Debug for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Process")
            .field("port", &self.port)
            .field("running", &self.child.is_some())
            .field("heirs", &self.heirs)
            .finish()
    }
}

/// One line of `CLUSTER NODES`: `<id> <ip:port@bus-port> <flags> <master id or -> <ping sent>
/// <pong received> <config epoch> <link state> <slot or range>...`.
struct Line {
    node: Node,
    myself: bool,
    master: bool,
    /// Marked failed (`fail`) or without an address (`noaddr`).
    failed: bool,
    /// Slot ranges served, inclusive; migrating and importing marks (`[...]`) are left out.
    slots: Vec<(u16, u16)>,
}

impl Line {
    fn parse(text: &str) -> Result<Line, String> {
        let bad = || format!("unexpected CLUSTER NODES line: {text}");
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() < 8 {
            return Err(bad());
        }
        let port = fields[1]
            .split('@')
            .next()
            .and_then(|address| address.rsplit(':').next())
            .and_then(|port| port.parse().ok())
            .ok_or_else(bad)?;
        let flags: Vec<&str> = fields[2].split(',').collect();
        let mut slots = Vec::new();
        for range in fields[8..].iter().filter(|range| !range.starts_with('[')) {
            let (first, last) = range.split_once('-').unwrap_or((range, range));
            let first = first.parse().map_err(|_| bad())?;
            let last = last.parse().map_err(|_| bad())?;
            slots.push((first, last));
        }
        Ok(Line {
            node: Node {
                port,
                id: fields[0].to_owned(),
                master_id: (fields[3] != "-").then(|| fields[3].to_owned()),
            },
            myself: flags.contains(&"myself"),
            master: flags.contains(&"master"),
            failed: flags.contains(&"fail") || flags.contains(&"noaddr"),
            slots,
        })
    }

    fn is_master(&self) -> bool {
        self.master
    }

    fn serves(&self, slot: u16) -> bool {
        self.slots
            .iter()
            .any(|&(first, last)| (first..=last).contains(&slot))
    }
}

/// The value of `name` in an `INFO`-style text of `name:value` lines.
fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// Polls `ready` until it holds or `timeout` passes; the error names `what` and the last reason
/// `ready` gave.
fn wait_until(
    timeout: Duration,
    what: &str,
    mut ready: impl FnMut() -> Result<(), String>,
) -> io::Result<()> {
    let started = Instant::now();
    loop {
        match ready() {
            Ok(()) => return Ok(()),
            Err(reason) if started.elapsed() > timeout => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("waited {timeout:?} for {what}; last seen: {reason}"),
                ));
            }
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

fn check_slot(slot: u16) -> io::Result<()> {
    if slot < SLOTS {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "slot {slot} is out of range: a cluster has slots 0 to {}",
                SLOTS - 1
            ),
        ))
    }
}

fn unknown_port(port: u16) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("no node of the cluster listens on port {port}"),
    )
}

/// `err`, with a hint to install `package` when `program` is not on `PATH`.
fn not_installed(err: io::Error, program: &str, package: &str) -> io::Error {
    if err.kind() == io::ErrorKind::NotFound {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{program} is not on PATH: install the Debian package {package} (.ci/run does)"
            ),
        )
    } else {
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn parses_cluster_nodes_lines() {
        let line = Line::parse(
            "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host \
             slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected",
        )
        .unwrap();
        assert_eq!(line.node.port, 30004);
        assert_eq!(
            line.node.master_id.as_deref(),
            Some("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca")
        );
        assert!(!line.is_master() && !line.myself && !line.failed);

        let line = Line::parse(
            "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 \
             connected 0-5460 7000 [9300->-292f8b365bb7edb5e285caf0b7e6ddc7265a2f4c]",
        )
        .unwrap();
        assert!(line.is_master() && line.myself);
        assert_eq!(line.slots, [(0, 5460), (7000, 7000)]);
        assert!(line.serves(5460) && line.serves(7000) && !line.serves(9300));

        assert!(Line::parse("").is_err());
        assert!(Line::parse("id 127.0.0.1:x@1 master - 0 0 1 connected").is_err());
        assert!(Line::parse("id 127.0.0.1:1@2 master - 0 0 1 connected a-b").is_err());
    }

    #[test]
    fn reads_fields_of_info() {
        let info = "# Replication\r\nrole:slave\r\nmaster_link_status:up\r\n";
        assert_eq!(field(info, "role"), Some("slave"));
        assert_eq!(field(info, "master_link_status"), Some("up"));
        assert_eq!(field(info, "master"), None);
    }
}
