//! A throwaway Redis Cluster: six `redis-server` processes, three masters with a replica each.
//!
//! [`RedisCluster`] starts the nodes, makes them a cluster and reads its topology; the faults it
//! makes are in `failover` (a master killed, a manual failover) and `migration` (a slot moved
//! in steps). Each node is a `Process`, and what a node sees of the cluster is a `Line` per
//! node.

use core::fmt;
use core::time::Duration;
use std::io;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

mod failover;
mod migration;
pub use self::migration::Migration;
mod node;
pub use self::node::Node;
mod process;
use self::process::{Process, Tls, not_installed};
use crate::certificates::Certificates;
#[cfg(test)]
mod tests;
mod view;
use self::view::{Line, field};

/// Nodes a cluster starts: three masters, each with one replica.
const NODES: usize = 6;

/// Hash slots of a Redis Cluster.
const SLOTS: u16 = 16384;

/// How long `redis-cli --cluster create` may take, and then the cluster to settle.
const CLUSTER_STARTUP: Duration = Duration::from_secs(30);

/// How long a manual failover or the end of a migration may take to be seen by every node.
const SETTLE: Duration = Duration::from_secs(10);

/// How often a node is asked while waiting.
const POLL: Duration = Duration::from_millis(50);

/// Tells apart the directories of clusters started by one process.
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// A local Redis Cluster of six `redis-server` processes on free loopback ports: three masters
/// serving all 16384 hash slots, each with one replica; stopped when dropped.
///
/// Each node runs with persistence off (`--save '' --appendonly no`) in a directory of its own
/// (removed when dropped), and a cluster node timeout of 1 s, so that a killed master's replica
/// takes over within a few seconds. [`start`](RedisCluster::start) runs `redis-cli --cluster
/// create` and returns once every node sees the cluster as `ok`, every replica is linked to
/// its master and every master counts its replica online. Both programs are found on `PATH`
/// (Debian's packages `redis-server` and `redis-tools`; `.ci/run` installs them when missing).
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
    /// A TLS cluster's certificates and files.
    tls: Option<Arc<Tls>>,
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
        RedisCluster::start_as(false)
    }

    /// [`start`](RedisCluster::start), every node speaking TLS only, to clients, to its
    /// replicas and on the cluster bus (`--tls-port`, `--tls-cluster`, `--tls-replication`),
    /// with a certificate for `127.0.0.1` signed by an authority made for this cluster
    /// ([`authority`](RedisCluster::authority)), which its [`client`](RedisCluster::client)
    /// trusts. With the feature `tls` only.
    ///
    /// # Errors
    ///
    /// As [`start`](RedisCluster::start), and if the certificates cannot be made or written.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start_tls()?;
    /// assert!(cluster.urls().iter().all(|url| url.starts_with("rediss://127.0.0.1:")));
    /// assert!(cluster.authority().is_some());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[cfg(feature = "tls")]
    pub fn start_tls() -> io::Result<RedisCluster> {
        RedisCluster::start_as(true)
    }

    fn start_as(tls: bool) -> io::Result<RedisCluster> {
        let dir = std::env::temp_dir().join(format!(
            "fixed-window-redis-cluster-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        // Dropped on any error below, which stops the nodes started so far.
        let tls = if tls {
            let certificates = Certificates::generate()?;
            let files = certificates.write(&dir)?;
            Some(Arc::new(Tls {
                certificates,
                files,
            }))
        } else {
            None
        };
        let mut cluster = RedisCluster {
            nodes: Vec::with_capacity(NODES),
            dir,
            tls,
        };
        for _ in 0..NODES {
            let node = Process::start(&cluster.dir, cluster.tls.as_ref())?;
            cluster.nodes.push(node);
        }
        cluster.create()?;
        cluster.wait_until_settled(CLUSTER_STARTUP)?;
        // A node's own state settles before the others hear of it: until every node lists
        // each master's replica, `replicas` could miss one.
        cluster.wait_until_all_see(CLUSTER_STARTUP, "every master with its replica", |lines| {
            let masters: Vec<&Line> = lines
                .iter()
                .filter(|line| line.is_master() && !line.slots.is_empty())
                .collect();
            masters.len() == NODES / 2
                && masters.iter().all(|master| {
                    lines
                        .iter()
                        .any(|line| line.node.master_id.as_ref() == Some(&master.node.id))
                })
        })?;
        cluster.wait_until_replicas_online(CLUSTER_STARTUP)?;
        Ok(cluster)
    }

    /// Waits until every master counts its replica online (`WAIT 1` answers 1 at once): a
    /// replica whose link is up may not be yet, and a limiter that waits for replicas would
    /// find its `WAIT` answered with none.
    fn wait_until_replicas_online(&self, timeout: Duration) -> io::Result<()> {
        wait_until(timeout, "every master's replica to be online", || {
            for node in self.running() {
                let replication = node.info("INFO", "replication")?;
                if field(&replication, "role") != Some("master") {
                    continue;
                }
                let mut connection = node.connect()?;
                let online: u64 = redis::cmd("WAIT")
                    .arg(1)
                    .arg(10)
                    .query(&mut connection)
                    .map_err(|err| format!("WAIT on node {}: {err}", node.port))?;
                if online < 1 {
                    return Err(format!("master {} reports {replication}", node.port));
                }
            }
            Ok(())
        })
    }

    /// Runs `redis-cli --cluster create` on the nodes, bounded in time.
    fn create(&self) -> io::Result<()> {
        let output_path = self.dir.join("redis-cli.out");
        let output = std::fs::File::create(&output_path)?;
        let tls: Vec<&str> = match &self.tls {
            Some(tls) => vec!["--tls", "--cacert", &tls.files.authority],
            None => Vec::new(),
        };
        let mut cli = Command::new("redis-cli")
            .args(tls)
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
        let builder = redis::cluster::ClusterClient::builder(self.urls());
        match &self.tls {
            Some(tls) => tls.certificates.cluster_client(builder),
            None => builder.build(),
        }
    }

    /// The certificate authority (PEM) that signed a TLS cluster's certificates, which its
    /// clients trust; `None` for a plain cluster.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let cluster = fixed_window_redis_test::RedisCluster::start()?;
    /// assert_eq!(cluster.authority(), None);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn authority(&self) -> Option<&str> {
        self.tls.as_ref().map(|tls| tls.certificates.authority())
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
            .field("tls", &self.tls.is_some())
            .finish()
    }
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
