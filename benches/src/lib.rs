//! Criterion benchmarks of the `fixed-window` limiter beside its peers, and what they share.
//!
//! The benchmarks live in `benches/limiters.rs` (`cargo xtask bench`); this library holds the
//! pieces they and the allocation test share:
//!
//! - [`Contender`]: one `try_acquire` over ours and the peers, so every benchmark is written
//!   once for all of them.
//! - [`MutexWindow`]: the straightforward peer, a fixed window behind a `Mutex`.
//! - [`StdClock`]: a [`Clock`](fixed_window::Clock) on `std::time::Instant`, to see what the
//!   permit path costs on the operating system's clock rather than `SystemClock`'s TSC.
//! - [`configs`]: limiters set up so that every call is permitted ("open") or every call is
//!   rejected ("full").
//! - [`hammer`]: several threads calling one limiter at once, timed.
//! - [`on_cpu`]: the CPU time a single-threaded benchmark's thread used.
//! - [`hammer_keys`], [`key_at`], [`KeyWalk`]: several threads calling over a population of keys.
//! - [`map_candidates`]: the concurrent maps considered for the keyed limiter's table.
//! - [`KeyedContender`], [`MutexKeyedWindow`], [`keyed_configs`]: the keyed benchmarks'
//!   counterparts of the above, over populations of keys.

pub mod configs;
mod contender;
mod hammer;
mod key_hammer;
pub mod keyed_configs;
mod keyed_contender;
pub mod map_candidates;
mod mutex_keyed_window;
mod mutex_window;
mod std_clock;
mod thread_time;

pub use crate::contender::Contender;
pub use crate::hammer::hammer;
pub use crate::key_hammer::{KeyWalk, hammer_keys, key_at};
pub use crate::keyed_contender::KeyedContender;
pub use crate::mutex_keyed_window::MutexKeyedWindow;
pub use crate::mutex_window::MutexWindow;
pub use crate::std_clock::StdClock;
pub use crate::thread_time::on_cpu;
