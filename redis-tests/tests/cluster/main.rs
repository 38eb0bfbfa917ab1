//! Integration tests of the shared limiter on a real Redis Cluster: six `redis-server`
//! processes (three primaries with a replica each) on free loopback ports, persistence off,
//! started by each test and stopped when it ends.
//!
//! The windows are short and real (the server's `TIME`): a permit's window is found from the
//! wall clock when it arrived plus the server's time to the window's end, which on one machine
//! lands within a round trip of the server's boundary, far inside the period. Every loop is
//! bounded in count and time.

mod conflict;
mod credentials;
mod exact;
mod failover;
mod isolation;
mod key_limit;
mod key_live;
mod lease;
mod limit;
mod migration;
mod peek;
mod replicated;
mod secure;
mod spread;
mod support;
