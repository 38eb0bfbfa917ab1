//! Scenario ids replay exactly; shrinking keeps the failure and never grows the scenario.

use fixed_window_sim::{
    CallKind, ClockModel, Invariant, ParseIdError, PlantedBug, Scenario, ScenarioId, Target, shrink,
};

use crate::{rules_broken, violations};

#[test]
fn ids_round_trip() {
    for text in [
        "0",
        "18446744073709551615",
        "7:0",
        "7:0-3,5,9-10",
        "7:",
        "7:0-3/limit=2,steady",
        "7:/single",
        "7:1/limit=1,steady,creation,single",
    ] {
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
        "7:0/",
        "7:0/limit=x",
        "7:0/bogus",
        "7:0/limit=-1",
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

/// Every planted bug's failure shrinks to a line that replays it, no larger than the scenario
/// it came from in callers and limit; and the cuts past the callers take something out of
/// most of them.
#[test]
fn every_planted_bug_shrinks_to_a_line_that_still_fails() {
    let mut cut = 0;
    // A limit read before the state word shows only in the models' interleavings (see
    // `every_planted_bug_of_the_catalogue_is_caught`): not the simulator's to shrink.
    let shown = PlantedBug::ALL
        .into_iter()
        .filter(|&bug| bug != PlantedBug::LimitReadBeforeWord);
    for bug in shown.clone() {
        let target = Target::Planted(bug);
        let (id, invariant) = (0..200)
            .map(ScenarioId::seed)
            .find_map(|id| {
                let broken = rules_broken(&violations(&id, target).1);
                let first = broken.first().copied()?;
                violations(&id, Target::Real)
                    .1
                    .is_empty()
                    .then_some((id, first))
            })
            .unwrap_or_else(|| panic!("{bug:?} shows within 200 seeds"));
        let shrunk = shrink(&id, target, invariant);
        let replayed: ScenarioId = shrunk.to_string().parse().unwrap();
        assert_eq!(replayed, shrunk);
        assert!(
            rules_broken(&violations(&replayed, target).1).contains(&invariant),
            "{bug:?}: {shrunk} no longer breaks {invariant:?}"
        );
        let (full, small) = (Scenario::generate(&id), Scenario::generate(&shrunk));
        assert!(
            small.callers.len() <= full.callers.len(),
            "{bug:?}: {shrunk}"
        );
        assert!(small.config.limit <= full.config.limit, "{bug:?}: {shrunk}");
        if !shrunk.cuts.is_empty() {
            cut += 1;
        }
    }
    assert!(cut * 2 > shown.count(), "{cut} of the planted bugs cut");
}

#[test]
fn cuts_simplify_the_scenario_as_named() {
    let full = Scenario::generate(&ScenarioId::seed(11));
    let cut = Scenario::generate(&"11:/limit=1,steady,creation,single".parse().unwrap());
    assert_eq!(cut.callers.len(), full.callers.len());
    assert_eq!(cut.config.limit, 1);
    assert_eq!(cut.clock, ClockModel::ordinary(full.clock.reading(0)));
    assert_eq!(cut.origin_choice, fixed_window::Origin::Creation);
    assert!(
        cut.callers
            .iter()
            .all(|caller| caller.weight == 1 && caller.kind != CallKind::Drain)
    );
}
