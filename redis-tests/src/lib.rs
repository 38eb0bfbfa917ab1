//! The shared limiter (`fixed-window-redis`) against real `redis-server` processes: the tests are
//! in `tests/shared/` (one node, `cargo test -p fixed-window-redis-tests --test shared`) and
//! `tests/cluster/` (a 6-node Redis Cluster, `--test cluster`). The library is empty: the tests
//! are the crate.
