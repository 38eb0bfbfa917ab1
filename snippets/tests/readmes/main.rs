//! Every Rust code block of the root README and of `fixed-window-redis`'s README, run as it is
//! written there (`build.rs` makes each one a module and a test of this binary). A block that
//! talks to Redis gets a throwaway `redis-server` (or a local cluster, or a TLS server with an
//! ACL user, as the block needs) started for it on a free loopback port; a block that serves
//! HTTP is served on a free loopback port and answered by a real client, which checks its 200s,
//! then its 429 with `Retry-After` and the `RateLimit` fields read by the structured-field
//! grammar. Every wait is bounded in count and time.

mod harness;

include!(concat!(env!("OUT_DIR"), "/snippets.rs"));
