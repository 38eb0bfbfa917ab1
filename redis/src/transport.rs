//! The connection a limiter's calls go over, one node's or a cluster's.

use std::sync::Arc;

use redis::aio::ConnectionLike;
use redis::{Cmd, Pipeline, RedisFuture, Value};

use crate::renewal::Renewal;

/// redis-rs's `ConnectionManager` to one node (it reconnects after I/O errors), or its cluster
/// connection (it follows `MOVED` and `ASK`, reconnects, and refreshes the slot map), made anew
/// when the server refuses this client (see [`Renewal`]). Cloned per call, as it is a handle to
/// one multiplexed connection.
#[derive(Clone)]
pub(crate) struct Transport(Arc<Renewal>);

impl Transport {
    /// The calls over `renewal`'s connection.
    pub(crate) fn new(renewal: Arc<Renewal>) -> Transport {
        Transport(renewal)
    }
}

impl ConnectionLike for Transport {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(self.0.request(cmd))
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(self.0.request_pipeline(pipeline, offset, count))
    }

    fn get_db(&self) -> i64 {
        self.0.db()
    }
}
