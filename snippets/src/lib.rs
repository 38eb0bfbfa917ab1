//! Every Rust code block of the root README and of `fixed-window-redis`'s README, run as it is
//! written there: the build script makes each block a module of the `readmes` test
//! (`cargo test -p fixed-window-snippets`), which runs its `main` against throwaway Redis
//! servers and, for a block that serves HTTP, sends it real requests over loopback TCP.
//! `fixed-window`'s README runs as that crate's doc-tests. The library is empty: the tests are
//! the crate.
