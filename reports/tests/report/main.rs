//! The report rendered from shipped fixtures: complete inputs, missing inputs, unreadable
//! inputs, quick and unrecorded runs, summaries and traces of different sweeps, traces of
//! broken limiters that the page must flag, the keyed and shared limiters' sections and
//! targets; and the pieces the page is built from.

mod bench_ids;
mod broken;
mod cluster_and_server_time;
mod fixtures;
mod keyed;
mod missing;
mod mutants;
mod numbers;
mod quick;
mod recording;
mod render;
mod same_sweep;
mod shared;
mod spread;
mod sweep;
mod table;
