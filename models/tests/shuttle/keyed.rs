//! The keyed limiter under shuttle: many callers on two keys while the clock moves and a
//! sweeper reclaims ended keys, and the removal-versus-claim race on one key. Core must keep
//! every key's history valid; the planted keyed limiter, whose sweep removes a key without a
//! compare-and-set, must be caught by both checkers.

use fixed_window_models::scenario::{Checker, violation_found};
use fixed_window_models::{KeyedPlantedBug, KeyedScript, KeyedTarget, play_and_check_keyed};

use crate::explore::{Budget, explore};

const BOTH: [Checker; 2] = [Checker::Invariants, Checker::Linearizability];

fn check(script: KeyedScript) {
    let schedules = explore(Budget::from_env(), move || {
        play_and_check_keyed(KeyedTarget::Core, &script, &BOTH);
    });
    eprintln!("shuttle: {schedules} schedules");
    assert!(schedules > 0);
}

fn caught(script: KeyedScript, checker: Checker) -> bool {
    let target = KeyedTarget::Planted(KeyedPlantedBug::RecreateEmpty);
    violation_found(|| {
        explore(Budget::fixed(), move || {
            play_and_check_keyed(target, &script, &[checker]);
        });
    })
    .is_some()
}

#[test]
fn callers_on_two_keys_race_a_moving_clock_and_a_sweeper() {
    check(KeyedScript::stress(6));
}

#[test]
fn a_claim_races_the_sweeps_that_reclaim_its_key() {
    check(KeyedScript::reclaim_race_with_sweeper());
}

#[test]
fn a_key_is_re_created_by_a_caller_whose_reading_predates_its_reclaim() {
    check(KeyedScript::reinsert_race());
}

#[test]
fn invariants_catch_a_key_recreated_empty() {
    assert!(caught(
        KeyedScript::reclaim_race_with_sweeper(),
        Checker::Invariants
    ));
}

#[test]
fn linearizability_catches_a_key_recreated_empty() {
    assert!(caught(
        KeyedScript::reclaim_race_with_sweeper(),
        Checker::Linearizability
    ));
}
