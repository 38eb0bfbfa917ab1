//! Where a limiter's state lives: one Redis node, or a Redis Cluster.

use redis::Client;
use redis::cluster::ClusterClient;

/// The server a [`SharedRateLimiter`](crate::SharedRateLimiter) keeps its state on: a redis-rs
/// [`Client`] of one node (or a primary with replicas behind one address), or a
/// [`ClusterClient`] of a Redis Cluster (or Valkey cluster). `connect` and `start` take either,
/// through `From`, so the choice is the client the application builds; every call, the layer,
/// coalescing, local memory and the fail policy work the same on both.
///
/// What differs is where the keys live, and so when a conflicting configuration is found:
///
/// - **One node**: every call carries the configuration key with its counters, so each attempt
///   checks the stored configuration: a conflicting one is found by the next attempt, and a
///   configuration key lost (evicted, or a restart without persistence) is stored again at
///   once, with a new origin every process adopts.
/// - **A cluster**: each counter is in a slot of its own, chosen by its key
///   ([`Config::cluster_counter_key`](crate::Config::cluster_counter_key)), so a limiter's keys
///   spread over every primary and a call never reads the configuration key (which lives in
///   another slot). The configuration is checked when the process registers, and each counter
///   records the settings that wrote it: a process with other settings gets
///   [`SharedError::Conflict`](crate::SharedError::Conflict) from the first counter the other
///   settings wrote, and a process whose registration was refused gets it from every call.
///   The origin is the one the process registered; a configuration key lost
///   afterwards is stored again by the next process to register, with a new origin, and until
///   every process has restarted, windows of either grid are counted: each still holds at most
///   `limit` permits, and each begins only after the one it replaces has ended. Attempts are
///   batched per slot, never across slots. The time key ([`Config::with_time_key`](crate::Config::with_time_key))
///   is a single-node aid: on a cluster it would be in another slot than the counters, so
///   registering fails with [`UnavailableKind::Reply`](crate::UnavailableKind::Reply).
///
/// # Examples
///
/// ```
/// use fixed_window_redis::{Server, redis};
///
/// let node = Server::from(redis::Client::open("redis://127.0.0.1:6379/")?);
/// assert!(!node.is_cluster());
/// let urls = ["redis://127.0.0.1:7000/", "redis://127.0.0.1:7001/"];
/// let cluster = Server::from(redis::cluster::ClusterClient::new(urls)?);
/// assert!(cluster.is_cluster());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "made once per limiter and moved into it: its size costs nothing"
)]
pub enum Server {
    /// One node.
    Node(Client),
    /// A Redis Cluster: redis-rs's cluster client follows `MOVED` and `ASK` and refreshes its
    /// map of the slots.
    Cluster(ClusterClient),
}

impl Server {
    /// Whether this is a cluster.
    ///
    /// # Examples
    ///
    /// See [`Server`].
    ///
    /// ```
    /// use fixed_window_redis::Server;
    ///
    /// assert!(!Server::from(redis::Client::open("redis://127.0.0.1/")?).is_cluster());
    /// # Ok::<(), redis::RedisError>(())
    /// ```
    pub fn is_cluster(&self) -> bool {
        matches!(self, Server::Cluster(_))
    }
}

impl From<Client> for Server {
    fn from(client: Client) -> Server {
        Server::Node(client)
    }
}

impl From<ClusterClient> for Server {
    fn from(client: ClusterClient) -> Server {
        Server::Cluster(client)
    }
}

impl core::fmt::Debug for Server {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The clients hold credentials: only the kind is shown.
        f.write_str(match self {
            Server::Node(_) => "Server::Node",
            Server::Cluster(_) => "Server::Cluster",
        })
    }
}
