//! A slot of a [`RedisCluster`] moving from one master to another in steps.

use core::fmt;
use std::io;

use super::{Node, RedisCluster, SETTLE, check_slot};

/// Keys a migration moves per `MIGRATE`.
const KEYS_PER_MIGRATE: usize = 100;

/// How long one `MIGRATE` may wait for the target, in milliseconds.
const MIGRATE_TIMEOUT_MS: u64 = 5000;

/// `MIGRATE` rounds a migration makes at most: enough for the 100 000 keys of one slot, far more
/// than a test writes.
const MIGRATE_ROUNDS: usize = 1000;

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
