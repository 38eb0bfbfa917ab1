//! The deterministic discrete-event simulator of the `fixed-window` limiter.
