//! The records of the limiter's attempts on a key's window: a permit, a rejection, a sleep, a
//! drain. They alone are judged against the key's window under the rules in force, which is
//! most of the oracle's work on a trace; the rest of the oracle keeps the books of calls
//! around them.

use super::keys::KeyState;
use super::reclamation::Reclamation;
use super::{Caller, Checker, Invariant, budget};
use fixed_window_spec::Rules;

/// What judging an attempt reads and writes, borrowed apart from the callers' states: a sleep
/// then moves its caller's waiting on where it is kept. A copy taken out and written back
/// whole was read back right after the stores that changed it, a load that waits for them
/// (perf: a tenth of the oracle's time on that one load).
struct Judge<'a> {
    rules: &'a Rules,
    /// Each key's own limit, by key (see [`Checker`]).
    own_limits: &'a [Option<u32>],
    keys: &'a mut [KeyState],
    reclamation: &'a mut Option<Reclamation>,
    found: &'a mut budget::Found,
}

impl Judge<'_> {
    /// Judges an attempt on `key` by `rule` (see
    /// [`KeyState::judge`](super::keys::KeyState::judge)) into `found`; the attempt was
    /// `permitted` or not. The rule is handed the rules in force by reference,
    /// which a copy taken for it would cost at every attempt.
    fn judge<C: Copy>(
        self,
        key: u64,
        call: &mut C,
        permitted: bool,
        mut rule: impl FnMut(&Rules, &mut budget::Budget, &mut C, &mut budget::Found),
    ) {
        let Some(state) = usize::try_from(key)
            .ok()
            .and_then(|key| self.keys.get_mut(key))
        else {
            // Reported when the call started.
            return;
        };
        if let Some(reclamation) = self.reclamation {
            state.meet(reclamation);
        }
        // A key with a limit of its own is judged by the rules with that limit.
        let own = self
            .own_limits
            .get(state_index(key))
            .copied()
            .flatten()
            .and_then(|limit| self.rules.with_limit(limit));
        let rules = own.as_ref().unwrap_or(self.rules);
        // The closures here and in each attempt's handler are inlined into the oracle's loop
        // with the rule they call: left to itself, the compiler made each judgement a call
        // through them.
        state.judge(
            call,
            #[inline(always)]
            |budget, call, found| rule(rules, budget, call, found),
            self.found,
        );
        if let Some(reclamation) = self.reclamation {
            state.after(reclamation, permitted);
        }
    }
}

/// The index of `key`'s entries, past every entry if it has none.
fn state_index(key: u64) -> usize {
    usize::try_from(key).unwrap_or(usize::MAX)
}

impl Checker {
    /// The parts a judgement uses, and apart from them the callers' states.
    fn judging(&mut self) -> (Judge<'_>, &mut [Caller]) {
        let judge = Judge {
            rules: &self.rules,
            own_limits: &self.own_limits,
            keys: &mut self.keys,
            reclamation: &mut self.reclamation,
            found: &mut self.found,
        };
        (judge, &mut self.callers)
    }

    /// [`Judge::judge`] on a call's state that is not kept with the caller.
    fn judge<C: Copy>(
        &mut self,
        key: u64,
        call: &mut C,
        permitted: bool,
        rule: impl FnMut(&Rules, &mut budget::Budget, &mut C, &mut budget::Found),
    ) {
        self.judging().0.judge(key, call, permitted, rule);
    }

    pub(super) fn permitted(&mut self, caller: u32, at: u64, remaining: u32) {
        self.attempt(at);
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.permits += 1;
        state.permit_remaining = Some(remaining);
        let (deadline, permits, key, weight) = (
            state.waiting.deadline(),
            state.permits,
            state.key,
            state.weight,
        );
        self.checks.count(&[
            Invariant::Events,
            Invariant::WindowLimit,
            Invariant::CarryOver,
        ]);
        if permits > 1 {
            self.report(Invariant::Events, caller, || {
                "a second permit for one call".into()
            });
        }
        // Zero permits write nothing: to a keyed limiter's memory the key took no permit.
        self.judge(
            key,
            &mut (),
            weight > 0,
            #[inline(always)]
            |rules, budget, (), found| {
                budget.permitted(rules, at, remaining, deadline, weight, found);
            },
        );
        self.report_found(caller);
    }

    pub(super) fn rejected(&mut self, caller: u32, at: u64, retry_after: u128) {
        self.attempt(at);
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.rejections += 1;
        state.rejection = Some(retry_after);
        // A copy: a rejection ends the call, whose waiting it does not move on.
        let mut waiting = state.waiting;
        let (rejections, key, weight) = (state.rejections, state.key, state.weight);
        self.checks.count(&[
            Invariant::Events,
            Invariant::FalseRejection,
            Invariant::Alignment,
        ]);
        if rejections > 1 {
            self.report(Invariant::Events, caller, || {
                "a second rejection for one call".into()
            });
        }
        self.judge(
            key,
            &mut waiting,
            false,
            #[inline(always)]
            |rules, budget, waiting, found| {
                budget.rejected(rules, waiting, at, retry_after, weight, found);
            },
        );
        self.report_found(caller);
    }

    pub(super) fn sleep(&mut self, caller: u32, at: u64, until: u128) {
        self.attempt(at);
        let Some(state) = self.caller(caller) else {
            return;
        };
        let (deadline, key, weight) = (state.waiting.deadline(), state.key, state.weight);
        self.checks.count(&[
            Invariant::Deadline,
            Invariant::Alignment,
            Invariant::Events,
            Invariant::Liveness,
            Invariant::FalseRejection,
        ]);
        if until > deadline {
            self.report(Invariant::Deadline, caller, || {
                format!("sleeps at {at} until {until}, past its deadline {deadline}")
            });
        }
        if !self.rules.grid.on_boundary(until) {
            self.report(Invariant::Alignment, caller, || {
                format!("sleeps at {at} until {until}, not a window boundary")
            });
        }
        let (judge, callers) = self.judging();
        if let Some(state) = callers.get_mut(caller as usize) {
            judge.judge(
                key,
                &mut state.waiting,
                false,
                #[inline(always)]
                |rules, budget, waiting, found| {
                    budget.sleep(rules, waiting, at, until, weight, found);
                },
            );
        }
        self.report_found(caller);
    }

    /// A peek at `at` that answered `(remaining, limit, resets_in)`: the window the model holds
    /// for the caller's key must answer the same. It is no attempt: it takes no turn of
    /// sweeping and counts nothing, so the model's count is left as it was, and every later
    /// decision is judged as if the peek had not been made (a peek that took a permit shows
    /// there).
    pub(super) fn peeked(&mut self, caller: u32, at: u64, answer: (u32, u32, u128)) {
        let Some(state) = self.caller(caller) else {
            return;
        };
        let key = state.key;
        self.checks.count(&[Invariant::Events]);
        let mut answer = answer;
        self.judge(
            key,
            &mut answer,
            false,
            #[inline(always)]
            |rules, budget, answer, found| {
                budget.peeked(rules, at, *answer, found);
            },
        );
        self.report_found(caller);
    }

    /// A drain at `at` that returned `retry_after`: the window in effect is full from now. To
    /// a keyed limiter it is an attempt (with its turn at sweeping) that writes the key's count,
    /// as a permit does.
    pub(super) fn drained(&mut self, caller: u32, at: u64, retry_after: u128) {
        self.attempt(at);
        let Some(state) = self.caller(caller) else {
            return;
        };
        state.drains += 1;
        state.drained = Some(retry_after);
        let key = state.key;
        self.checks.count(&[
            Invariant::Events,
            Invariant::Alignment,
            Invariant::WindowLimit,
        ]);
        self.judge(
            key,
            &mut (),
            true,
            #[inline(always)]
            |rules, budget, (), found| {
                budget.drained(rules, at, retry_after, found);
            },
        );
        self.report_found(caller);
    }
}
