//! Real faults on a real server: a fault proxy on loopback between the limiters and
//! `redis-server` (delays, lost replies, resets), the server paused, restarted without its data
//! and failed over to a lagging replica, its script cache flushed, its clock stepped forward and
//! back (through the script's time key), callers that die mid-call; several limiter replicas in
//! this process and, in one test, several processes. Every attempt is recorded on the server's
//! clock and judged by the models crate's checkers: linearizability with lost replies as
//! indeterminate operations, the ledger's bound after state loss, and no counter that never
//! expires. The planted bugs run through the same plans and must each be caught.
//!
//! They live beside the simulator and the models rather than in `fixed-window-redis`, which
//! depends on neither.

mod caught;
mod clock;
mod limiter;
mod plans;
mod planted;
mod processes;
mod proxy;
mod run;
mod servers;
mod subject;
mod time_key;
mod verdict;

/// A test's outcome: any error fails it, with its message.
pub type TestResult = Result<(), Box<dyn std::error::Error>>;
