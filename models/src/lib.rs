//! Loom and shuttle models of the `fixed-window` limiter.
