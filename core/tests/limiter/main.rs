//! Integration tests of the limiter on the manual clock.
