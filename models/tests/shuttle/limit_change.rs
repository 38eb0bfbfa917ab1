//! `set_limit` racing weighted claims and drains under shuttle's random and PCT schedulers:
//! core's plain and keyed limiters must keep the rules of changing the limit
//! (`fixed_window_models::limit_change::check`); the catalogue's limiters that read the limit
//! before the state word must be caught.

use fixed_window_broken::KeyedPlantedBug;
use fixed_window_models::PlantedBug;
use fixed_window_models::limit_change::{LimitScript, LimitTarget, play_and_check};
use fixed_window_models::scenario::violation_found;

use crate::explore::{Budget, explore};

fn check(target: LimitTarget, script: LimitScript) {
    let schedules = explore(Budget::from_env(), move || play_and_check(target, &script));
    eprintln!("shuttle: {schedules} schedules");
    assert!(schedules > 0);
}

fn caught(target: LimitTarget, script: LimitScript) -> Option<String> {
    violation_found(|| {
        explore(Budget::fixed(), move || play_and_check(target, &script));
    })
}

#[test]
fn weighted_claims_and_a_drain_race_a_lowered_then_raised_limit() {
    check(LimitTarget::Core, LimitScript::stress(1));
}

#[test]
fn keyed_claims_and_a_drain_on_two_keys_race_a_lowered_then_raised_limit() {
    check(LimitTarget::Keyed, LimitScript::stress(2));
}

#[test]
fn a_limit_read_before_the_word_is_caught() {
    let found = caught(
        LimitTarget::Planted(PlantedBug::LimitReadBeforeWord),
        LimitScript::stress(1),
    );
    assert!(
        found.is_some(),
        "shuttle misses a limit read before the word"
    );
}

#[test]
fn a_keyed_limit_read_before_the_word_is_caught() {
    let found = caught(
        LimitTarget::PlantedKeyed(KeyedPlantedBug::LimitReadBeforeWord),
        LimitScript::stress(2),
    );
    assert!(
        found.is_some(),
        "shuttle misses a keyed limit read before the word"
    );
}

#[test]
fn the_planted_limiters_pass_with_the_limit_read_after_the_word() {
    // The control: the same algorithms with a bug these scripts never show pass.
    check(
        LimitTarget::Planted(PlantedBug::CarryOver),
        LimitScript::stress(1),
    );
    check(
        LimitTarget::PlantedKeyed(KeyedPlantedBug::NeverReclaims),
        LimitScript::stress(2),
    );
}
