//! The one executable model of the fixed-window rules of `docs/rules.md`, exact in `u128`
//! nanoseconds.
//!
//! Every checker of the workspace judges a limiter by this crate: the simulator's oracle, the
//! models' sequential specification and linearizability checker, core's property tests and the
//! planted limiters. It depends on nothing of ours, and core does not use it:
//! core's own window arithmetic (on `u64`, with a fast path) is what is being checked, so a bug
//! in it cannot hide by being repeated here. Here the arithmetic is the plainest there is,
//! widened to `u128` so that no step can overflow.
//!
//! Time is a number of nanoseconds on the limiter's clock, as `u128`; instants run from `0` to
//! [`END_OF_TIME`] (the limiter's `Instant::MAX`), and [`NEVER`] is the `retry_after` of a
//! window that has no successor (`Duration::MAX`).
//!
//! The functions an attempt's decision goes through ([`Grid`], [`Count`], [`Rules`],
//! [`Waiting`], [`deadline`]) are `#[inline]`: the simulator's oracle calls them for every
//! record of a trace, and inlined into it they cost a sweep 2.4 % fewer instructions (callgrind,
//! the default sweep's first 1,000 scenarios drawn, run and checked: 3,120 instructions per
//! simulated call before, 3,046 after).
//!
//! # The rules, one type each
//!
//! - [`Grid`]: which window holds an instant, where windows start and end, and where the
//!   timeline ends (`docs/rules.md`: Windows, Extreme values).
//! - [`Count`] and [`Decision`]: the stored window and its used permits, and what one attempt
//!   decides for it: a permit with `remaining`, a wait until the next window, or a rejection
//!   with `retry_after` (`docs/rules.md`: Windows, Waiting, Events).
//! - [`Peeked`]: what a peek answers ([`Count::peek`], [`Rules::peek`]): the permits left and
//!   the time to the window's end, changing no count (`docs/rules.md`: Peeking).
//! - [`Rules`]: a limiter's configuration as the model sees it: its grid, limit and `max_wait`.
//! - [`Waiting`]: a waiting call's deadline, fixed at its start, and what it does after each
//!   decision, the stalled-clock rule included (`docs/rules.md`: Waiting, Extreme values,
//!   Clocks that stand still or step back).
//! - [`Keyed`]: one [`Count`] per key on one shared grid, a key's own limit in place of the
//!   limiter's where it has one, and the bound on the keys a keyed limiter may keep alive.
//! - [`Lease`] and [`Leasing`]: a leased share of a window, how large it is, that it counts
//!   on the server whole before any of it is spent, the latest local instant it is spent at
//!   ([`spend_deadline`], by the rate allowance of [`latest_local_end`]), and the permits a
//!   window may refuse while it still has room; [`hand_back`]: what handing back a share's
//!   unspent rest takes off the count (`docs/rules.md`: Leased shares).
//! - [`Origin`]: the shared origin of a limiter kept by many processes: set once, adopted by
//!   the rest, a different configuration refused; and the [`Ledger`] of permits a store lost.
//! - [`local_share`]: the permits a process grants a key by itself while the server cannot
//!   decide, under `FailPolicy::Local { share }`: `share`, scaled to a key's own limit.
//! - [`KeyWindow`]: in a shared limiter, the limit a key's window is counted by (changed
//!   live by [`KeyWindow::change`]), settled by its first count; an attempt by another limit
//!   is a [`KeyConflict`], never a permit; [`KeyProposal`]: what an attempt proposes, where
//!   the limiter's limit changes.
//!
//! # Examples
//!
//! Two permits per 10 ns window, created at 100: the third call in the first window waits for
//! the second window if its deadline allows it, and is rejected otherwise.
//!
//! ```
//! use fixed_window_spec::{Count, Decision, Grid};
//!
//! let grid = Grid::checked(100, 10).expect("a positive period");
//! let mut count = Count::new();
//! for remaining in [1, 0] {
//!     let decision = count.decide(&grid, 2, 103, 103);
//!     assert_eq!(decision, Decision::Permit { index: 0, remaining });
//!     count.apply(decision);
//! }
//! assert_eq!(count.decide(&grid, 2, 104, 110), Decision::Wait { until: 110 });
//! assert_eq!(count.decide(&grid, 2, 104, 109), Decision::Reject { retry_after: 6 });
//! ```

mod allowance;
mod count;
mod grid;
mod key_window;
mod keyed;
mod lease;
mod local_share;
mod origin;
mod peek;
mod rules;
mod time;
mod waiting;

pub use crate::allowance::{DRIFT_ALLOWANCE, latest_local_end};
pub use crate::count::{Count, Decision};
pub use crate::grid::Grid;
pub use crate::key_window::{KeyConflict, KeyProposal, KeyWindow};
pub use crate::keyed::Keyed;
pub use crate::lease::{Lease, Leasing, hand_back, spend_deadline};
pub use crate::local_share::local_share;
pub use crate::origin::{Conflict, Ledger, Origin};
pub use crate::peek::Peeked;
pub use crate::rules::Rules;
pub use crate::time::{END_OF_TIME, NEVER, deadline};
pub use crate::waiting::{Next, Waiting};
