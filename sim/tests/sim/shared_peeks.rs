//! Peeks in the shared simulator: drawn, sent through the product's protocol, and judged; the
//! oracle's checks of a peek each fail on a trace changed the way a broken peek would change
//! it.

use fixed_window_sim::shared::{SharedRecord, SharedRun, SharedScenario, check_shared, run_shared};
use fixed_window_sim::{Invariant, ScenarioId};

/// The first scenario from seed 0 whose run has a record `wanted` picks, with the run.
fn first_with(wanted: impl Fn(&SharedRecord) -> bool) -> (SharedScenario, SharedRun) {
    (0..400)
        .map(|seed| {
            let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
            let run = run_shared(&scenario, None);
            (scenario, run)
        })
        .find(|(_, run)| run.records.iter().any(&wanted))
        .expect("some scenario of the first 400 has one")
}

/// Whether `run`, changed by `change` at every record it applies to, breaks `Events`.
fn changed_breaks_events(
    scenario: &SharedScenario,
    run: &SharedRun,
    change: impl Fn(&mut SharedRecord),
) -> bool {
    let mut changed = run.clone();
    changed.records.iter_mut().for_each(change);
    check_shared(scenario, &changed)
        .iter()
        .any(|v| v.invariant == Invariant::Events)
}

#[test]
fn a_peek_answered_by_the_server_passes_and_a_wrong_answer_is_caught() {
    // With a permit left, so that one fewer is a change.
    let (scenario, run) = first_with(|record| {
        matches!(
            record,
            SharedRecord::Peeked {
                request: Some(_),
                remaining: 1..,
                ..
            }
        )
    });
    assert!(check_shared(&scenario, &run).is_empty());
    // One permit more or less left, or the window's end a nanosecond off: each is caught.
    for remaining_by in [-1_i64, 1] {
        assert!(changed_breaks_events(&scenario, &run, |record| {
            if let SharedRecord::Peeked {
                request: Some(_),
                remaining,
                ..
            } = record
            {
                *remaining = u32::try_from(i64::from(*remaining) + remaining_by).unwrap_or(0);
            }
        }));
    }
    assert!(changed_breaks_events(&scenario, &run, |record| {
        if let SharedRecord::Peeked {
            request: Some(_),
            resets_in,
            ..
        } = record
        {
            *resets_in += 1;
        }
    }));
}

#[test]
fn a_peeks_script_call_writes_nothing_and_a_write_is_caught() {
    let (scenario, run) = first_with(|record| matches!(record, SharedRecord::PeekRan { .. }));
    assert!(
        run.records
            .iter()
            .all(|record| !matches!(record, SharedRecord::PeekRan { writes: 1.., .. }))
    );
    assert!(changed_breaks_events(&scenario, &run, |record| {
        if let SharedRecord::PeekRan { writes, .. } = record {
            *writes = 1;
        }
    }));
}

#[test]
fn a_peek_answered_from_memory_finds_none_left() {
    let (scenario, run) =
        first_with(|record| matches!(record, SharedRecord::Peeked { request: None, .. }));
    assert!(check_shared(&scenario, &run).is_empty());
    assert!(changed_breaks_events(&scenario, &run, |record| {
        if let SharedRecord::Peeked {
            request: None,
            remaining,
            ..
        } = record
        {
            *remaining = 1;
        }
    }));
}
