//! What the oracle knows of each key's window: for the plain limiter, its one window; for a
//! keyed limiter, the states the key may be in.
//!
//! A keyed limiter may reclaim a key once the key's window has ended, and the trace does not
//! say when it did (that depends on the shard the key hashes to). Reclaimed or not, an ended
//! key behaves the same on a clock that never steps back: its next permit starts a new window
//! either way. On a clock that steps back it does not: a key kept counts a reading from an
//! earlier window against its stored window, while a key added anew starts in the horizon's
//! window (see [`Budget::added`]). So for each key the oracle keeps every state the key may be
//! in: the state it had if it was kept, and, if a sweep may have reclaimed it since its last
//! permit, the state of a key added anew. The reclamation model
//! ([`reclamation`](super::reclamation)) says which are possible; the call's outcome rules out
//! those that disagree with it (a key added anew is always permitted, for instance). A rule is
//! broken only when every possible state breaks it.

use super::budget::{Budget, Found};
use super::reclamation::Reclamation;

/// The states one key may be in.
#[derive(Debug, Clone)]
pub(super) struct KeyState {
    /// The first possible state: the key kept, where it may have been.
    first: Budget,
    /// Other possible states, none equal to another or to `first`.
    others: Vec<Budget>,
    /// Where the reclamation model counts it in the memory bound (keyed limiters only): the
    /// turns taken before its last permit, and its latest possible window; `None` before its
    /// first permit.
    accounted: Option<(u64, u128)>,
}

impl KeyState {
    /// A key of the plain limiter: its one window, never reclaimed.
    pub(super) fn plain() -> KeyState {
        KeyState {
            first: Budget::new(),
            others: Vec::new(),
            accounted: None,
        }
    }

    /// A key of a keyed limiter before its first call; it is added by that call.
    pub(super) fn unseen() -> KeyState {
        KeyState {
            first: Budget::added(0),
            others: Vec::new(),
            accounted: None,
        }
    }

    /// Before a keyed limiter's attempt on the key: drops the states in which the key must
    /// have been reclaimed, and adds that of the key added anew if it may have been.
    pub(super) fn meet(&mut self, model: &Reclamation) {
        let added = Budget::added(model.horizon());
        let Some((written, _)) = self.accounted else {
            self.first = added;
            return;
        };
        let may = core::iter::once(&self.first)
            .chain(&self.others)
            .any(|state| model.may_have_reclaimed(written, state.index()));
        self.others
            .retain(|state| !model.must_have_reclaimed(written, state.index()));
        if model.must_have_reclaimed(written, self.first.index()) {
            self.first = if self.others.is_empty() {
                added
            } else {
                self.others.remove(0)
            };
        }
        if may && self.first != added && !self.others.contains(&added) {
            self.others.push(added);
        }
    }

    /// Judges one attempt on the key by `rule`, run on each possible state with its own copy
    /// of the call's `state`: the states it finds nothing wrong with are kept (and the call's
    /// state as the first of them left it); if there are none, what it found in the first
    /// state goes to `found` (empty before), and only that state is kept, as the rule left it.
    #[inline]
    pub(super) fn judge<C: Copy>(
        &mut self,
        call: &mut C,
        mut rule: impl FnMut(&mut Budget, &mut C, &mut Found),
        found: &mut Found,
    ) {
        if self.others.is_empty() {
            rule(&mut self.first, call, found);
        } else {
            self.judge_each(call, rule, found);
        }
    }

    /// [`judge`](KeyState::judge) when the key may be in more than one state (a keyed
    /// limiter's key that may have been reclaimed): out of line, so that the rule's one call
    /// for a key in one state is inlined where it is judged.
    #[inline(never)]
    fn judge_each<C: Copy>(
        &mut self,
        call: &mut C,
        mut rule: impl FnMut(&mut Budget, &mut C, &mut Found),
        found: &mut Found,
    ) {
        let mut first = None;
        let mut kept: Vec<(Budget, C)> = Vec::new();
        for state in core::iter::once(self.first).chain(self.others.drain(..)) {
            let (mut budget, mut copy) = (state, *call);
            let mut wrong = Found::new();
            rule(&mut budget, &mut copy, &mut wrong);
            if wrong.is_empty() {
                if !kept.iter().any(|(other, _)| *other == budget) {
                    kept.push((budget, copy));
                }
            } else if first.is_none() {
                first = Some((budget, copy, wrong));
            }
        }
        let mut kept = kept.into_iter();
        if let Some((budget, copy)) = kept.next() {
            self.first = budget;
            *call = copy;
            self.others.extend(kept.map(|(budget, _)| budget));
        } else if let Some((budget, copy, wrong)) = first {
            self.first = budget;
            *call = copy;
            found.extend(wrong);
        }
    }

    /// After a keyed limiter's attempt on the key, `permitted` or not: records the permit's
    /// turn and moves the key in the memory bound.
    pub(super) fn after(&mut self, model: &mut Reclamation, permitted: bool) {
        let written = if permitted {
            Some(model.turns())
        } else {
            self.accounted.map(|(written, _)| written)
        };
        let latest = core::iter::once(&self.first)
            .chain(&self.others)
            .map(Budget::index)
            .max()
            .unwrap_or(0);
        let accounted = written.map(|written| (written, latest));
        model.account(self.accounted, accounted);
        self.accounted = accounted;
    }
}
