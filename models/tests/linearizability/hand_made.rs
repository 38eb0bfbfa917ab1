//! Histories written by hand: each says what it shows.

use core::time::Duration;

use fixed_window::Instant;
use fixed_window_models::{
    Config, Event, History, Kind, Outcome, Record, invariants, linearizability,
};

const LIMIT: u32 = 2;

fn config() -> Config {
    Config::new(
        Instant::ZERO,
        LIMIT,
        Duration::from_nanos(10),
        Duration::from_nanos(10),
    )
}

/// An operation invoked at `invoked` and returned at `returned` in the global order, reading
/// the clock at `started` and `ended`.
fn op(kind: Kind, order: (u64, u64), clock: (u64, u64), outcome: Outcome) -> Record {
    Record {
        kind,
        invoked: order.0,
        returned: order.1,
        started: Instant::from_nanos(clock.0),
        ended: Instant::from_nanos(clock.1),
        outcome,
        ran: outcome.is_permitted(),
    }
}

fn permit(at: u64, remaining: u32) -> Outcome {
    Outcome::Permitted {
        at: Some(Instant::from_nanos(at)),
        remaining: Some(remaining),
    }
}

fn rejected(retry_after: u64) -> Outcome {
    Outcome::Rejected {
        retry_after: Duration::from_nanos(retry_after),
    }
}

/// The history with the events its outcomes imply, so the invariants judge the outcomes.
fn history(records: Vec<Record>) -> History {
    let events = records
        .iter()
        .filter_map(|record| match (record.outcome, record.started) {
            (
                Outcome::Permitted {
                    at: Some(at),
                    remaining: Some(remaining),
                },
                _,
            ) => Some(Event::Permitted { at, remaining }),
            (Outcome::Permitted { .. }, started) => Some(Event::Permitted {
                at: started,
                remaining: 0,
            }),
            (Outcome::Rejected { retry_after }, at) => Some(Event::Rejected { at, retry_after }),
            (Outcome::Interrupted, _) => None,
        })
        .collect();
    History {
        config: config(),
        records,
        events,
    }
}

fn sequential(ops: &[(Kind, u64, Outcome)]) -> History {
    history(
        ops.iter()
            .zip(0u64..)
            .map(|(&(kind, at, outcome), i)| op(kind, (2 * i, 2 * i + 1), (at, at), outcome))
            .collect(),
    )
}

fn both_accept(history: &History) {
    assert_eq!(linearizability::check(history), Ok(()));
    assert_eq!(invariants::check(history), Ok(()));
}

fn both_reject(history: &History) {
    assert!(linearizability::check(history).is_err(), "{history:#?}");
    assert!(invariants::check(history).is_err(), "{history:#?}");
}

#[test]
fn an_empty_history_is_linearizable() {
    both_accept(&history(Vec::new()));
}

#[test]
fn a_correct_sequential_history_is_accepted() {
    use Kind::TryAcquire as T;
    both_accept(&sequential(&[
        (T, 1, permit(1, 1)),
        (T, 2, permit(2, 0)),
        (T, 3, rejected(7)),
        (T, 10, permit(10, 1)),
        (T, 35, permit(35, 1)),
    ]));
}

#[test]
fn a_third_permit_in_a_window_of_two_is_rejected() {
    use Kind::TryAcquire as T;
    both_reject(&sequential(&[
        (T, 1, permit(1, 1)),
        (T, 2, permit(2, 0)),
        (T, 3, permit(3, 0)),
    ]));
}

#[test]
fn a_rejection_in_an_empty_window_is_rejected() {
    use Kind::TryAcquire as T;
    both_reject(&sequential(&[(T, 1, permit(1, 1)), (T, 2, rejected(8))]));
}

#[test]
fn carried_over_permits_are_rejected() {
    use Kind::TryAcquire as T;
    both_reject(&sequential(&[
        (T, 1, permit(1, 1)),
        (T, 11, permit(11, 2)),
        (T, 12, permit(12, 1)),
        (T, 13, permit(13, 0)),
    ]));
}

#[test]
fn a_rejection_at_the_boundary_is_rejected() {
    use Kind::TryAcquire as T;
    both_reject(&sequential(&[
        (T, 1, permit(1, 1)),
        (T, 2, permit(2, 0)),
        (T, 10, rejected(0)),
    ]));
}

#[test]
fn a_wrong_remaining_count_is_not_linearizable() {
    use Kind::TryAcquire as T;
    let history = sequential(&[(T, 1, permit(1, 1)), (T, 2, permit(2, 1))]);
    assert!(linearizability::check(&history).is_err());
}

#[test]
fn a_waiting_call_rejected_although_the_next_window_is_within_its_deadline_is_rejected() {
    use Kind::{Acquire as A, TryAcquire as T};
    both_reject(&sequential(&[
        (T, 1, permit(1, 1)),
        (T, 2, permit(2, 0)),
        (A, 3, rejected(7)),
    ]));
}

#[test]
fn overlapping_calls_may_take_effect_in_either_order() {
    // Two calls overlap; the one that returned `remaining: 1` took effect first even though it
    // was invoked second.
    let records = vec![
        op(Kind::TryAcquire, (0, 3), (1, 1), permit(1, 0)),
        op(Kind::TryAcquire, (1, 2), (1, 1), permit(1, 1)),
    ];
    both_accept(&history(records));
}

#[test]
fn real_time_order_is_respected() {
    // The same outcomes as above, but the second call was invoked after the first returned:
    // it cannot have taken effect first.
    let records = vec![
        op(Kind::TryAcquire, (0, 1), (1, 1), permit(1, 0)),
        op(Kind::TryAcquire, (2, 3), (1, 1), permit(1, 1)),
    ];
    assert!(linearizability::check(&history(records)).is_err());
}

#[test]
fn a_stale_reading_may_claim_in_the_next_window() {
    // A read the clock at 9, lost the race to B who opened window 1 at 10, and claimed in
    // window 1 with its reading still 9: counted against the stored window, as docs/rules.md
    // says ("Clocks that stand still or step back").
    let records = vec![
        op(Kind::TryAcquire, (0, 3), (9, 10), permit(9, 0)),
        op(Kind::TryAcquire, (1, 2), (10, 10), permit(10, 1)),
        op(Kind::TryAcquire, (4, 5), (10, 10), rejected(10)),
        op(Kind::TryAcquire, (6, 7), (10, 11), rejected(10)),
    ];
    both_accept(&history(records));
}

#[test]
fn a_stale_reading_may_be_rejected_by_the_next_window() {
    // Window 1 filled at 10 while A, which read 9, was still deciding: its estimate runs from
    // its own reading to the end of window 1.
    let records = vec![
        op(Kind::TryAcquire, (0, 1), (10, 10), permit(10, 1)),
        op(Kind::TryAcquire, (2, 5), (9, 10), rejected(11)),
        op(Kind::TryAcquire, (3, 4), (10, 10), permit(10, 0)),
    ];
    let mut history = history(records);
    history.records[1].started = Instant::from_nanos(9);
    assert_eq!(linearizability::check(&history), Ok(()));
}
