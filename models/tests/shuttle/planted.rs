//! Every planted bug must be caught by shuttle's runs of the eight-caller script (the lost
//! race by the eight callers below the limit), once by the invariants and once by the
//! linearizability checker; a checker that stops catching one fails its test.
//!
//! Two bugs of the catalogue are not run here, for the reasons the loom suite gives:
//! `OverflowPanic` needs the end of the timeline, and a permit past the deadline
//! (`DeadlineOvershoot`) cannot be told from one in time in a history.

use fixed_window_models::scenario::{Checker, Script, play_and_check, violation_found};
use fixed_window_models::{PlantedBug, Target};

use crate::explore::{Budget, explore};

fn caught(bug: PlantedBug, checker: Checker) -> bool {
    caught_by_script(bug, Script::stress(8), checker)
}

fn caught_by_script(bug: PlantedBug, script: Script, checker: Checker) -> bool {
    let found = violation_found(|| {
        explore(Budget::fixed(), move || {
            play_and_check(Target::Planted(bug), &script, &[checker]);
        });
    });
    found.is_some()
}

#[test]
fn invariants_catch_a_lost_update() {
    assert!(caught(PlantedBug::LostUpdate, Checker::Invariants));
}

#[test]
fn invariants_catch_carry_over() {
    assert!(caught(PlantedBug::CarryOver, Checker::Invariants));
}

#[test]
fn invariants_catch_a_window_advanced_from_now() {
    assert!(caught(PlantedBug::AdvanceFromNow, Checker::Invariants));
}

#[test]
fn invariants_catch_a_boundary_off_by_one() {
    assert!(caught(PlantedBug::BoundaryOffByOne, Checker::Invariants));
}

#[test]
fn invariants_catch_overcount() {
    assert!(caught(PlantedBug::Overcount, Checker::Invariants));
}

#[test]
fn invariants_catch_a_false_rejection() {
    assert!(caught(PlantedBug::FalseRejection, Checker::Invariants));
}

#[test]
fn linearizability_catches_a_lost_update() {
    assert!(caught(PlantedBug::LostUpdate, Checker::Linearizability));
}

#[test]
fn linearizability_catches_a_false_rejection() {
    assert!(caught(PlantedBug::FalseRejection, Checker::Linearizability));
}

#[test]
fn linearizability_catches_carry_over() {
    assert!(caught(PlantedBug::CarryOver, Checker::Linearizability));
}

#[test]
fn linearizability_catches_a_window_advanced_from_now() {
    assert!(caught(PlantedBug::AdvanceFromNow, Checker::Linearizability));
}

#[test]
fn linearizability_catches_a_boundary_off_by_one() {
    assert!(caught(
        PlantedBug::BoundaryOffByOne,
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_overcount() {
    assert!(caught(PlantedBug::Overcount, Checker::Linearizability));
}

#[test]
fn invariants_catch_a_caller_giving_up_on_a_lost_race() {
    let script = Script::fewer_than_limit(8);
    assert!(caught_by_script(
        PlantedBug::GiveUpOnLostRace,
        script,
        Checker::Invariants
    ));
}

#[test]
fn linearizability_catches_a_caller_giving_up_on_a_lost_race() {
    let script = Script::fewer_than_limit(8);
    assert!(caught_by_script(
        PlantedBug::GiveUpOnLostRace,
        script,
        Checker::Linearizability
    ));
}

/// The control: the limiters whose bug cannot show here pass every script, so what the tests
/// above catch is each bug, not the algorithm the catalogue shares.
#[test]
fn the_planted_bugs_a_history_cannot_show_pass() {
    for bug in [PlantedBug::OverflowPanic, PlantedBug::DeadlineOvershoot] {
        for script in [Script::stress(8), Script::fewer_than_limit(8)] {
            let found = violation_found(|| {
                explore(Budget::fixed(), move || {
                    play_and_check(
                        Target::Planted(bug),
                        &script,
                        &[Checker::Invariants, Checker::Linearizability],
                    );
                });
            });
            assert!(found.is_none(), "{bug:?}: {found:?}");
        }
    }
}
