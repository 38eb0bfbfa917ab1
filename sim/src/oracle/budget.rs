//! One key's window as the oracle models it: the spec's stored count, which the rules decide
//! on, and beside it a tally of permits per window kept without the spec's decisions, so that
//! a carried-over permit or a window over its limit is named as such.

use fixed_window_spec::{Count, Decision, NEVER, Next, Peeked, Rules, Waiting};

use super::Invariant;

/// What one rule found wrong, in the order found.
pub(super) type Found = Vec<(Invariant, String)>;

/// One key's window: for the plain limiter, its one window; for a keyed limiter, one of the
/// states the key may be in (see [`keys`](super::keys)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Budget {
    /// The stored window and its count, updated only by permits.
    count: Count,
    /// The window in effect by the tally: the latest window any permit's reading fell in
    /// (windows never move backwards, whatever the clock does), or where the key was added.
    effective: Option<u128>,
    /// Permits tallied in the window in effect.
    counted: u64,
}

impl Budget {
    /// A new limiter's window: window 0, nothing used, nothing tallied.
    pub(super) fn new() -> Budget {
        Budget {
            count: Count::new(),
            effective: None,
            counted: 0,
        }
    }

    /// A key a keyed limiter adds (for the first time, or anew after reclaiming it): nothing
    /// used, in the window of the `horizon` (the latest window the limiter swept for), where a
    /// reading from an earlier window counts too, so that a window a reclaimed count counted in
    /// is never counted again.
    pub(super) fn added(horizon: u128) -> Budget {
        Budget {
            count: Count::stored(horizon, 0),
            effective: Some(horizon),
            counted: 0,
        }
    }

    /// The stored window.
    pub(super) fn index(&self) -> u128 {
        self.count.index()
    }

    /// A permit of `n` at `at` with `remaining` left, for a call whose deadline is `deadline`.
    #[expect(
        clippy::inline_always,
        reason = "one call per attempt of its kind, from the oracle's loop over the trace: \
                  inlined there with the closures that hand it the rules, the judgement skips \
                  a call (callgrind: 830.6 M → 820.1 M instructions per 1,000 scenarios, the \
                  closures with it), which the compiler left to itself does not"
    )]
    #[inline(always)]
    pub(super) fn permitted(
        &mut self,
        rules: &Rules,
        at: u64,
        remaining: u32,
        deadline: u128,
        n: u32,
        found: &mut Found,
    ) {
        match rules.decide_n(&self.count, u128::from(at), deadline, n) {
            decision @ Decision::Permit {
                remaining: expected,
                ..
            } => {
                if remaining != expected {
                    found.push((
                        Invariant::Events,
                        format!("remaining {remaining} at {at}, expected {expected}"),
                    ));
                }
                self.count.apply_n(decision, n);
            }
            decision => found.push((
                Invariant::WindowLimit,
                format!("permitted at {at} although the window was full ({decision:?})"),
            )),
        }
        // Tallied independently of the model's decisions. Zero permits count nothing, and
        // move no window on.
        if n == 0 {
            return;
        }
        let window = rules.grid.index_of(u128::from(at));
        let limit = rules.limit;
        let window = self.effective.map_or(window, |current| current.max(window));
        if self.effective != Some(window) {
            self.effective = Some(window);
            self.counted = 0;
            if remaining != limit.saturating_sub(n) {
                found.push((
                    Invariant::CarryOver,
                    format!(
                        "first permit of window {window} (for {n}) left {remaining} permits, not {}",
                        limit.saturating_sub(n)
                    ),
                ));
            }
        }
        let before = self.counted;
        self.counted += u64::from(n);
        // Reported once per window: when the tally first passes the limit.
        if before <= u64::from(limit) && self.counted > u64::from(limit) {
            let counted = self.counted;
            found.push((
                Invariant::WindowLimit,
                format!("{counted} permits in window {window} (limit {limit})"),
            ));
        }
    }

    /// A peek at `at` that answered `(remaining, limit, resets_in)`: the spec's answer from
    /// this count (`Rules::peek`), which it leaves as it was. Nothing runs between a peek's
    /// start and end in the simulator (it is one step of one caller), so the window just
    /// before it and just after it are this one, and its answer must lie between the two.
    pub(super) fn peeked(
        &self,
        rules: &Rules,
        at: u64,
        (remaining, limit, resets_in): (u32, u32, u128),
        found: &mut Found,
    ) {
        let expected = rules.peek(&self.count, u128::from(at));
        let answer = Peeked {
            remaining,
            resets_in,
        };
        if !answer.lies_between(expected, expected)
            || resets_in != expected.resets_in
            || limit != rules.limit
        {
            found.push((
                Invariant::Events,
                format!(
                    "a peek at {at} answered {remaining} of {limit} left for {resets_in} ns, \
                     expected {} of {} for {} ns",
                    expected.remaining, rules.limit, expected.resets_in
                ),
            ));
        }
    }

    /// A drain at `at` that returned `retry_after`: the window in effect counts as full until
    /// it ends, and `retry_after` is the time from `at` to the end of the window holding `at`.
    #[expect(
        clippy::inline_always,
        reason = "as `permitted`: one call per attempt of its kind, inlined into the oracle's \
                  loop over the trace"
    )]
    #[inline(always)]
    pub(super) fn drained(&mut self, rules: &Rules, at: u64, retry_after: u128, found: &mut Found) {
        let now = u128::from(at);
        self.count.drain(&rules.grid, rules.limit, now);
        let window = rules.grid.index_of(now);
        let expected = rules.grid.end(window).map_or(NEVER, |end| end - now);
        if retry_after != expected {
            found.push((
                Invariant::Events,
                format!("a drain at {at} returned {retry_after}, expected {expected}"),
            ));
        }
        if retry_after != NEVER && !rules.grid.on_boundary(now + retry_after) {
            found.push((
                Invariant::Alignment,
                format!("a drain at {at} returned {retry_after}, not to a window boundary"),
            ));
        }
        // The tally's window in effect is full from now: a permit more in it is one too many.
        let window = self.effective.map_or(window, |current| current.max(window));
        if self.effective != Some(window) {
            self.effective = Some(window);
            self.counted = 0;
        }
        self.counted = self.counted.max(u64::from(rules.limit));
    }

    /// A rejection of `n` permits at `at` with `retry_after`, of a call `waiting` (whose clock may have stood
    /// still across its last sleep, the spec's stalled-clock rule).
    #[expect(
        clippy::inline_always,
        reason = "as `permitted`: one call per attempt of its kind, inlined into the oracle's \
                  loop over the trace"
    )]
    #[inline(always)]
    pub(super) fn rejected(
        &self,
        rules: &Rules,
        waiting: &mut Waiting,
        at: u64,
        retry_after: u128,
        n: u32,
        found: &mut Found,
    ) {
        let deadline = waiting.deadline();
        let decision = rules.decide_n(&self.count, u128::from(at), deadline, n);
        let expected = match waiting.next(decision, u128::from(at)) {
            Next::Permit { remaining } => {
                found.push((
                    Invariant::FalseRejection,
                    format!("rejected at {at} with {} permits free", remaining + 1),
                ));
                return;
            }
            Next::Sleep { until } => {
                found.push((
                    Invariant::FalseRejection,
                    format!(
                        "rejected at {at}; the next window opens at {until}, by the deadline {deadline}"
                    ),
                ));
                return;
            }
            Next::TooMany { limit } => {
                found.push((
                    Invariant::Events,
                    format!(
                        "rejected at {at} for {n} permits, which the limit {limit} never grants"
                    ),
                ));
                return;
            }
            Next::Reject { retry_after } => retry_after,
        };
        if retry_after != expected {
            found.push((
                Invariant::Events,
                format!("retry_after {retry_after} at {at}, expected {expected}"),
            ));
        }
        if retry_after != NEVER && !rules.grid.on_boundary(u128::from(at) + retry_after) {
            found.push((
                Invariant::Alignment,
                format!("retry_after {retry_after} at {at} does not end on a window boundary"),
            ));
        }
    }

    /// A sleep begun at `at` until `until` by a call for `n` permits `waiting`, which the sleep moves on.
    #[expect(
        clippy::inline_always,
        reason = "as `permitted`: one call per attempt of its kind, inlined into the oracle's \
                  loop over the trace"
    )]
    #[inline(always)]
    pub(super) fn sleep(
        &self,
        rules: &Rules,
        waiting: &mut Waiting,
        at: u64,
        until: u128,
        n: u32,
        found: &mut Found,
    ) {
        let deadline = waiting.deadline();
        let decision = rules.decide_n(&self.count, u128::from(at), deadline, n);
        let next = waiting.next(decision, u128::from(at));
        match (decision, next) {
            (_, Next::Sleep { until: expected }) if expected == until => {}
            (_, Next::Sleep { until: expected }) => found.push((
                Invariant::Events,
                format!("sleeps at {at} until {until}, expected until {expected}"),
            )),
            (Decision::Wait { .. }, _) => found.push((
                Invariant::Liveness,
                format!(
                    "sleeps again at {at} although its clock did not move across its last sleep"
                ),
            )),
            (Decision::Reject { .. }, _) => found.push((
                Invariant::Deadline,
                format!(
                    "sleeps at {at} although the next window opens after its deadline {deadline}"
                ),
            )),
            (Decision::TooMany { limit }, _) => found.push((
                Invariant::Liveness,
                format!("sleeps at {at} for {n} permits, which the limit {limit} never grants"),
            )),
            (Decision::Permit { remaining, .. }, _) => found.push((
                Invariant::FalseRejection,
                format!("sleeps at {at} with {} permits free", remaining + 1),
            )),
        }
    }
}
