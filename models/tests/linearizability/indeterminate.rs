//! Indeterminate operations, as Knossos treats them: an attempt whose reply was lost may take
//! effect at any point after its invocation (even after its caller gave up), or never. Each
//! history here says which of those explains it, if any; the shared limiter's specification
//! (one key, limit as given, windows of 100 µs from 0) is the judge.

use fixed_window_models::linearizability::{Entry, Specification, linearize};
use fixed_window_models::shared::{
    self, Attempt, KeyOperation, KeyState, KeyWindow, Reply, SharedHistory,
};
use proptest::prelude::*;

const PERIOD: u64 = 100;

fn permit(invoked: u64, remaining: u32) -> Attempt {
    Attempt::new(
        "k",
        invoked,
        Some(invoked + 10),
        Reply::Permitted { remaining },
    )
}

/// A rejection decided by the server at `at`, in the window [0, 100) unless said otherwise.
fn rejected(at: u64) -> Attempt {
    let end = (at / PERIOD + 1) * PERIOD;
    Attempt::new(
        "k",
        at - 5,
        Some(at + 5),
        Reply::Rejected {
            retry_after: Some(end - at),
        },
    )
}

fn lost(invoked: u64) -> Attempt {
    Attempt::new("k", invoked, Some(invoked + 10), Reply::Lost)
}

fn history(limit: u32, attempts: Vec<Attempt>) -> SharedHistory {
    let mut history = SharedHistory::new(0, PERIOD, limit);
    history.attempts = attempts;
    history
}

#[test]
fn linearizable_only_if_the_lost_attempt_counted() {
    // Limit 2: a permit leaving none, with no other permit before it, needs the lost attempt.
    let with_lost = history(2, vec![lost(10), permit(30, 0)]);
    let checked = shared::check(&with_lost).unwrap_or_else(|v| panic!("{v}"));
    assert_eq!((checked.indeterminate, checked.took_effect), (1, 1));
    // Without it, the same permit is not explained.
    assert!(shared::check(&history(2, vec![permit(30, 0)])).is_err());
}

#[test]
fn linearizable_only_if_the_lost_attempt_never_counted() {
    // Limit 1: the window's one permit went to a caller who heard of it, and the next window's
    // too; counting the lost attempt before either would have made it a rejection, and after
    // them the windows are full.
    let never = history(
        1,
        vec![
            lost(10),
            permit(30, 0),
            rejected(60),
            permit(110, 0),
            rejected(150),
        ],
    );
    let checked = shared::check(&never).unwrap_or_else(|v| panic!("{v}"));
    assert_eq!((checked.indeterminate, checked.took_effect), (1, 0));
}

#[test]
fn not_linearizable_whatever_the_lost_attempt_did() {
    // Limit 1: two permits in one window, whether or not a third attempt counted.
    let neither = history(1, vec![lost(10), permit(30, 0), permit(60, 0)]);
    let violation = shared::check(&neither).unwrap_err();
    assert!(
        violation
            .message()
            .starts_with("key \"k\": not linearizable"),
        "{violation}"
    );
}

#[test]
fn a_lost_attempt_may_take_effect_after_its_caller_gave_up() {
    // Limit 3: the permits leave 2, then 0: something counted between them, after the lost
    // attempt's caller had stopped waiting at 20 (a request delayed past its timeout).
    let late = history(3, vec![lost(10), permit(30, 2), permit(50, 0)]);
    assert_eq!(shared::check(&late).map(|c| c.took_effect), Ok(1));
}

#[test]
fn a_lost_attempt_may_take_effect_in_a_later_window() {
    // Limit 1: the second window is full at 150 with no permit heard of in it: the lost attempt,
    // invoked in the first window, counted in the second.
    let later = history(1, vec![lost(10), permit(20, 0), rejected(150)]);
    assert_eq!(shared::check(&later).map(|c| c.took_effect), Ok(1));
    // It cannot have counted before its invocation.
    let too_early = history(1, vec![permit(20, 0), lost(120), rejected(110)]);
    assert!(shared::check(&too_early).is_err());
}

#[test]
fn a_caller_that_never_returned_is_indeterminate_too() {
    let crashed = Attempt::new("k", 10, None, Reply::Permitted { remaining: 0 });
    let checked = shared::check(&history(2, vec![crashed, permit(30, 0)]));
    assert_eq!(
        checked.map(|c| (c.indeterminate, c.took_effect)),
        Ok((1, 1))
    );
}

#[test]
fn an_attempt_the_server_never_ran_has_no_effect() {
    let not_counted = Attempt::new("k", 10, Some(20), Reply::NotCounted);
    assert!(shared::check(&history(2, vec![not_counted.clone(), permit(30, 1)])).is_ok());
    assert!(shared::check(&history(2, vec![not_counted, permit(30, 0)])).is_err());
}

/// The same specification without the interchangeability of lost attempts: the search tries
/// every one of them everywhere.
struct Exhaustive<'h>(KeyWindow<'h>);

impl<'h> Specification for Exhaustive<'h> {
    type State = KeyState;
    type Operation = KeyOperation<'h>;

    fn initial(&self) -> KeyState {
        self.0.initial()
    }

    fn successors(&self, state: &KeyState, op: &KeyOperation<'h>, horizon: u64) -> Vec<KeyState> {
        self.0.successors(state, op, horizon)
    }
}

fn entries(history: &SharedHistory) -> Vec<Entry<KeyOperation<'_>>> {
    history
        .attempts
        .iter()
        .map(|a| match a.returned {
            Some(returned) if !a.is_indeterminate() => {
                Entry::determinate(KeyOperation::Attempt(a), a.invoked, returned)
            }
            _ => Entry::indeterminate(KeyOperation::Attempt(a), a.invoked),
        })
        .collect()
}

fn arbitrary_attempt() -> impl Strategy<Value = Attempt> {
    (0..300_u64, 1..40_u64, 0..6_u8, 0..3_u32, 1..100_u64).prop_map(
        |(invoked, length, kind, remaining, retry_after)| {
            let reply = match kind {
                0 | 1 => Reply::Permitted { remaining },
                2 => Reply::Rejected {
                    retry_after: Some(retry_after),
                },
                3 => Reply::Rejected { retry_after: None },
                _ => Reply::Lost,
            };
            Attempt::new("k", invoked, Some(invoked + length), reply)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Trying lost attempts in invocation order only never changes a verdict.
    #[test]
    fn interchangeable_lost_attempts_change_no_verdict(
        attempts in proptest::collection::vec(arbitrary_attempt(), 0..9),
        limit in 1..4_u32,
    ) {
        let history = history(limit, attempts);
        let reduced = linearize(&KeyWindow::new(&history, "k"), &entries(&history)).is_ok();
        let exhaustive = linearize(&Exhaustive(KeyWindow::new(&history, "k")), &entries(&history)).is_ok();
        prop_assert_eq!(reduced, exhaustive);
    }
}
