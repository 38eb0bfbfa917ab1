//! One node of a [`RedisCluster`](super::RedisCluster), as its clients see it.

/// One node of a [`RedisCluster`](super::RedisCluster) as `CLUSTER NODES` lists it.
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
