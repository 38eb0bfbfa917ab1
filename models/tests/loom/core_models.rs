//! Core under loom: every explored interleaving must keep the invariants and be linearizable.

use fixed_window::Backoff;
use fixed_window_models::Target;
use fixed_window_models::scenario::{Checker, Script, play_and_check};

use crate::explore::model;

const BOTH: [Checker; 2] = [Checker::Invariants, Checker::Linearizability];

fn check(target: Target, script: Script) {
    let executions = model(move || play_and_check(target, &script, &BOTH));
    eprintln!("loom: {executions} executions");
    assert!(executions > 0);
}

#[test]
fn two_callers_race_for_the_last_permit() {
    check(Target::Core, Script::claim_race(2, 1, 10));
}

#[test]
fn three_callers_race_for_two_permits() {
    check(Target::Core, Script::claim_race(3, 2, 10));
}

#[test]
fn two_callers_race_on_the_wide_state_word() {
    // A one-nanosecond period from the origin needs the 128-bit word (under loom, its mutex
    // stand-in).
    check(Target::Core, Script::claim_race(2, 1, 1));
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
fn the_retry_loop_spins_then_yields() {
    // Three callers, three permits: a caller can lose the race twice, spinning after the first
    // loss and yielding after the second, which loom needs to run the winner.
    check(
        Target::CoreWithBackoff(Backoff::new(1)),
        Script::claim_race(3, 3, 10),
    );
}

#[test]
fn a_young_processs_first_window_ends_on_the_grid_while_a_claim_races_the_clock() {
    check(Target::Core, Script::young_first_window());
}
