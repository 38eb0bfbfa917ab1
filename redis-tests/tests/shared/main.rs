//! Integration tests of the shared limiter against a real `redis-server`, started by the tests
//! on a free loopback port with persistence off and stopped when each test ends.
//!
//! No test asserts on wall-clock durations: exact boundaries use a time key the tests set (the
//! script reads it instead of `TIME`), or periods of an hour, long enough that no boundary
//! falls inside a test. Every loop is bounded in count and time.

mod bad_input;
mod boundaries;
mod coalescing;
mod configuration;
mod conflict;
mod counting;
mod credentials;
mod drain;
mod expiry;
mod fail_local;
mod hand_back_own;
mod http;
mod key_limit;
mod key_live;
mod layer;
mod lease;
mod limit;
mod live_loss;
mod local;
mod memory;
mod origin;
mod outage;
mod peek;
mod reload;
mod replicated;
mod resolution;
mod secure;
mod sharing;
mod startup;
mod support;
mod waiting;
mod weighted;
