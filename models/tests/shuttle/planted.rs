//! Every planted flaw must be caught by shuttle's runs of the eight-caller script (the lost
//! race by the eight callers below the limit), once by the invariants and once by the
//! linearizability checker; a checker that stops catching one fails its test.
//!
//! Two flaws of the catalogue are not run here, for the reasons the loom suite gives:
//! `OverflowPanic` needs the end of the timeline, and a permit past the deadline
//! (`DeadlineOvershoot`) cannot be told from one in time in a history.

use fixed_window_models::scenario::{Checker, Script, play_and_check, violation_found};
use fixed_window_models::{Flaw, Target};

use crate::explore::{Budget, explore};

fn caught(flaw: Flaw, checker: Checker) -> bool {
    caught_by_script(flaw, Script::stress(8), checker)
}

fn caught_by_script(flaw: Flaw, script: Script, checker: Checker) -> bool {
    let found = violation_found(|| {
        explore(Budget::fixed(), move || {
            play_and_check(Target::Planted(flaw), &script, &[checker]);
        });
    });
    found.is_some()
}

#[test]
fn invariants_catch_a_lost_update() {
    assert!(caught(Flaw::LostUpdate, Checker::Invariants));
}

#[test]
fn invariants_catch_carry_over() {
    assert!(caught(Flaw::CarryOver, Checker::Invariants));
}

#[test]
fn invariants_catch_a_window_advanced_from_now() {
    assert!(caught(Flaw::AdvanceFromNow, Checker::Invariants));
}

#[test]
fn invariants_catch_a_boundary_off_by_one() {
    assert!(caught(Flaw::BoundaryOffByOne, Checker::Invariants));
}

#[test]
fn invariants_catch_overcount() {
    assert!(caught(Flaw::Overcount, Checker::Invariants));
}

#[test]
fn invariants_catch_a_false_rejection() {
    assert!(caught(Flaw::FalseRejection, Checker::Invariants));
}

#[test]
fn linearizability_catches_a_lost_update() {
    assert!(caught(Flaw::LostUpdate, Checker::Linearizability));
}

#[test]
fn linearizability_catches_a_false_rejection() {
    assert!(caught(Flaw::FalseRejection, Checker::Linearizability));
}

#[test]
fn linearizability_catches_carry_over() {
    assert!(caught(Flaw::CarryOver, Checker::Linearizability));
}

#[test]
fn linearizability_catches_a_window_advanced_from_now() {
    assert!(caught(Flaw::AdvanceFromNow, Checker::Linearizability));
}

#[test]
fn linearizability_catches_a_boundary_off_by_one() {
    assert!(caught(Flaw::BoundaryOffByOne, Checker::Linearizability));
}

#[test]
fn linearizability_catches_overcount() {
    assert!(caught(Flaw::Overcount, Checker::Linearizability));
}

#[test]
fn invariants_catch_a_caller_giving_up_on_a_lost_race() {
    let script = Script::fewer_than_limit(8);
    assert!(caught_by_script(
        Flaw::GiveUpOnLostRace,
        script,
        Checker::Invariants
    ));
}

#[test]
fn linearizability_catches_a_caller_giving_up_on_a_lost_race() {
    let script = Script::fewer_than_limit(8);
    assert!(caught_by_script(
        Flaw::GiveUpOnLostRace,
        script,
        Checker::Linearizability
    ));
}

/// The control: the limiters whose flaw cannot show here pass every script, so what the tests
/// above catch is each flaw, not the algorithm the catalogue shares.
#[test]
fn the_flaws_a_history_cannot_show_pass() {
    for flaw in [Flaw::OverflowPanic, Flaw::DeadlineOvershoot] {
        for script in [Script::stress(8), Script::fewer_than_limit(8)] {
            let found = violation_found(|| {
                explore(Budget::fixed(), move || {
                    play_and_check(
                        Target::Planted(flaw),
                        &script,
                        &[Checker::Invariants, Checker::Linearizability],
                    );
                });
            });
            assert!(found.is_none(), "{flaw:?}: {found:?}");
        }
    }
}
