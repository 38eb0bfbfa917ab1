//! Amortised reclamation: sweeps a shard at a time, spread over the calls of each new window,
//! and the horizon below which no new word may start.
//!
//! A round of sweeping starts with the first call whose reading falls in a window after the
//! last round's; the round hands out [`SHARDS`] turns, one per call, each sweeping the next
//! shard in a cycle that continues where the previous round stopped. A turn removes every key
//! whose word's window is before the round's window (that window has begun, by some call's
//! reading, so theirs have ended). So once a window has seen [`SHARDS`] calls, the table holds
//! only keys that took a permit in it. Between rounds a call pays one relaxed load and a
//! comparison (is the reading past the end of the last round's window?).
//!
//! The horizon keeps removal from reopening a window: a turn raises it to the round's window
//! before it reclaims anything, and a key's new word starts no earlier than the horizon. A
//! reading older than a reclaimed word's window (taken before the key was last added, or on a
//! clock that stepped back) therefore counts against a window that word never counted in,
//! never against the reclaimed one again.

use crate::instant::Instant;
use crate::sync::atomic::{AtomicU64, AtomicU128, Ordering};
use crate::window::Grid;

use super::table::SHARDS;

/// One call's share of a round: sweep `shard` of keys whose window is before `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Turn {
    pub(crate) shard: usize,
    pub(crate) window: u64,
}

/// Where reclamation stands.
pub(crate) struct Sweep {
    /// Readings from this instant on (in nanoseconds) may find a turn to take: the end of the
    /// window of the last completed round. A hint, read relaxed on every call: too early a
    /// value only sends a call to [`Sweep::take`], which finds out.
    due: AtomicU64,
    /// The current round's window in the high 64 bits, the turns it has left in the low.
    progress: AtomicU128,
    /// The next shard to sweep, counting turns since the limiter was made.
    cursor: AtomicU64,
    /// The highest window any turn has reclaimed before.
    horizon: AtomicU64,
}

impl Sweep {
    /// No round yet: the first is due when window 0 ends.
    pub(crate) fn new(grid: &Grid) -> Sweep {
        Sweep {
            due: AtomicU64::new(end_nanos(grid, 0)),
            progress: AtomicU128::new(0),
            cursor: AtomicU64::new(0),
            horizon: AtomicU64::new(0),
        }
    }

    /// Whether a call reading `now` should look for a turn.
    #[inline]
    pub(crate) fn is_due(&self, now: Instant) -> bool {
        now.as_nanos() >= self.due.load(Ordering::Relaxed)
    }

    /// The turn of a call reading `now`, if its window's round has one left (starting that
    /// round if the reading is past the current one).
    pub(crate) fn take(&self, grid: &Grid, now: Instant) -> Option<Turn> {
        let index = grid.index_of(now);
        let mut current = self.progress.load(Ordering::Acquire);
        loop {
            let (round, left) = split(current);
            let (round, left) = if index > round {
                (index, SHARDS as u64)
            } else {
                (round, left)
            };
            if left == 0 {
                // Safe to store even if a later round has begun meanwhile: rounds only move
                // forward, so this end is no later than the start of any later round's window,
                // and every reading in that window still finds sweeping due.
                self.due.store(end_nanos(grid, round), Ordering::Relaxed);
                return None;
            }
            match self.progress.compare_exchange_weak(
                current,
                join(round, left - 1),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if left == 1 {
                        self.due.store(end_nanos(grid, round), Ordering::Relaxed);
                    }
                    let turn = self.cursor.fetch_add(1, Ordering::Relaxed) % SHARDS as u64;
                    // Below SHARDS, so the narrowing is exact.
                    #[allow(clippy::cast_possible_truncation)]
                    let shard = turn as usize;
                    return Some(Turn {
                        shard,
                        window: round,
                    });
                }
                Err(found) => current = found,
            }
        }
    }

    /// Raises the horizon to `window`; called before reclaiming anything before `window`.
    ///
    /// The reclaiming compare-and-set and the removal that follow publish it to every caller
    /// that finds the key's next word: that word was inserted after the removal, and the
    /// caller reads the horizon after finding it.
    pub(crate) fn raise_horizon(&self, window: u64) {
        self.horizon.fetch_max(window, Ordering::AcqRel);
    }

    /// The earliest window a new word may start in, read by the claim loop when it finds an
    /// empty word (see [`Slot`](super::slot::Slot)).
    pub(crate) fn horizon(&self) -> &AtomicU64 {
        &self.horizon
    }
}

/// Where window `index` ends, in nanoseconds; `u64::MAX` for a window that never ends.
fn end_nanos(grid: &Grid, index: u64) -> u64 {
    grid.end(index).map_or(u64::MAX, Instant::as_nanos)
}

fn split(progress: u128) -> (u64, u64) {
    // Both halves were written from a u64, so the narrowings are exact.
    #[allow(clippy::cast_possible_truncation)]
    let pair = ((progress >> 64) as u64, progress as u64);
    pair
}

fn join(round: u64, left: u64) -> u128 {
    (u128::from(round) << 64) | u128::from(left)
}

#[cfg(all(test, not(any(fixed_window_loom, fixed_window_shuttle))))]
mod tests {
    use core::time::Duration;

    use super::*;

    fn grid() -> Grid {
        Grid::new(Instant::ZERO, Duration::from_nanos(10))
    }

    #[test]
    fn nothing_is_due_within_the_first_window() {
        let sweep = Sweep::new(&grid());
        assert!(!sweep.is_due(Instant::from_nanos(9)));
        assert!(sweep.is_due(Instant::from_nanos(10)));
    }

    #[test]
    fn a_round_hands_out_every_shard_once_then_waits_for_the_next_window() {
        let grid = grid();
        let sweep = Sweep::new(&grid);
        let now = Instant::from_nanos(25);
        let mut shards: Vec<usize> = (0..SHARDS)
            .map(|_| sweep.take(&grid, now).map(|turn| turn.shard))
            .collect::<Option<_>>()
            .expect("a turn per shard");
        shards.sort_unstable();
        assert_eq!(shards, (0..SHARDS).collect::<Vec<_>>());
        assert_eq!(sweep.take(&grid, now), None);
        assert!(!sweep.is_due(Instant::from_nanos(29)));
        assert!(sweep.is_due(Instant::from_nanos(30)));
        assert_eq!(
            sweep
                .take(&grid, Instant::from_nanos(30))
                .map(|turn| turn.window),
            Some(3)
        );
    }

    #[test]
    fn a_new_round_continues_the_cycle_where_the_last_one_stopped() {
        let grid = grid();
        let sweep = Sweep::new(&grid);
        let first = sweep
            .take(&grid, Instant::from_nanos(10))
            .map(|turn| turn.shard);
        let second = sweep
            .take(&grid, Instant::from_nanos(20))
            .map(|turn| turn.shard);
        assert_eq!(first, Some(0));
        assert_eq!(second, Some(1 % SHARDS));
    }

    #[test]
    fn the_horizon_only_rises() {
        let sweep = Sweep::new(&grid());
        sweep.raise_horizon(5);
        sweep.raise_horizon(3);
        assert_eq!(sweep.horizon().load(Ordering::Relaxed), 5);
    }
}
