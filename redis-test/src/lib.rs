//! Throwaway Redis servers and clusters for the shared limiter's tests and benchmarks: each runs
//! the `redis-server` on `PATH` on free loopback ports, with persistence off, and is stopped and
//! cleaned up when dropped. Not published: nothing here is for production.
//!
//! ```
//! use fixed_window_redis_test::RedisServer;
//!
//! let server = RedisServer::start()?;
//! let mut connection = server.client()?.get_connection()?;
//! redis::cmd("SET").arg("greeting").arg("hello").exec(&mut connection)?;
//! let greeting: String = redis::cmd("GET").arg("greeting").query(&mut connection)?;
//! assert_eq!(greeting, "hello");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Types
//!
//! - [`RedisServer`]: one `redis-server` process; [`start`](RedisServer::start),
//!   [`stop`](RedisServer::stop) and [`restart`](RedisServer::restart) it (empty each time),
//!   [`pause`](RedisServer::pause) and [`resume`](RedisServer::resume) it, and get its
//!   [`url`](RedisServer::url) or a redis-rs [`client`](RedisServer::client).
//! - [`ServerOptions`]: what [`RedisServer::start_with`] starts a server with: a port chosen
//!   beforehand ([`RedisServer::free_port`]), TLS with a certificate authority of its own
//!   ([`RedisServer::authority`]; feature `tls`), a password, ACL users
//!   ([`RedisServer::client_as`]), a memory limit and eviction policy.
//! - [`RedisCluster`]: a Redis Cluster of six `redis-server` processes, three masters with one
//!   replica each; its [`urls`](RedisCluster::urls), a redis-rs cluster
//!   [`client`](RedisCluster::client), its topology ([`masters`](RedisCluster::masters),
//!   [`replicas`](RedisCluster::replicas) as [`Node`]s, [`master_of`](RedisCluster::master_of) a
//!   slot), and faults: a master killed ([`kill_master`](RedisCluster::kill_master),
//!   [`wait_for_failover`](RedisCluster::wait_for_failover)), a manual
//!   [`failover`](RedisCluster::failover), a slot moved in steps
//!   ([`begin_migration`](RedisCluster::begin_migration) and its [`Migration`]).
//!
//! Its clients are of the workspace's `redis` crate, the one `fixed-window-redis` is built on,
//! so a client goes straight to `SharedRateLimiter::connect`.

mod certificates;
mod cluster;
pub use crate::cluster::{Migration, Node, RedisCluster};
mod options;
pub use crate::options::ServerOptions;
mod replica;
mod server;
pub use crate::server::RedisServer;
