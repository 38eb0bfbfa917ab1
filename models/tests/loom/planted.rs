//! Every planted flaw must be caught by the loom model that exposes it, once by the invariants
//! and once by the linearizability checker; a checker that stops catching one fails its test.
//!
//! Two flaws of the catalogue are not run here: `OverflowPanic` shows only near the end of the
//! timeline (`Flaw::extremes_only`), which the models' small numbers never reach, and
//! `DeadlineOvershoot` grants a permit after the deadline, which a history cannot tell from a
//! permit in time (it does not say when a waiting call read the clock to fix its deadline).
//! The simulator's oracle, which sees every reading, catches both.

use fixed_window_models::scenario::{Checker, Script, play_and_check, violation_found};
use fixed_window_models::{Flaw, Target};

use crate::explore::model;

fn caught(flaw: Flaw, script: Script, checker: Checker) -> bool {
    violation_found(|| {
        model(move || play_and_check(Target::Planted(flaw), &script, &[checker]));
    })
    .is_some()
}

#[test]
fn invariants_catch_a_lost_update() {
    assert!(caught(
        Flaw::LostUpdate,
        Script::claim_race(2, 1, 10),
        Checker::Invariants
    ));
}

#[test]
fn invariants_catch_overcount() {
    assert!(caught(
        Flaw::Overcount,
        Script::claim_race(2, 1, 10),
        Checker::Invariants
    ));
}

#[test]
fn invariants_catch_carry_over() {
    assert!(caught(
        Flaw::CarryOver,
        Script::advance_race(),
        Checker::Invariants
    ));
}

#[test]
fn invariants_catch_a_window_advanced_from_now() {
    assert!(caught(
        Flaw::AdvanceFromNow,
        Script::advance_race(),
        Checker::Invariants
    ));
}

#[test]
fn invariants_catch_a_boundary_off_by_one() {
    assert!(caught(
        Flaw::BoundaryOffByOne,
        Script::boundary_waiter(),
        Checker::Invariants
    ));
}

#[test]
fn linearizability_catches_a_lost_update() {
    assert!(caught(
        Flaw::LostUpdate,
        Script::claim_race(2, 1, 10),
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_overcount() {
    assert!(caught(
        Flaw::Overcount,
        Script::claim_race(2, 1, 10),
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_carry_over() {
    assert!(caught(
        Flaw::CarryOver,
        Script::advance_race(),
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_a_window_advanced_from_now() {
    assert!(caught(
        Flaw::AdvanceFromNow,
        Script::advance_race(),
        Checker::Linearizability
    ));
}

#[test]
fn linearizability_catches_a_boundary_off_by_one() {
    assert!(caught(
        Flaw::BoundaryOffByOne,
        Script::boundary_waiter(),
        Checker::Linearizability
    ));
}

#[test]
fn invariants_catch_a_caller_giving_up_on_a_lost_race() {
    let script = Script::claim_race(2, 2, 10);
    assert!(caught(Flaw::GiveUpOnLostRace, script, Checker::Invariants));
}

#[test]
fn linearizability_catches_a_caller_giving_up_on_a_lost_race() {
    let script = Script::claim_race(2, 2, 10);
    assert!(caught(
        Flaw::GiveUpOnLostRace,
        script,
        Checker::Linearizability
    ));
}

#[test]
fn invariants_catch_a_false_rejection() {
    let script = Script::claim_race(2, 2, 10);
    assert!(caught(Flaw::FalseRejection, script, Checker::Invariants));
}

#[test]
fn linearizability_catches_a_false_rejection() {
    let script = Script::claim_race(2, 2, 10);
    assert!(caught(
        Flaw::FalseRejection,
        script,
        Checker::Linearizability
    ));
}

/// The control: the limiters whose flaw cannot show here pass every script, so what the tests
/// above catch is each flaw, not the algorithm the catalogue shares.
#[test]
fn the_flaws_a_history_cannot_show_pass() {
    for flaw in [Flaw::OverflowPanic, Flaw::DeadlineOvershoot] {
        for script in [
            Script::claim_race(2, 1, 10),
            Script::claim_race(2, 2, 10),
            Script::advance_race(),
            Script::boundary_waiter(),
        ] {
            assert!(
                !caught(flaw, script.clone(), Checker::Invariants),
                "{flaw:?}"
            );
            assert!(!caught(flaw, script, Checker::Linearizability), "{flaw:?}");
        }
    }
}
