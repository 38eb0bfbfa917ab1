//! The sequential script against core (which must pass) and against every planted limiter of
//! the catalogue whose bug one caller can show (which both checkers must catch). The bugs that
//! need a race are caught by the same checkers on shuttle's and loom's histories
//! (`cargo xtask models`).

use fixed_window_models::scenario::{Checker, Script, play};
use fixed_window_models::{PlantedBug, Target};

fn verdicts(target: Target) -> [bool; 2] {
    let history = play(target, &Script::sequential());
    [Checker::Invariants, Checker::Linearizability].map(|checker| checker.check(&history).is_ok())
}

/// Whether one caller with the models' small numbers can show `bug`.
///
/// Not a racing bug: alone, it behaves. Not one of the end of the timeline: the models' clocks
/// stay near zero. And not a wait past the deadline: a history does not say when a waiting call
/// read the clock to fix its deadline, so a permit that came late cannot be told from one that
/// came in time, and the script's one waiting call has its next window within reach anyway.
/// Nor a bug of weighted calls or drains, of windows aligned to Unix time, or of a limit
/// changed while callers claim, or of a peek, which the script does not make.
fn shows_alone(bug: PlantedBug) -> bool {
    !bug.races_only()
        && !bug.extremes_only()
        && !bug.weighted_or_drained_only()
        && !bug.unix_epoch_only()
        && !bug.limit_change_only()
        && !bug.peek_only()
        && bug != PlantedBug::DeadlineOvershoot
}

#[test]
fn core_passes_the_sequential_script() {
    assert_eq!(verdicts(Target::Core), [true, true]);
}

#[test]
fn both_checkers_catch_every_planted_bug_one_caller_shows() {
    let shown: Vec<PlantedBug> = PlantedBug::ALL
        .into_iter()
        .filter(|&f| shows_alone(f))
        .collect();
    assert_eq!(
        shown,
        [
            PlantedBug::CarryOver,
            PlantedBug::BoundaryOffByOne,
            PlantedBug::AdvanceFromNow,
            PlantedBug::FalseRejection
        ]
    );
    for bug in shown {
        assert_eq!(verdicts(Target::Planted(bug)), [false, false], "{bug:?}");
    }
}

#[test]
fn the_other_planted_bugs_pass_without_a_race() {
    // Their bug needs two callers between a read and a write, or numbers near the end of the
    // timeline, or a judge of late permits; alone, with small numbers, they behave, which is
    // why the racing ones are judged on shuttle's and loom's histories.
    for bug in PlantedBug::ALL.into_iter().filter(|&f| !shows_alone(f)) {
        assert_eq!(verdicts(Target::Planted(bug)), [true, true], "{bug:?}");
    }
}
