//! `set_limit` racing weighted claims and drains under loom, every interleaving within the
//! preemption bound: core's plain and keyed limiters must keep the rules of changing the limit
//! (`fixed_window_models::limit_change::check`); the catalogue's limiters that read the limit
//! before the state word must be caught.

use fixed_window_broken::KeyedPlantedBug;
use fixed_window_models::PlantedBug;
use fixed_window_models::limit_change::{LimitScript, LimitTarget, play_and_check};
use fixed_window_models::scenario::violation_found;

use crate::explore::model;

fn check(target: LimitTarget, script: LimitScript) {
    let executions = model(move || play_and_check(target, &script));
    eprintln!("loom: {executions} executions");
    assert!(executions > 0);
}

fn caught(target: LimitTarget, script: LimitScript) -> Option<String> {
    violation_found(|| {
        model(move || play_and_check(target, &script));
    })
}

#[test]
fn claims_race_a_lowered_limit() {
    check(LimitTarget::Core, LimitScript::lowered_under_claims());
}

#[test]
fn a_claim_and_a_drain_race_a_raised_limit() {
    check(LimitTarget::Core, LimitScript::raised_under_a_drain());
}

#[test]
fn keyed_claims_race_a_lowered_limit() {
    check(
        LimitTarget::Keyed,
        LimitScript::keyed_lowered_under_claims(),
    );
}

#[test]
fn a_keyed_claim_and_drain_race_a_raised_limit() {
    check(LimitTarget::Keyed, LimitScript::raised_under_a_drain());
}

#[test]
fn a_limit_read_before_the_word_is_caught() {
    let found = caught(
        LimitTarget::Planted(PlantedBug::LimitReadBeforeWord),
        LimitScript::lowered_under_claims(),
    );
    let found = found.expect("loom finds the claim stacked on a lowered limit");
    eprintln!("{}", found.lines().next().unwrap_or_default());
    assert!(found.contains("above the lowered limit 2"), "{found}");
}

#[test]
fn a_keyed_limit_read_before_the_word_is_caught() {
    let found = caught(
        LimitTarget::PlantedKeyed(KeyedPlantedBug::LimitReadBeforeWord),
        LimitScript::keyed_lowered_under_claims(),
    );
    let found = found.expect("loom finds the claim stacked on a lowered limit");
    eprintln!("{}", found.lines().next().unwrap_or_default());
    assert!(found.contains("above the lowered limit 2"), "{found}");
}

#[test]
fn the_planted_limiters_pass_with_the_limit_read_after_the_word() {
    // The control: the same algorithms with another bug, which these scripts never show,
    // pass, so what the tests above catch is the order of the reads.
    check(
        LimitTarget::Planted(PlantedBug::CarryOver),
        LimitScript::lowered_under_claims(),
    );
    check(
        LimitTarget::Planted(PlantedBug::CarryOver),
        LimitScript::raised_under_a_drain(),
    );
    check(
        LimitTarget::PlantedKeyed(KeyedPlantedBug::NeverReclaims),
        LimitScript::keyed_lowered_under_claims(),
    );
}
