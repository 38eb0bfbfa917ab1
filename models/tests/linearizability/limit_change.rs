//! The limit-change check in the normal build: on hand-made runs (including ones it must
//! reject), and on the scripts played by real threads against core and against the planted
//! limiters, which without a race behave.

use std::collections::BTreeMap;

use fixed_window_broken::KeyedPlantedBug;
use fixed_window_models::PlantedBug;
use fixed_window_models::limit_change::{
    LimitScript, LimitTarget, Played, Seen, check, play, play_and_check,
};

fn played(seen: Vec<Vec<Seen>>, counts: &[(u64, u32)]) -> Played {
    Played {
        seen,
        counts: counts
            .iter()
            .map(|&(key, used)| (key, Some(used)))
            .collect::<BTreeMap<_, _>>(),
    }
}

fn permitted(remaining: u32) -> Seen {
    Seen::Permitted { remaining }
}

#[test]
fn claims_before_or_after_a_lowering_pass() {
    let script = LimitScript::lowered_under_claims();
    // Both under 12; one under 12 and one refused under 2; one under 2 and one refused.
    for seen in [
        vec![vec![permitted(10)], vec![permitted(8)], vec![Seen::Done]],
        vec![vec![permitted(10)], vec![Seen::Refused], vec![Seen::Done]],
        vec![vec![Seen::Refused], vec![permitted(0)], vec![Seen::Done]],
    ] {
        let used = if seen[1] == vec![permitted(8)] { 4 } else { 2 };
        assert_eq!(check(&script, &played(seen, &[(0, used)])), Ok(()));
    }
}

#[test]
fn a_claim_stacked_on_a_lowered_limit_is_caught() {
    let script = LimitScript::lowered_under_claims();
    let run = played(
        vec![vec![permitted(8)], vec![permitted(0)], vec![Seen::Done]],
        &[(0, 4)],
    );
    let violation = check(&script, &run).unwrap_err().to_string();
    assert!(
        violation.contains("above the lowered limit 2"),
        "{violation}"
    );
}

#[test]
fn units_counted_twice_are_caught() {
    let script = LimitScript::lowered_under_claims();
    let run = played(
        vec![vec![permitted(10)], vec![permitted(10)], vec![Seen::Done]],
        &[(0, 2)],
    );
    let violation = check(&script, &run).unwrap_err().to_string();
    assert!(violation.contains("counted the same units"), "{violation}");
}

#[test]
fn a_count_no_order_explains_is_caught() {
    // Each permit alone is possible, but the count left says one of them was not counted.
    let script = LimitScript::lowered_under_claims();
    let run = played(
        vec![vec![permitted(10)], vec![permitted(8)], vec![Seen::Done]],
        &[(0, 2)],
    );
    let violation = check(&script, &run).unwrap_err().to_string();
    assert!(violation.contains("no order of the steps"), "{violation}");
}

#[test]
fn a_drain_that_left_room_is_caught() {
    // Raised from 2 to 12: a claim of three granted, leaving 9, came after the raise, onto
    // an empty window (a drain before it would have left 2 or 12 there). So the drain came
    // after it, under 12, and left 12: a count of 3 read at the end says it took nothing.
    let script = LimitScript::raised_under_a_drain();
    let run = played(
        vec![vec![permitted(9)], vec![Seen::Done], vec![Seen::Done]],
        &[(0, 3)],
    );
    assert!(check(&script, &run).is_err());
    let run = played(
        vec![vec![permitted(9)], vec![Seen::Done], vec![Seen::Done]],
        &[(0, 12)],
    );
    assert_eq!(check(&script, &run), Ok(()));
}

#[test]
fn core_and_the_planted_limiters_pass_on_real_threads() {
    // Real threads race little at this size; what a race would show is loom's and shuttle's
    // to find. Without one, the planted limiters behave.
    let plain = [
        LimitTarget::Core,
        LimitTarget::Planted(PlantedBug::LimitReadBeforeWord),
    ];
    let keyed = [
        LimitTarget::Keyed,
        LimitTarget::PlantedKeyed(KeyedPlantedBug::LimitReadBeforeWord),
    ];
    for _ in 0..50 {
        for target in plain {
            play_and_check(target, &LimitScript::lowered_under_claims());
            play_and_check(target, &LimitScript::raised_under_a_drain());
            play_and_check(target, &LimitScript::stress(1));
        }
        for target in keyed {
            play_and_check(target, &LimitScript::keyed_lowered_under_claims());
            play_and_check(target, &LimitScript::stress(2));
        }
    }
}

#[test]
fn the_count_is_read_at_the_end() {
    let run = play(LimitTarget::Core, &LimitScript::stress(1));
    let used = run.counts[&0].expect("below the probe");
    // The drain left the window at least at the limit it read, the lowest being 3.
    assert!(used >= 3, "{run:?}");
}
