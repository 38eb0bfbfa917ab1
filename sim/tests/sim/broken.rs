//! The oracle catches each deliberately broken limiter of the catalogue (`fixed-window-broken`),
//! run through the same simulator, on a scenario the real limiter passes.

use fixed_window_sim::{Flaw, Invariant, ScenarioId, Target};

use crate::{broken, violations};

/// Seeds searched for a scenario that exposes a flaw; every flaw shows within the first few.
const SEEDS: u64 = 200;

fn assert_caught(flaw: Flaw, expected: Invariant) {
    let found = (0..SEEDS).map(ScenarioId::seed).find(|id| {
        let (_, found) = violations(id, Target::Broken(flaw));
        broken(&found).contains(&expected)
    });
    let id = found.unwrap_or_else(|| panic!("{flaw:?} went unnoticed over {SEEDS} seeds"));
    let (_, real) = violations(&id, Target::Real);
    assert!(real.is_empty(), "the real limiter fails {id} too: {real:?}");
}

#[test]
fn carry_over_is_caught() {
    assert_caught(Flaw::CarryOver, Invariant::CarryOver);
    assert_caught(Flaw::CarryOver, Invariant::WindowLimit);
}

#[test]
fn boundary_off_by_one_is_caught() {
    assert_caught(Flaw::BoundaryOffByOne, Invariant::FalseRejection);
}

#[test]
fn advance_from_now_is_caught() {
    assert_caught(Flaw::AdvanceFromNow, Invariant::Alignment);
}

#[test]
fn lost_update_is_caught() {
    assert_caught(Flaw::LostUpdate, Invariant::WindowLimit);
}

#[test]
fn deadline_overshoot_is_caught() {
    assert_caught(Flaw::DeadlineOvershoot, Invariant::Deadline);
}

#[test]
fn overflow_panic_is_caught() {
    assert_caught(Flaw::OverflowPanic, Invariant::Panic);
}

#[test]
fn false_rejection_is_caught() {
    assert_caught(Flaw::FalseRejection, Invariant::FalseRejection);
}

#[test]
fn overcount_is_caught() {
    assert_caught(Flaw::Overcount, Invariant::WindowLimit);
}

#[test]
fn giving_up_on_a_lost_race_is_caught() {
    assert_caught(Flaw::GiveUpOnLostRace, Invariant::FalseRejection);
}

#[test]
fn every_flaw_of_the_catalogue_is_caught() {
    // The simulator sees races (its asynchronous path yields between a racing flaw's read and
    // write) and the end of the timeline (its clocks reach `Instant::MAX`), so it skips none.
    for flaw in Flaw::ALL {
        let found = (0..SEEDS).map(ScenarioId::seed).find(|id| {
            let (_, found) = violations(id, Target::Broken(flaw));
            !found.is_empty() && violations(id, Target::Real).1.is_empty()
        });
        assert!(
            found.is_some(),
            "{flaw:?} went unnoticed over {SEEDS} seeds"
        );
    }
}
