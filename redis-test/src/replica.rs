//! A server made the replica of another, caught up before it is handed over.

use core::time::Duration;
use std::io;

use crate::server::RedisServer;

/// How long a replica may take to catch up with its primary.
const CATCH_UP: Duration = Duration::from_secs(10);

impl RedisServer {
    /// Makes this server a replica of `primary` (`REPLICAOF`) and waits until it acknowledges
    /// the primary's writes, at most 10 s.
    ///
    /// # Errors
    ///
    /// If either server does not answer, or the replica has not caught up within 10 s.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis_test::RedisServer;
    ///
    /// let primary = RedisServer::start()?;
    /// let replica = RedisServer::start()?;
    /// replica.replicate(&primary)?;
    /// let mut on_primary = primary.client()?.get_connection()?;
    /// redis::cmd("SET").arg("k").arg(1).exec(&mut on_primary)?;
    /// let acknowledged: u32 = redis::cmd("WAIT").arg(1).arg(1_000).query(&mut on_primary)?;
    /// assert_eq!(acknowledged, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replicate(&self, primary: &RedisServer) -> io::Result<()> {
        let mut on_primary = connection(primary)?;
        // The primary would otherwise wait 5 s for more replicas before its first sync.
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("repl-diskless-sync-delay")
            .arg(0)
            .exec(&mut on_primary)
            .map_err(io::Error::other)?;
        let mut on_replica = connection(self)?;
        redis::cmd("REPLICAOF")
            .arg("127.0.0.1")
            .arg(primary.port())
            .exec(&mut on_replica)
            .map_err(io::Error::other)?;
        // Caught up when a write is acknowledged (`WAIT`) and seen there. After a diskless
        // synchronisation the primary streams to the replica only once it acknowledges the
        // synchronised data, up to a second later: until then `WAIT` times out.
        let started = std::time::Instant::now();
        loop {
            let marker: u64 = redis::cmd("INCR")
                .arg("fixed-window-test:replicated")
                .query(&mut on_primary)
                .map_err(io::Error::other)?;
            let acknowledged: u32 = redis::cmd("WAIT")
                .arg(1)
                .arg(100)
                .query(&mut on_primary)
                .map_err(io::Error::other)?;
            let seen: Option<u64> = redis::cmd("GET")
                .arg("fixed-window-test:replicated")
                .query(&mut on_replica)
                .map_err(io::Error::other)?;
            if acknowledged >= 1 && seen == Some(marker) {
                return Ok(());
            }
            if started.elapsed() > CATCH_UP {
                return Err(io::Error::other(format!(
                    "the replica on port {} did not catch up with its primary within {CATCH_UP:?}",
                    self.port()
                )));
            }
        }
    }
}

fn connection(server: &RedisServer) -> io::Result<redis::Connection> {
    server
        .client()
        .and_then(|client| client.get_connection())
        .map_err(io::Error::other)
}
