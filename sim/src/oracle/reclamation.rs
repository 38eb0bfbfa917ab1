//! The keyed limiter's reclamation as its documentation describes it, and the memory bound
//! that follows.
//!
//! What `KeyedRateLimiter` documents (its type's `# Memory` section, and its sweeping's): keys
//! live in [`SHARDS`] shards. A round of sweeping starts with the first call whose reading falls
//! in a window after the last round's; the round hands out [`SHARDS`] turns, one per call, each
//! sweeping the next shard of a cycle that continues where the previous round stopped, and
//! removing the keys whose stored window is before the round's. Between rounds a call only
//! asks whether its reading is past the end of the last completed round's window (so a call
//! whose reading is before that, on a clock that stepped back, takes no turn). A turn first
//! raises the horizon to its round's window; a key added (anew) starts no earlier than the
//! horizon. A key is added only by a call that then takes a permit from it.
//!
//! The oracle does not know which shard a key is in (that is the table's hash), so it knows
//! of each key only when it *may* have been reclaimed and when it *must* have been:
//!
//! - **may**: some turn since the key's last permit was for a window after the key's stored
//!   one;
//! - **must**: [`SHARDS`] such turns: consecutive turns sweep consecutive shards of the cycle,
//!   so [`SHARDS`] of them sweep every shard, the key's included, and the turns' windows never
//!   decrease.
//!
//! **The bound.** After any call, the keys the limiter holds are at most the keys that took a
//! permit and have not had, since their last permit, [`SHARDS`] turns for windows after their
//! stored one:
//!
//! ```text
//! held ≤ #{ k : k took a permit, and fewer than 64 turns for a window after k's stored
//!              window have been taken since k's last permit }
//! ```
//!
//! It is exact where the documentation is: once a window has seen 64 calls, the bound counts
//! only keys that took a permit in that window (or, on a clock that stepped back, after the
//! sweep of their shard); before that, it also counts the keys of earlier windows that the
//! shards not yet swept may still hold. A limiter that reclaims nothing (or sweeps fewer shards
//! than it says) goes past it as soon as a window has seen 64 calls after keys of an earlier
//! window. Keys whose state is uncertain (see [`keys`](super::keys)) count with their latest
//! possible window.

use std::collections::BTreeMap;

use fixed_window_spec::Grid;

/// Shards of the keyed limiter's table, and so turns in a round of sweeping.
pub(super) const SHARDS: u64 = 64;

/// Where a key's count in the bound is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// No turn for a window after `M` has been taken since its last permit.
    Pending(u128),
    /// Held until `turns` reaches this, when it must have been reclaimed.
    Expiring(u64),
    /// Reclaimed for sure.
    Gone,
}

/// The keyed limiter's sweeping, followed call by call, and the keys it may still hold.
#[derive(Debug)]
pub(super) struct Reclamation {
    grid: Grid,
    /// The current round's window (0 before the first round, which hands out no turn).
    round: u128,
    /// Turns the current round has left.
    left: u64,
    /// Readings from here on look for a turn: the end of the last completed round's window;
    /// `None` once that window is the timeline's last.
    due: Option<u128>,
    /// Turns taken since the limiter was made; turns are numbered from 1.
    turns: u64,
    /// Each round that took a turn: the number of its first turn, and its window. Windows
    /// increase from round to round.
    rounds: Vec<(u64, u128)>,
    /// The latest window a turn has swept for.
    horizon: u128,
    /// Keys awaiting a turn for a window after theirs, counted by their (latest possible)
    /// stored window.
    pending: BTreeMap<u128, u64>,
    /// Keys swept for by some turn, counted by the turn count at which they must be gone.
    expiring: BTreeMap<u64, u64>,
    /// The keys in `pending` and `expiring`: the bound.
    held: u64,
}

impl Reclamation {
    /// A new keyed limiter's: no key, no turn; the first round is due when window 0 ends.
    pub(super) fn new(grid: Grid) -> Reclamation {
        Reclamation {
            grid,
            round: 0,
            left: 0,
            due: grid.end(0),
            turns: 0,
            rounds: Vec::new(),
            horizon: 0,
            pending: BTreeMap::new(),
            expiring: BTreeMap::new(),
            held: 0,
        }
    }

    /// A call reading `at` takes its turn, if it has one.
    pub(super) fn attempt(&mut self, at: u128) {
        if self.due.is_none_or(|due| at < due) {
            return;
        }
        let index = self.grid.index_of(at);
        if index > self.round {
            self.round = index;
            self.left = SHARDS;
        }
        if self.left == 0 {
            self.due = self.grid.end(self.round);
            return;
        }
        self.left -= 1;
        if self.left == 0 {
            self.due = self.grid.end(self.round);
        }
        self.turns += 1;
        let turn = self.turns;
        if self
            .rounds
            .last()
            .is_none_or(|&(_, window)| window < self.round)
        {
            self.rounds.push((turn, self.round));
        }
        self.horizon = self.horizon.max(self.round);
        // The keys whose window is before this one's have their first turn now.
        if self
            .pending
            .first_key_value()
            .is_some_and(|(&index, _)| index < self.round)
        {
            let later = self.pending.split_off(&self.round);
            let swept: u64 = self.pending.values().sum();
            self.pending = later;
            *self.expiring.entry(turn + SHARDS - 1).or_insert(0) += swept;
        }
        while let Some(entry) = self.expiring.first_entry() {
            if *entry.key() > turn {
                break;
            }
            self.held -= entry.remove();
        }
    }

    /// The latest window a turn has swept for, where a key added now starts.
    pub(super) fn horizon(&self) -> u128 {
        self.horizon
    }

    /// Turns taken so far.
    pub(super) fn turns(&self) -> u64 {
        self.turns
    }

    /// The first turn after turn `written` that swept for a window after `index`, if one has
    /// been taken.
    fn first_after(&self, written: u64, index: u128) -> Option<u64> {
        let later = self.rounds.partition_point(|&(_, window)| window <= index);
        let &(start, _) = self.rounds.get(later)?;
        let first = start.max(written + 1);
        (first <= self.turns).then_some(first)
    }

    /// Whether a key whose last permit came after turn `written`, with stored window `index`,
    /// may have been reclaimed since.
    pub(super) fn may_have_reclaimed(&self, written: u64, index: u128) -> bool {
        self.first_after(written, index).is_some()
    }

    /// Whether such a key must have been reclaimed since.
    pub(super) fn must_have_reclaimed(&self, written: u64, index: u128) -> bool {
        self.place(written, index) == Place::Gone
    }

    fn place(&self, written: u64, index: u128) -> Place {
        match self.first_after(written, index) {
            None => Place::Pending(index),
            Some(first) if self.turns >= first + SHARDS - 1 => Place::Gone,
            Some(first) => Place::Expiring(first + SHARDS - 1),
        }
    }

    /// Moves a key's count in the bound from where `before` (its last permit's turn and its
    /// latest possible window, as last accounted) put it to where `after` puts it.
    pub(super) fn account(&mut self, before: Option<(u64, u128)>, after: Option<(u64, u128)>) {
        if before == after {
            return;
        }
        if let Some((written, index)) = before {
            match self.place(written, index) {
                Place::Pending(index) => decrement(&mut self.pending, &index, &mut self.held),
                Place::Expiring(turn) => decrement(&mut self.expiring, &turn, &mut self.held),
                Place::Gone => {}
            }
        }
        if let Some((written, index)) = after {
            match self.place(written, index) {
                Place::Pending(index) => *self.pending.entry(index).or_insert(0) += 1,
                Place::Expiring(turn) => *self.expiring.entry(turn).or_insert(0) += 1,
                Place::Gone => return,
            }
            self.held += 1;
        }
    }

    /// The most keys the limiter may hold now.
    pub(super) fn bound(&self) -> u64 {
        self.held
    }
}

fn decrement<K: Ord>(counts: &mut BTreeMap<K, u64>, key: &K, held: &mut u64) {
    if let Some(count) = counts.get_mut(key) {
        *count -= 1;
        *held -= 1;
        if *count == 0 {
            counts.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Reclamation, SHARDS};
    use fixed_window_spec::Grid;

    fn model() -> Reclamation {
        Reclamation::new(Grid::checked(0, 10).expect("a positive period"))
    }

    #[test]
    fn the_first_window_hands_out_no_turn_and_each_later_one_64() {
        let mut model = model();
        for _ in 0..100 {
            model.attempt(5);
        }
        assert_eq!(model.turns(), 0);
        for _ in 0..100 {
            model.attempt(15);
        }
        assert_eq!((model.turns(), model.horizon()), (SHARDS, 1));
        model.attempt(25);
        assert_eq!((model.turns(), model.horizon()), (SHARDS + 1, 2));
    }

    #[test]
    fn a_reading_before_the_last_completed_round_takes_no_turn_but_one_after_it_does() {
        let mut model = model();
        for _ in 0..SHARDS {
            model.attempt(15);
        }
        // Round 1 is complete; round 3 starts and has turns left.
        model.attempt(35);
        assert_eq!(model.turns(), SHARDS + 1);
        model.attempt(15);
        assert_eq!(model.turns(), SHARDS + 1, "before the end of window 1");
        model.attempt(25);
        assert_eq!(model.turns(), SHARDS + 2, "a turn of round 3");
    }

    #[test]
    fn a_key_is_held_until_64_turns_after_its_window_then_gone() {
        let mut model = model();
        model.account(None, Some((model.turns(), 0)));
        assert_eq!(model.bound(), 1);
        for turn in 1..SHARDS {
            model.attempt(15);
            assert!(model.may_have_reclaimed(0, 0));
            assert_eq!(model.bound(), 1, "turn {turn}");
        }
        model.attempt(15);
        assert!(model.must_have_reclaimed(0, 0));
        assert_eq!(model.bound(), 0);
    }

    #[test]
    fn turns_for_the_keys_own_window_never_reclaim_it() {
        let mut model = model();
        model.attempt(15);
        model.account(None, Some((model.turns(), 1)));
        for _ in 0..2 * SHARDS {
            model.attempt(15);
        }
        assert!(!model.may_have_reclaimed(1, 1));
        assert_eq!(model.bound(), 1);
    }

    #[test]
    fn a_key_permitted_again_moves_in_the_bound() {
        let mut model = model();
        model.account(None, Some((0, 0)));
        for _ in 0..10 {
            model.attempt(15);
        }
        model.account(Some((0, 0)), Some((model.turns(), 1)));
        for _ in 0..SHARDS {
            model.attempt(25);
        }
        assert_eq!(model.bound(), 0);
        model.account(Some((10, 1)), None);
        assert_eq!(model.bound(), 0);
    }
}
