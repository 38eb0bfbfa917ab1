//! Integration tests of the limiter, almost all on the manual clock so that every instant is
//! exact and no test really sleeps.

mod ages;
mod asynchronous;
mod backwards;
mod boundaries;
mod concurrency;
mod config;
mod extremes;
#[cfg(feature = "http")]
mod fields;
mod formatting;
#[cfg(feature = "axum")]
mod http;
mod integrations;
mod interrupts;
mod keyed;
mod keyed_properties;
mod limit_change;
mod listeners;
mod operations;
mod peek;
mod per_key;
mod properties;
mod shared_clocks;
mod support;
mod waiting;
