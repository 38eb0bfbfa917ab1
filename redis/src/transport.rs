//! The connection a limiter's calls go over, one node's or a cluster's.

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// redis-rs's `ConnectionManager` to one node (it reconnects), or its cluster connection (it
/// follows `MOVED` and `ASK`, reconnects, and refreshes the slot map). Cloned per call, as both
/// are handles to one multiplexed connection.
#[derive(Clone)]
pub(crate) enum Transport {
    Node(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Transport {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Transport::Node(manager) => manager.req_packed_command(cmd),
            Transport::Cluster(cluster) => cluster.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Transport::Node(manager) => manager.req_packed_commands(pipeline, offset, count),
            Transport::Cluster(cluster) => cluster.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Transport::Node(manager) => manager.get_db(),
            Transport::Cluster(cluster) => cluster.get_db(),
        }
    }
}
