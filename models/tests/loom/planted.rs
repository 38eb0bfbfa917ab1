//! Every planted flaw must be caught by the loom model that exposes it, once by the invariants
//! and once by the linearizability checker; a checker that stops catching one fails its test.

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
fn invariants_catch_load_then_store() {
    assert!(caught(
        Flaw::LoadThenStore,
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
fn linearizability_catches_load_then_store() {
    assert!(caught(
        Flaw::LoadThenStore,
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
