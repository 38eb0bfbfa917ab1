//! Every planted bug must be caught by the loom model that exposes it, once by the invariants
//! and once by the linearizability checker; a checker that stops catching one fails its test.
//!
//! Two bugs of the catalogue are not run here: `OverflowPanic` shows only near the end of the
//! timeline (`PlantedBug::extremes_only`), which the models' small numbers never reach, and
//! `DeadlineOvershoot` grants a permit after the deadline, which a history cannot tell from a
//! permit in time (it does not say when a waiting call read the clock to fix its deadline).
//! The simulator's oracle, which sees every reading, catches both.

use fixed_window_models::scenario::{Checker, Script, play_and_check, violation_found};
use fixed_window_models::{PlantedBug, Target};

use crate::explore::model;

fn caught(bug: PlantedBug, script: Script, checker: Checker) -> bool {
    violation_found(|| {
        model(move || play_and_check(Target::Planted(bug), &script, &[checker]));
    })
    .is_some()
}

#[test]
fn invariants_catch_a_lost_update() {
    assert!(caught(
        PlantedBug::LostUpdate,
        Script::claim_race(2, 1, 10),
        Checker::Invariants
    ));
}

#[test]
fn invariants_catch_overcount() {
    assert!(caught(
        PlantedBug::Overcount,
        Script::claim_race(2, 1, 10),
        Checker::Invariants
    ));
}

#[test]
fn invariants_catch_carry_over() {
    assert!(caught(
        PlantedBug::CarryOver,
        Script::advance_race(),
        Checker::Invariants
    ));
}

#[test]
fn invariants_catch_a_window_advanced_from_now() {
    assert!(caught(
        PlantedBug::AdvanceFromNow,
        Script::advance_race(),
        Checker::Invariants
    ));
}

#[test]
fn invariants_catch_a_boundary_off_by_one() {
    assert!(caught(
        PlantedBug::BoundaryOffByOne,
        Script::boundary_waiter(),
        Checker::Invariants
    ));
}

#[test]
fn linearizability_catches_a_lost_update() {
    assert!(caught(
        PlantedBug::LostUpdate,
        Script::claim_race(2, 1, 10),
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_overcount() {
    assert!(caught(
        PlantedBug::Overcount,
        Script::claim_race(2, 1, 10),
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_carry_over() {
    assert!(caught(
        PlantedBug::CarryOver,
        Script::advance_race(),
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_a_window_advanced_from_now() {
    assert!(caught(
        PlantedBug::AdvanceFromNow,
        Script::advance_race(),
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_a_boundary_off_by_one() {
    assert!(caught(
        PlantedBug::BoundaryOffByOne,
        Script::boundary_waiter(),
        Checker::Linearizability
    ));
}

#[test]
fn invariants_catch_a_caller_giving_up_on_a_lost_race() {
    let script = Script::claim_race(2, 2, 10);
    assert!(caught(
        PlantedBug::GiveUpOnLostRace,
        script,
        Checker::Invariants
    ));
}

#[test]
fn linearizability_catches_a_caller_giving_up_on_a_lost_race() {
    let script = Script::claim_race(2, 2, 10);
    assert!(caught(
        PlantedBug::GiveUpOnLostRace,
        script,
        Checker::Linearizability
    ));
}

#[test]
fn invariants_catch_a_false_rejection() {
    let script = Script::claim_race(2, 2, 10);
    assert!(caught(
        PlantedBug::FalseRejection,
        script,
        Checker::Invariants
    ));
}

#[test]
fn linearizability_catches_a_false_rejection() {
    let script = Script::claim_race(2, 2, 10);
    assert!(caught(
        PlantedBug::FalseRejection,
        script,
        Checker::Linearizability
    ));
}

/// The control: the limiters whose bug cannot show here pass every script, so what the tests
/// above catch is each bug, not the algorithm the catalogue shares.
#[test]
fn the_planted_bugs_a_history_cannot_show_pass() {
    for bug in [PlantedBug::OverflowPanic, PlantedBug::DeadlineOvershoot] {
        for script in [
            Script::claim_race(2, 1, 10),
            Script::claim_race(2, 2, 10),
            Script::advance_race(),
            Script::boundary_waiter(),
        ] {
            assert!(!caught(bug, script.clone(), Checker::Invariants), "{bug:?}");
            assert!(!caught(bug, script, Checker::Linearizability), "{bug:?}");
        }
    }
}
