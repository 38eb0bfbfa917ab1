//! Criterion benchmarks of the `fixed-window` limiter and its peers.
