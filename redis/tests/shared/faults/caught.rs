//! Every planted bug that a real server can show, run through the same plans as the production
//! limiter, and caught by the same checks. A plan's faults are drawn at random, so a bug that
//! needs one (a lost reply, a caller dying between two commands) gets a few runs, each with its
//! own seed, and must be caught in one of them.

use crate::faults::plans;
use crate::faults::planted::Flaw;
use crate::faults::run::{Plan, Subject, run};
use crate::faults::verdict::Verdict;
use crate::support::TestResult;

/// Runs allowed to catch a bug.
const RUNS: u64 = 4;

/// Runs `plan` with `flaw` until a check fails (at most [`RUNS`] runs); the verdict that caught
/// it.
fn caught(flaw: Flaw, plan: Plan) -> Result<Verdict, Box<dyn std::error::Error>> {
    for n in 0..RUNS {
        let ran = run(Plan {
            subject: Subject::Planted(flaw),
            seed: plan.seed + n,
            ..plan
        })?;
        let verdict = Verdict::of(&ran);
        if verdict.caught() {
            eprintln!("caught {flaw:?} in run {}: {verdict:?}", n + 1);
            return Ok(verdict);
        }
    }
    Err(format!("{flaw:?} was not caught in {RUNS} runs of {:?}", plan.name).into())
}

#[test]
fn incr_then_expire_as_two_commands_leaves_an_immortal_counter() -> TestResult {
    let verdict = caught(Flaw::TwoCommands, plans::crash("planted-two-commands"))?;
    assert!(!verdict.immortal.is_empty(), "{verdict:?}");
    Ok(())
}

#[test]
fn a_lost_reply_retried_counts_twice() -> TestResult {
    let verdict = caught(Flaw::RetryLostReply, plans::lost_reply("planted-retry"))?;
    assert!(verdict.linearizable.is_err(), "{verdict:?}");
    Ok(())
}

#[test]
fn the_clients_clock_instead_of_the_servers_is_caught() -> TestResult {
    let verdict = caught(Flaw::ClientClock, plans::none("planted-client-clock"))?;
    assert!(verdict.linearizable.is_err(), "{verdict:?}");
    Ok(())
}

#[test]
fn each_process_aligning_its_own_origin_is_caught() -> TestResult {
    let verdict = caught(Flaw::OwnOrigin, plans::none("planted-own-origin"))?;
    assert!(verdict.linearizable.is_err(), "{verdict:?}");
    Ok(())
}

#[test]
fn expiry_from_the_first_hit_carries_permits_over() -> TestResult {
    let verdict = caught(Flaw::FirstHitExpiry, plans::none("planted-first-hit"))?;
    // The exact check catches it; the ledger's coarser bound may too, when a grid window
    // happens to hold more than `limit` permits of two first-hit windows.
    assert!(verdict.linearizable.is_err(), "{verdict:?}");
    Ok(())
}

#[test]
fn every_planted_bug_has_a_test() {
    // The tests above, one per flaw; a new flaw without a test fails here.
    assert_eq!(Flaw::ALL.len(), 5);
}
