//! The shared limiter (`fixed-window-redis`) against a real `redis-server` with injected
//! faults: the tests are in `tests/faults/` (`cargo test -p fixed-window-faults`), and
//! `docs/faults.md` describes them. The library is empty: the tests are the crate.
