//! Peeks in the shared simulator: drawn, sent through the product's protocol, and judged; the
//! oracle's checks of a peek each fail on a trace changed the way a broken peek would change
//! it.

use fixed_window_sim::shared::{
    Purpose, ReplyDigest, SharedRecord, SharedRun, SharedScenario, check_shared, run_shared,
};
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
    changed_breaks(scenario, run, Invariant::Events, change)
}

/// Whether `run`, changed by `change` at every record it applies to, breaks `invariant`.
fn changed_breaks(
    scenario: &SharedScenario,
    run: &SharedRun,
    invariant: Invariant,
    change: impl Fn(&mut SharedRecord),
) -> bool {
    let mut changed = run.clone();
    changed.records.iter_mut().for_each(change);
    check_shared(scenario, &changed)
        .iter()
        .any(|v| v.invariant == invariant)
}

/// Whether `run`, changed by `change`, breaks `invariant` with a finding whose text holds
/// `needle`: the peek's rule, not another that the change happens to reach.
fn changed_found(
    scenario: &SharedScenario,
    run: &SharedRun,
    (invariant, needle): (Invariant, &str),
    change: impl Fn(&mut SharedRecord),
) -> bool {
    let mut changed = run.clone();
    changed.records.iter_mut().for_each(change);
    check_shared(scenario, &changed)
        .iter()
        .any(|v| v.invariant == invariant && v.detail.contains(needle))
}

/// A peek answered by the server, turned into a failure: `Unavailable` with no fault.
fn fail_answered(record: &mut SharedRecord) {
    if let &mut SharedRecord::Peeked {
        t,
        caller,
        request: Some(_),
        ..
    } = record
    {
        *record = SharedRecord::PeekFailed {
            t,
            caller,
            conflict: false,
        };
    }
}

/// Whether `request`'s script run answered "the limit changed" (`{ 3, … }`).
fn answered_changed(run: &SharedRun, request: u32) -> bool {
    run.records.iter().any(|record| {
        matches!(record, SharedRecord::Executed { request: r, reply: ReplyDigest::Four { values }, .. }
            if *r == request && values[0] == 3)
    })
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

#[test]
fn a_failed_peek_is_explained_and_an_answer_dropped_is_caught() {
    let (scenario, run) = first_with(|record| {
        matches!(
            record,
            SharedRecord::PeekFailed {
                conflict: false,
                ..
            }
        )
    });
    assert!(check_shared(&scenario, &run).is_empty());
    // An answered peek reported failed: the server answered, so nothing explains it.
    let (scenario, run) = first_with(|record| {
        matches!(
            record,
            SharedRecord::Peeked {
                request: Some(_),
                ..
            }
        )
    });
    let no_fault = (
        Invariant::Unavailable,
        "a peek failed Unavailable with no fault",
    );
    assert!(changed_found(&scenario, &run, no_fault, fail_answered));
    // A failure made a conflict the server never answered.
    let refused = (Invariant::Events, "a peek failed Conflict");
    assert!(changed_found(&scenario, &run, refused, |record| {
        fail_answered(record);
        if let SharedRecord::PeekFailed { conflict, .. } = record {
            *conflict = true;
        }
    }));
}

#[test]
fn a_refused_peek_fails_conflict_and_unavailable_in_its_place_is_caught() {
    let (scenario, run) =
        first_with(|record| matches!(record, SharedRecord::PeekFailed { conflict: true, .. }));
    assert!(check_shared(&scenario, &run).is_empty());
    let no_fault = (
        Invariant::Unavailable,
        "a peek failed Unavailable with no fault",
    );
    assert!(changed_found(&scenario, &run, no_fault, |record| {
        if let SharedRecord::PeekFailed { conflict, .. } = record {
            *conflict = false;
        }
    }));
}

#[test]
fn a_peek_told_of_a_newer_limit_is_made_again_under_it() {
    // A peek whose script run answered a newer limit, then answered.
    let found = (0..2_000).find_map(|seed| {
        let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
        if scenario.limit_changes.is_empty() {
            return None;
        }
        let run = run_shared(&scenario, None);
        let told = run.records.iter().find_map(|record| match record {
            SharedRecord::Sent {
                request,
                caller: Some(caller),
                purpose: Purpose::Peek,
                ..
            } if answered_changed(&run, *request) => Some(*caller),
            _ => None,
        })?;
        let answered = run.records.iter().any(|record| {
            matches!(record, SharedRecord::Peeked { caller, request: Some(_), .. } if *caller == told)
        });
        answered.then_some((scenario, run, told))
    });
    let (scenario, run, told) = found.expect("a peek told of a newer limit in 2,000 scenarios");
    assert!(check_shared(&scenario, &run).is_empty());
    // Made again under the old version: caught.
    let mut seen = 0;
    let mut changed = run.clone();
    for record in &mut changed.records {
        if let SharedRecord::Sent {
            caller: Some(caller),
            purpose: Purpose::Peek,
            version,
            ..
        } = record
            && *caller == told
        {
            seen += 1;
            if seen == 2 {
                *version = 0;
            }
        }
    }
    assert!(
        check_shared(&scenario, &changed).iter().any(|v| {
            v.invariant == Invariant::Events && v.detail.contains("a peek made again")
        })
    );
    // Given up after one change where three more tries are allowed: caught.
    let no_fault = (
        Invariant::Unavailable,
        "a peek failed Unavailable with no fault",
    );
    assert!(changed_found(&scenario, &run, no_fault, |record| {
        if matches!(record, SharedRecord::Peeked { caller, .. } if *caller == told) {
            fail_answered(record);
        }
    }));
}

#[test]
fn a_peek_answered_from_memory_resets_when_the_window_ends() {
    let (scenario, run) =
        first_with(|record| matches!(record, SharedRecord::Peeked { request: None, .. }));
    let period_ns = u128::from(scenario.period_us) * 1_000;
    // Answering the window's end a period late, or at once: each is caught.
    let wrong_end = (Invariant::Events, "a local peek's resets_in");
    assert!(changed_found(&scenario, &run, wrong_end, |record| {
        if let SharedRecord::Peeked {
            request: None,
            resets_in,
            ..
        } = record
        {
            *resets_in += period_ns;
        }
    }));
    assert!(changed_found(&scenario, &run, wrong_end, |record| {
        if let SharedRecord::Peeked {
            request: None,
            resets_in,
            ..
        } = record
        {
            *resets_in = 0;
        }
    }));
}
