//! The oracle catches each planted limiter of the catalogue (`fixed-window-broken`),
//! run through the same simulator, on a scenario the real limiter passes.

use fixed_window_sim::{Invariant, PlantedBug, ScenarioId, Target};

use crate::{rules_broken, violations};

/// Seeds searched for a scenario that exposes a bug; every bug shows within the first few.
const SEEDS: u64 = 200;

fn assert_caught(bug: PlantedBug, expected: Invariant) {
    let found = (0..SEEDS).map(ScenarioId::seed).find(|id| {
        let (_, found) = violations(id, Target::Planted(bug));
        rules_broken(&found).contains(&expected)
    });
    let id = found.unwrap_or_else(|| panic!("{bug:?} went unnoticed over {SEEDS} seeds"));
    let (_, real) = violations(&id, Target::Real);
    assert!(real.is_empty(), "the real limiter fails {id} too: {real:?}");
}

#[test]
fn carry_over_is_caught() {
    assert_caught(PlantedBug::CarryOver, Invariant::CarryOver);
    assert_caught(PlantedBug::CarryOver, Invariant::WindowLimit);
}

#[test]
fn boundary_off_by_one_is_caught() {
    assert_caught(PlantedBug::BoundaryOffByOne, Invariant::FalseRejection);
}

#[test]
fn advance_from_now_is_caught() {
    assert_caught(PlantedBug::AdvanceFromNow, Invariant::Alignment);
}

#[test]
fn lost_update_is_caught() {
    assert_caught(PlantedBug::LostUpdate, Invariant::WindowLimit);
}

#[test]
fn deadline_overshoot_is_caught() {
    assert_caught(PlantedBug::DeadlineOvershoot, Invariant::Deadline);
}

#[test]
fn overflow_panic_is_caught() {
    assert_caught(PlantedBug::OverflowPanic, Invariant::Panic);
}

#[test]
fn a_weight_counted_as_one_is_caught() {
    assert_caught(PlantedBug::WeightCountedAsOne, Invariant::Events);
    assert_caught(PlantedBug::WeightCountedAsOne, Invariant::WindowLimit);
}

#[test]
fn a_drain_that_leaves_one_is_caught() {
    assert_caught(PlantedBug::DrainLeavesOne, Invariant::WindowLimit);
}

#[test]
fn an_epoch_origin_off_by_one_period_is_caught() {
    assert_caught(PlantedBug::EpochOffByOnePeriod, Invariant::FalseRejection);
}

#[test]
fn an_epoch_origin_at_the_next_boundary_in_a_young_process_is_caught() {
    assert_caught(
        PlantedBug::EpochNextBoundaryWhenYoung,
        Invariant::FalseRejection,
    );
}

#[test]
fn a_limit_change_applied_to_the_past_window_is_caught() {
    assert_caught(
        PlantedBug::LimitChangeAppliedToPastWindow,
        Invariant::WindowLimit,
    );
}

#[test]
fn a_peek_from_a_stale_window_is_caught() {
    assert_caught(PlantedBug::PeekFromStaleWindow, Invariant::Events);
}

#[test]
fn false_rejection_is_caught() {
    assert_caught(PlantedBug::FalseRejection, Invariant::FalseRejection);
}

#[test]
fn overcount_is_caught() {
    assert_caught(PlantedBug::Overcount, Invariant::WindowLimit);
}

#[test]
fn giving_up_on_a_lost_race_is_caught() {
    assert_caught(PlantedBug::GiveUpOnLostRace, Invariant::FalseRejection);
}

#[test]
fn every_planted_bug_of_the_catalogue_is_caught() {
    // The simulator sees races (its asynchronous path yields between a racing bug's read and
    // write), the end of the timeline (its clocks reach `Instant::MAX`) and limit changes
    // (between callers' steps). A limit read before the state word shows only to a change
    // landing between the two loads of one attempt, which the models' interleavings make
    // (`cargo xtask models` has it caught) and the simulator's events never do.
    for bug in PlantedBug::ALL
        .into_iter()
        .filter(|&bug| bug != PlantedBug::LimitReadBeforeWord)
    {
        let found = (0..SEEDS).map(ScenarioId::seed).find(|id| {
            let (_, found) = violations(id, Target::Planted(bug));
            !found.is_empty() && violations(id, Target::Real).1.is_empty()
        });
        assert!(found.is_some(), "{bug:?} went unnoticed over {SEEDS} seeds");
    }
}
