//! The shared limiter's checkers on hand-made histories: the windows on the shared origin,
//! rejections pinned by their `retry_after`, carry-over, and the server's state lost by a
//! restart or a failover, judged exactly (linearizability) and by the ledger's bound.

use std::collections::BTreeMap;

use fixed_window_models::shared::{self, Attempt, Loss, Reply, SharedHistory, Step, ledger};

/// Windows of 100 µs from 1,000.
const ORIGIN: u64 = 1_000;

fn permit(key: &str, invoked: u64, remaining: u32) -> Attempt {
    Attempt::new(
        key,
        invoked,
        Some(invoked + 10),
        Reply::Permitted { remaining },
    )
}

fn rejected(key: &str, invoked: u64, retry_after: u64) -> Attempt {
    Attempt::new(
        key,
        invoked,
        Some(invoked + 10),
        Reply::Rejected {
            retry_after: Some(retry_after),
        },
    )
}

fn history(limit: u32, attempts: Vec<Attempt>, losses: Vec<Loss>) -> SharedHistory {
    SharedHistory {
        attempts,
        losses,
        ..SharedHistory::new(ORIGIN, 100, limit)
    }
}

fn both_accept(history: &SharedHistory) {
    assert!(
        shared::check(history).is_ok(),
        "{:?}",
        shared::check(history)
    );
    assert!(
        ledger::check(history).is_ok(),
        "{:?}",
        ledger::check(history)
    );
}

#[test]
fn keys_are_independent_and_windows_start_at_the_shared_origin() {
    both_accept(&history(
        1,
        vec![
            permit("a", 1_010, 0),
            permit("b", 1_020, 0),
            rejected("a", 1_030, 65),
            // The boundary at 1,100 opens the next window.
            permit("a", 1_100, 0),
        ],
        vec![],
    ));
}

#[test]
fn a_rejections_retry_after_pins_when_it_took_effect() {
    // At 1,035 the window [1,000, 1,100) has 65 µs to go: a server reading between 1,030 and
    // 1,040 can say 60 to 70, not 50.
    let ok = history(
        1,
        vec![permit("k", 1_010, 0), rejected("k", 1_030, 62)],
        vec![],
    );
    assert!(shared::check(&ok).is_ok());
    let wrong = history(
        1,
        vec![permit("k", 1_010, 0), rejected("k", 1_030, 50)],
        vec![],
    );
    assert!(shared::check(&wrong).is_err());
    // A rejection in a window with room is a false rejection.
    let empty = history(1, vec![rejected("k", 1_030, 65)], vec![]);
    assert!(shared::check(&empty).is_err());
}

#[test]
fn windows_off_the_shared_origin_are_caught() {
    // Windows aligned to 1,050 instead: two permits in [1,000, 1,100) for a limit of one.
    let misaligned = history(
        1,
        vec![permit("k", 1_020, 0), permit("k", 1_060, 0)],
        vec![],
    );
    assert!(shared::check(&misaligned).is_err());
    assert!(ledger::check(&misaligned).is_err());
}

#[test]
fn carried_over_permits_are_caught() {
    // Limit 2: one permit in the first window; the second window reports 2 used after its first.
    let carried = history(
        2,
        vec![permit("k", 1_010, 1), permit("k", 1_110, 0)],
        vec![],
    );
    assert!(shared::check(&carried).is_err());
}

#[test]
fn a_restart_forgets_the_keys_and_fixes_a_new_origin() {
    // Limit 1. The server restarts between 1,030 and 1,040; the next attempt fixes the origin
    // at 1,050: windows [1,050, 1,150), … A permit at 1,060 is explained, and so is one at
    // 1,150 (a new window), though both lie in one window of the old grid and a period apart.
    let restart = Loss::restart(1_030, 1_040, 1_050);
    let after = history(
        1,
        vec![
            permit("k", 1_010, 0),
            permit("k", 1_055, 0),
            rejected("k", 1_090, 55),
            permit("k", 1_150, 0),
        ],
        vec![restart.clone()],
    );
    both_accept(&after);
    let bounded = ledger::check(&after).unwrap_or_else(|v| panic!("{v}"));
    assert_eq!(bounded.forgotten, 1);
    // A third permit in the old window of the loss is more than the loss explains.
    let unexplained = history(
        1,
        vec![
            permit("k", 1_010, 0),
            permit("k", 1_055, 0),
            permit("k", 1_070, 0),
        ],
        vec![restart],
    );
    assert!(shared::check(&unexplained).is_err());
    let violation = ledger::check(&unexplained).unwrap_err();
    assert!(
        violation
            .message()
            .contains("more than the limit 1 plus 1 forgotten"),
        "{violation}"
    );
}

#[test]
fn a_failover_restores_what_the_replica_had() {
    // Limit 3. The primary counted three permits in [1,000, 1,100); the replica had received
    // one. After the failover, two more permits are what the replica's count allows.
    let restored = BTreeMap::from([("k".to_owned(), (1_000, 1))]);
    let failover = Loss::failover(1_040, 1_050, restored);
    let attempts = |extra| {
        let mut attempts = vec![
            permit("k", 1_000, 2),
            permit("k", 1_012, 1),
            permit("k", 1_024, 0),
            permit("k", 1_060, 1),
            permit("k", 1_072, 0),
        ];
        attempts.extend(extra);
        attempts
    };
    let explained = history(3, attempts(None), vec![failover.clone()]);
    both_accept(&explained);
    assert_eq!(ledger::check(&explained).map(|b| b.forgotten), Ok(2));
    // A sixth permit in the window: the replica's count says none is left.
    let sixth = history(
        3,
        attempts(Some(permit("k", 1_084, 0))),
        vec![failover.clone()],
    );
    assert!(shared::check(&sixth).is_err());
    assert!(ledger::check(&sixth).is_err());
    // Without the loss, the fourth and fifth permits are not explained at all.
    let no_loss = history(3, attempts(None), vec![]);
    assert!(shared::check(&no_loss).is_err());
    assert!(ledger::check(&no_loss).is_err());
}

#[test]
fn the_ledger_leaves_out_permits_it_cannot_place() {
    // A permit whose interval spans a window boundary is not counted in either window.
    let spanning = Attempt::new("k", 1_095, Some(1_105), Reply::Permitted { remaining: 0 });
    let bounded =
        ledger::check(&history(1, vec![spanning], vec![])).unwrap_or_else(|v| panic!("{v}"));
    assert_eq!((bounded.permits, bounded.unplaced), (0, 1));
}

#[test]
fn a_reading_before_a_later_windows_counter_counts_against_it() {
    // Limit 1. A permit at 1,150 (window [1,100, 1,200)); the clock steps back by 100 µs
    // between 1,160 and 1,170; at 1,180 the server reads 1,080, in the window before, where
    // the later window's counter still counts: a rejection 120 µs from the later window's
    // end, never a permit.
    let step = Step {
        from: 1_160,
        to: 1_170,
        delta: -100,
    };
    let mut stepped = history(
        1,
        vec![permit("k", 1_150, 0), rejected("k", 1_175, 120)],
        vec![],
    );
    stepped.steps.push(step);
    both_accept(&stepped);
    let mut fresh = history(
        1,
        vec![permit("k", 1_150, 0), permit("k", 1_175, 0)],
        vec![],
    );
    fresh.steps.push(step);
    assert!(shared::check(&fresh).is_err());
    // Without the step, the rejection's retry_after is from the wrong window.
    let unstepped = history(
        1,
        vec![permit("k", 1_150, 0), rejected("k", 1_175, 120)],
        vec![],
    );
    assert!(shared::check(&unstepped).is_err());
}

#[test]
fn a_step_forward_moves_readings_into_a_later_window() {
    // Limit 1, the window [1,100, 1,200) full; the clock steps forward by 100 µs: at 1,150 the
    // server reads 1,250, in the next window, with its permit free.
    let step = Step {
        from: 1_120,
        to: 1_130,
        delta: 100,
    };
    let mut stepped = history(
        1,
        vec![permit("k", 1_100, 0), permit("k", 1_150, 0)],
        vec![],
    );
    stepped.steps.push(step);
    both_accept(&stepped);
    stepped.steps.clear();
    assert!(shared::check(&stepped).is_err());
    // The ledger places a permit only where no step may fall inside it.
    let mut across = history(1, vec![permit("k", 1_115, 0)], vec![]);
    across.steps.push(step);
    assert_eq!(ledger::check(&across).map(|b| b.unplaced), Ok(1));
}

#[test]
fn after_a_step_back_the_ledger_leaves_permits_to_the_exact_check() {
    // Limit 1. Window [1,100, 1,200) takes its permit at 1,110 (reading 1,110); the next
    // window [1,200, 1,300) none yet. The clock steps forward by 100 µs (readings in
    // [1,300, 1,400): one permit at 1,215, reading 1,315), then back by 200 µs: at 1,250 the
    // server reads 1,150, in the first window, but the later window's counter counts it: full,
    // rejected. A permit there instead would break the rule; the ledger, which places permits
    // by their readings, cannot tell and leaves them out.
    let steps = [
        Step {
            from: 1_200,
            to: 1_205,
            delta: 100,
        },
        Step {
            from: 1_230,
            to: 1_235,
            delta: -200,
        },
    ];
    let mut rejected_after = history(
        1,
        vec![
            permit("k", 1_110, 0),
            permit("k", 1_215, 0),
            rejected("k", 1_250, 250),
        ],
        vec![],
    );
    rejected_after.steps.extend(steps);
    both_accept(&rejected_after);
    let mut permitted_after = history(
        1,
        vec![
            permit("k", 1_110, 0),
            permit("k", 1_215, 0),
            permit("k", 1_250, 0),
        ],
        vec![],
    );
    permitted_after.steps.extend(steps);
    assert!(shared::check(&permitted_after).is_err());
    assert_eq!(ledger::check(&permitted_after).map(|b| b.unplaced), Ok(1));
}

/// An attempt on "a" read on a coarse clock: invoked at 1,000, returned at 1,150.
fn coarse(reply: Reply) -> Attempt {
    Attempt::new("a", 1_000, Some(1_150), reply)
}

/// A rejection read on the coarse clock that pins its reading at 1,030.
fn coarse_rejection() -> Attempt {
    coarse(Reply::Rejected {
        retry_after: Some(70),
    })
}

/// Limit 1, both attempts read on the coarse clock: a rejection that pins its reading at
/// 1,030, and a permit that may have come before it. From two callers the permit fills the
/// window first; from one caller, which sent the permit after the rejection returned, the
/// rejection came with nothing counted.
#[test]
fn one_callers_attempts_take_effect_in_the_order_it_made_them() {
    let permit = coarse(Reply::Permitted { remaining: 0 });
    let two_callers = history(
        1,
        vec![coarse_rejection().by(0), permit.clone().by(1)],
        vec![],
    );
    assert!(shared::check(&two_callers).is_ok());
    let one_caller = history(1, vec![coarse_rejection().by(0), permit.by(0)], vec![]);
    let violation = shared::check(&one_caller).unwrap_err();
    assert!(
        violation.message().contains("not linearizable"),
        "{violation}"
    );
}

/// A caller's attempt whose reply was lost may take effect after its caller moved on: it does
/// not order the caller's next attempt.
#[test]
fn a_lost_attempt_does_not_order_its_callers_next_one() {
    // Sent first, the lost attempt counted and filled the window before the rejection.
    let ordered = history(
        1,
        vec![coarse(Reply::Lost).by(0), coarse_rejection().by(0)],
        vec![],
    );
    assert!(
        shared::check(&ordered).is_ok(),
        "{:?}",
        shared::check(&ordered)
    );
}
