//! Scenario ids replay exactly; shrinking keeps the failure and never grows the scenario.

use fixed_window_sim::{
    CallKind, Invariant, ParseIdError, PlantedBug, Scenario, ScenarioId, Target, shrink,
};

use crate::{rules_broken, violations};

#[test]
fn ids_round_trip() {
    for text in ["0", "18446744073709551615", "7:0", "7:0-3,5,9-10", "7:"] {
        let id: ScenarioId = text.parse().unwrap();
        assert_eq!(id.to_string().parse::<ScenarioId>(), Ok(id));
    }
}

#[test]
fn malformed_ids_are_refused() {
    for text in [
        "",
        "x",
        "-1",
        "7:3-1",
        "7:4,2",
        "7:a",
        "18446744073709551616",
    ] {
        let parsed: Result<ScenarioId, ParseIdError> = text.parse();
        assert!(parsed.is_err(), "{text}");
    }
}

#[test]
fn a_shrunk_failure_is_smaller_and_replays_from_its_id() {
    let target = Target::Planted(PlantedBug::LostUpdate);
    let id = (0..200)
        .map(ScenarioId::seed)
        .find(|id| rules_broken(&violations(id, target).1).contains(&Invariant::WindowLimit))
        .expect("a lost update shows within 200 seeds");
    let shrunk = shrink(&id, target, Invariant::WindowLimit);
    let full = Scenario::generate(&id).callers.len();
    let small = Scenario::generate(&shrunk).callers.len();
    assert!(small < full, "{small} callers, not fewer than {full}");
    let replayed: ScenarioId = shrunk.to_string().parse().unwrap();
    assert!(rules_broken(&violations(&replayed, target).1).contains(&Invariant::WindowLimit));
}

#[test]
fn a_shrunk_drain_failure_keeps_a_drain() {
    let target = Target::Planted(PlantedBug::DrainLeavesOne);
    let id = (0..200)
        .map(ScenarioId::seed)
        .find(|id| rules_broken(&violations(id, target).1).contains(&Invariant::WindowLimit))
        .expect("a drain that leaves one shows within 200 seeds");
    let shrunk = shrink(&id, target, Invariant::WindowLimit);
    let callers = Scenario::generate(&shrunk).callers;
    assert!(callers.len() < Scenario::generate(&id).callers.len());
    // Only a drain breaks the window: the smallest failure keeps one.
    assert!(
        callers.iter().any(|caller| caller.kind == CallKind::Drain),
        "{callers:?}"
    );
    assert!(rules_broken(&violations(&shrunk, target).1).contains(&Invariant::WindowLimit));
}

#[test]
fn a_kept_subset_keeps_the_callers_as_drawn() {
    let full = Scenario::generate(&ScenarioId::seed(11));
    let part = Scenario::generate(&"11:0,2".parse().unwrap());
    assert_eq!(part.callers, vec![full.callers[0], full.callers[2]]);
    assert_eq!((part.config, &part.clock), (full.config, &full.clock));
}
