//! The keyed models in the normal build: core's keyed limiter and the planted one on the
//! race script played on real threads, and without a race. The planted bug needs a claim to
//! land between a sweep's load and its removal, which only a checker's control of the
//! interleaving makes certain, so here it must look correct: it is caught under loom and
//! shuttle (their `keyed` tests).

use fixed_window_models::scenario::Checker;
use fixed_window_models::{KeyedPlantedBug, KeyedScript, KeyedTarget, Outcome, play_keyed};

const BOTH: [Checker; 2] = [Checker::Invariants, Checker::Linearizability];

fn sequential(mut script: KeyedScript) -> KeyedScript {
    let threads = std::mem::take(&mut script.threads);
    script.before.extend(threads.into_iter().flatten());
    script
}

#[test]
fn core_keeps_every_keys_history_valid_without_a_race() {
    let (histories, held) = play_keyed(
        KeyedTarget::Core,
        &sequential(KeyedScript::reclaim_race_with_sweeper()),
    );
    for history in &histories {
        for checker in BOTH {
            assert_eq!(checker.check(history), Ok(()), "{history:#?}");
        }
    }
    // Key 0's first call at 10 found its window-0 word reclaimed and took window 1's permit;
    // the call after was rejected.
    let outcomes: Vec<bool> = histories[0]
        .records
        .iter()
        .map(|record| matches!(record.outcome, Outcome::Permitted { .. }))
        .collect();
    assert_eq!(outcomes.iter().filter(|&&permitted| permitted).count(), 2);
    assert_eq!(held, 2);
}

#[test]
fn the_planted_keyed_limiter_is_correct_without_a_race() {
    let target = KeyedTarget::Planted(KeyedPlantedBug::RecreateEmpty);
    let (histories, _) = play_keyed(target, &sequential(KeyedScript::reclaim_race()));
    for history in &histories {
        for checker in BOTH {
            assert_eq!(checker.check(history), Ok(()), "{history:#?}");
        }
    }
}

#[test]
fn core_keeps_every_keys_history_valid_on_real_threads() {
    for _ in 0..200 {
        let (histories, _) = play_keyed(KeyedTarget::Core, &KeyedScript::stress(6));
        for history in &histories {
            for checker in BOTH {
                assert_eq!(checker.check(history), Ok(()), "{history:#?}");
            }
        }
    }
}
