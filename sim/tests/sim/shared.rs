//! The shared limiter under simulation: the real client and script pass, every planted bug
//! is caught.

use fixed_window_sim::shared::{Plant, SharedScenario, check_shared, run_shared};
use fixed_window_sim::{Invariant, ScenarioId};

#[test]
fn the_real_shared_limiter_breaks_no_rule() {
    let mut failures = Vec::new();
    for seed in 0..3000 {
        let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
        let run = run_shared(&scenario, None);
        let violations = check_shared(&scenario, &run);
        if !violations.is_empty() {
            failures.push((seed, violations));
        }
    }
    for (seed, violations) in failures.iter().take(20) {
        eprintln!(
            "seed {seed}: {} violations, first: {}",
            violations.len(),
            violations[0]
        );
    }
    assert!(
        failures.is_empty(),
        "{} of 3000 scenarios failed",
        failures.len()
    );
}

/// Seeds searched for a scenario that exposes a planted bug.
const PLANT_SEEDS: u64 = 400;

fn assert_caught(plant: Plant, expected: Invariant) {
    let found = (0..PLANT_SEEDS).find(|&seed| {
        let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
        let run = run_shared(&scenario, Some(plant));
        check_shared(&scenario, &run)
            .iter()
            .any(|v| v.invariant == expected)
    });
    let seed = found.unwrap_or_else(|| panic!("{plant} went unnoticed over {PLANT_SEEDS} seeds"));
    let scenario = SharedScenario::generate(&ScenarioId::seed(seed));
    let real = check_shared(&scenario, &run_shared(&scenario, None));
    assert!(
        real.is_empty(),
        "the real limiter fails seed {seed} too: {real:?}"
    );
}

#[test]
fn two_commands_leave_an_immortal_key() {
    assert_caught(Plant::TwoCommands, Invariant::Expiry);
}

#[test]
fn the_clients_clock_is_caught() {
    assert_caught(Plant::ClientClock, Invariant::Events);
    assert_caught(Plant::ClientClock, Invariant::WindowLimit);
}

#[test]
fn each_process_its_own_origin_is_caught() {
    assert_caught(Plant::OwnOrigin, Invariant::Alignment);
}

#[test]
fn a_lost_reply_retried_is_caught() {
    assert_caught(Plant::RetryLostReply, Invariant::DoubleCount);
}

#[test]
fn expiry_from_the_first_hit_is_caught() {
    assert_caught(Plant::FirstHitExpiry, Invariant::CarryOver);
}

#[test]
fn the_scripts_boundary_off_by_one_is_caught() {
    // The instant a window starts counts against the previous window's permits, on the
    // previous window's start.
    assert_caught(Plant::BoundaryOffByOne, Invariant::CarryOver);
    assert_caught(Plant::BoundaryOffByOne, Invariant::Alignment);
}

#[test]
fn memory_past_the_windows_end_is_caught() {
    assert_caught(Plant::MemoryPastEnd, Invariant::FalseRejection);
}
