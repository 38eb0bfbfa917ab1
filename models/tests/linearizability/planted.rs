//! The sequential script against core (which must pass) and against every planted limiter
//! whose flaw shows without a race (which both checkers must catch). The flaws that need a race
//! are caught by the same checkers on shuttle's and loom's histories (`cargo xtask models`).

use fixed_window_models::scenario::{Checker, Script, play};
use fixed_window_models::{Flaw, Target};

fn verdicts(target: Target) -> [bool; 2] {
    let history = play(target, &Script::sequential());
    [Checker::Invariants, Checker::Linearizability].map(|checker| checker.check(&history).is_ok())
}

#[test]
fn core_passes_the_sequential_script() {
    assert_eq!(verdicts(Target::Core), [true, true]);
}

#[test]
fn both_checkers_catch_carry_over() {
    assert_eq!(verdicts(Target::Planted(Flaw::CarryOver)), [false, false]);
}

#[test]
fn both_checkers_catch_a_window_advanced_from_now() {
    assert_eq!(
        verdicts(Target::Planted(Flaw::AdvanceFromNow)),
        [false, false]
    );
}

#[test]
fn both_checkers_catch_a_boundary_off_by_one() {
    assert_eq!(
        verdicts(Target::Planted(Flaw::BoundaryOffByOne)),
        [false, false]
    );
}

#[test]
fn the_race_flaws_are_correct_without_a_race() {
    // Their flaw needs two callers between a load and a write; alone they behave, which is
    // why they are judged on shuttle's and loom's histories.
    assert_eq!(verdicts(Target::Planted(Flaw::LoadThenStore)), [true, true]);
    assert_eq!(verdicts(Target::Planted(Flaw::Overcount)), [true, true]);
    assert_eq!(
        verdicts(Target::Planted(Flaw::GiveUpOnLostRace)),
        [true, true]
    );
}
