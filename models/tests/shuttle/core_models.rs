//! Core under shuttle: every schedule must keep the invariants and be linearizable.

use fixed_window::Backoff;
use fixed_window_models::scenario::{Checker, Script, play, play_and_check};
use fixed_window_models::{Outcome, Target};

use crate::explore::{Budget, explore};

const BOTH: [Checker; 2] = [Checker::Invariants, Checker::Linearizability];

fn check(target: Target, script: Script) {
    let schedules = explore(Budget::from_env(), move || {
        play_and_check(target, &script, &BOTH);
    });
    eprintln!("shuttle: {schedules} schedules");
    assert!(schedules > 0);
}

#[test]
fn eight_callers_race_while_the_clock_crosses_boundaries() {
    check(Target::Core, Script::stress(8));
}

#[test]
fn the_retry_loop_spins_then_yields_under_contention() {
    check(Target::CoreWithBackoff(Backoff::new(1)), Script::stress(8));
}

#[test]
fn every_caller_gets_a_permit_when_fewer_than_the_limit_race() {
    explore(Budget::from_env(), || {
        let history = play(Target::Core, &Script::fewer_than_limit(8));
        for checker in BOTH {
            if let Err(violation) = checker.check(&history) {
                panic!("{violation}\nhistory: {history:#?}");
            }
        }
        if let Some(record) = history
            .records
            .iter()
            .find(|record| !matches!(record.outcome, Outcome::Permitted { .. }))
        {
            panic!("violation: a permit was lost: fewer callers than the limit, yet {record:?}");
        }
    });
}

#[test]
fn the_wide_state_word_keeps_the_limit() {
    // A one-nanosecond period from the origin needs every bit of the window index, so core
    // uses its 128-bit state word (under shuttle, its mutex stand-in).
    check(Target::Core, Script::claim_race(8, 3, 1));
}

#[test]
fn the_window_advance_races_a_claim() {
    check(Target::Core, Script::advance_race());
}

#[test]
fn a_waiter_races_a_claimer_at_the_boundary() {
    check(Target::Core, Script::boundary_waiter());
}

#[test]
fn a_young_processs_first_window_ends_on_the_grid_while_a_claim_races_the_clock() {
    check(Target::Core, Script::young_first_window());
}
