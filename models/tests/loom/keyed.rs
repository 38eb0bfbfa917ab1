//! The keyed limiter under loom: the removal-versus-claim race on one key, every interleaving
//! within the preemption bound, core's table stand-in and state words all on loom's primitives.
//! Core must keep every key's history valid; the planted keyed limiter, whose sweep removes a
//! key without a compare-and-set, must be caught by both checkers.

use fixed_window_models::scenario::{Checker, violation_found};
use fixed_window_models::{KeyedPlantedBug, KeyedScript, KeyedTarget, play_and_check_keyed};

use crate::explore::model;

const BOTH: [Checker; 2] = [Checker::Invariants, Checker::Linearizability];

fn check(script: KeyedScript) {
    let executions = model(move || play_and_check_keyed(KeyedTarget::Core, &script, &BOTH));
    eprintln!("loom: {executions} executions");
    assert!(executions > 0);
}

fn caught(script: KeyedScript, checker: Checker) -> bool {
    let target = KeyedTarget::Planted(KeyedPlantedBug::RecreateEmpty);
    violation_found(|| {
        model(move || play_and_check_keyed(target, &script, &[checker]));
    })
    .is_some()
}

#[test]
fn a_claim_races_the_sweep_that_reclaims_its_key() {
    check(KeyedScript::reclaim_race());
}

#[test]
fn a_key_is_re_created_by_a_caller_whose_reading_predates_its_reclaim() {
    check(KeyedScript::reinsert_race());
}

#[test]
fn invariants_catch_a_key_recreated_empty() {
    assert!(caught(KeyedScript::reclaim_race(), Checker::Invariants));
}

#[test]
fn linearizability_catches_a_key_recreated_empty() {
    assert!(caught(
        KeyedScript::reclaim_race(),
        Checker::Linearizability
    ));
}
