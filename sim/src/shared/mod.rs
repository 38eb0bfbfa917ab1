//! The shared limiter (`fixed-window-redis`) under simulation: client processes driving its
//! sans-IO [`Protocol`](fixed_window_redis::Protocol) over simulated connections to a
//! simulated Redis that runs the limiter's own Lua script.

mod engine;
pub use crate::shared::engine::Reply;
mod keyspace;
mod server;
pub use crate::shared::server::Script;
