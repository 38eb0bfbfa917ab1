//! Every planted bug that a real server can show, run through the same plans as the production
//! limiter, and caught by the same checks. A plan's faults are drawn at random, so a bug that
//! needs one (a lost reply, a caller dying between two commands) gets a few runs, each with its
//! own seed, and must be caught in one of them.

use crate::TestResult;
use crate::plans;
use crate::planted::PlantedBug;
use crate::run::{Plan, Subject, run};
use crate::verdict::Verdict;

/// Runs allowed to catch a bug.
const RUNS: u64 = 8;

/// Runs `plan` with `bug` until the checks `by` expects fail (at most [`RUNS`] runs); the
/// verdict that caught it.
fn caught(
    bug: PlantedBug,
    plan: Plan,
    by: impl Fn(&Verdict) -> bool,
) -> Result<Verdict, Box<dyn std::error::Error>> {
    for n in 0..RUNS {
        let ran = run(Plan {
            subject: Subject::Planted(bug),
            seed: plan.seed + n,
            ..plan
        })?;
        let verdict = Verdict::of(&ran);
        if by(&verdict) {
            eprintln!("caught {bug:?} in run {}: {verdict:?}", n + 1);
            return Ok(verdict);
        }
    }
    Err(format!("{bug:?} was not caught in {RUNS} runs of {:?}", plan.name).into())
}

#[test]
fn incr_then_expire_as_two_commands_leaves_an_immortal_counter() -> TestResult {
    let immortal = |v: &Verdict| !v.immortal.is_empty();
    caught(
        PlantedBug::TwoCommands,
        plans::crash("planted-two-commands"),
        immortal,
    )?;
    Ok(())
}

#[test]
fn a_lost_reply_retried_counts_twice() -> TestResult {
    let not_linearizable = |v: &Verdict| v.linearizable.is_err();
    caught(
        PlantedBug::RetryLostReply,
        plans::lost_reply("planted-retry"),
        not_linearizable,
    )?;
    Ok(())
}

#[test]
fn the_clients_clock_instead_of_the_servers_is_caught() -> TestResult {
    // Skewed replicas count in windows of their own: more than `limit` in the server's.
    let over_the_limit = |v: &Verdict| v.linearizable.is_err() && v.ledger.is_err();
    caught(
        PlantedBug::ClientClock,
        plans::none("planted-client-clock"),
        over_the_limit,
    )?;
    Ok(())
}

#[test]
fn each_process_aligning_its_own_origin_is_caught() -> TestResult {
    let over_the_limit = |v: &Verdict| v.linearizable.is_err() && v.ledger.is_err();
    caught(
        PlantedBug::OwnOrigin,
        plans::none("planted-own-origin"),
        over_the_limit,
    )?;
    Ok(())
}

#[test]
fn expiry_from_the_first_hit_carries_permits_over() -> TestResult {
    // The exact check catches it; the ledger's coarser bound may too, when a grid window
    // happens to hold more than `limit` permits of two first-hit windows.
    let not_linearizable = |v: &Verdict| v.linearizable.is_err();
    caught(
        PlantedBug::FirstHitExpiry,
        plans::none("planted-first-hit"),
        not_linearizable,
    )?;
    Ok(())
}

#[test]
fn the_scripts_boundary_off_by_one_is_caught() -> TestResult {
    // Readings on window boundaries: the first microsecond of a window counted in the previous
    // one shows as a permit or rejection the keyed window cannot explain.
    let not_linearizable = |v: &Verdict| v.linearizable.is_err();
    caught(
        PlantedBug::BoundaryOffByOne,
        plans::on_boundaries("planted-boundary"),
        not_linearizable,
    )?;
    Ok(())
}

#[test]
fn memory_of_a_full_window_past_its_end_is_caught() -> TestResult {
    // Every replica rejects locally into the next window, which nobody fills meanwhile: a
    // rejection in a window with room.
    let not_linearizable = |v: &Verdict| v.linearizable.is_err();
    caught(
        PlantedBug::MemoryPastEnd,
        plans::remembered("planted-memory-past-end"),
        not_linearizable,
    )?;
    Ok(())
}

#[test]
fn a_later_windows_counter_ignored_after_the_clock_steps_back_is_caught() -> TestResult {
    let not_linearizable = |v: &Verdict| v.linearizable.is_err();
    caught(
        PlantedBug::LaterWindowIgnored,
        plans::clock_steps("planted-later-window"),
        not_linearizable,
    )?;
    Ok(())
}

#[test]
fn each_planted_script_differs_from_the_production_one_only_by_its_bug() {
    use fixed_window_redis::SCRIPT;

    let counter_write =
        "redis.call('SET', key, string.format('%x:%x', start, used) .. own_mark .. tail";
    for bug in PlantedBug::ALL {
        let script = bug.script();
        match bug {
            // The client's step is the bug; the script is production's.
            PlantedBug::RetryLostReply | PlantedBug::OwnOrigin | PlantedBug::MemoryPastEnd => {
                assert_eq!(script, SCRIPT);
            }
            PlantedBug::BoundaryOffByOne | PlantedBug::LaterWindowIgnored => {
                assert_ne!(script, SCRIPT);
            }
            PlantedBug::TwoCommands => {
                assert!(script.contains(&format!("{counter_write})")));
                assert!(!script.contains("'PX', ttl"));
            }
            PlantedBug::ClientClock => {
                assert!(script.contains("now = tonumber(ARGV[6])"));
                assert!(!script.contains("redis.call('TIME')"));
            }
            PlantedBug::FirstHitExpiry => {
                // The naive count returns before the production counter is read.
                let naive = script.find("'PX', math.ceil(period / 1000)");
                let counter = script.find("state = redis.call('GET', key)");
                assert!(naive.is_some() && naive < counter, "{script}");
            }
        }
        // Everything up to the counting is production's: the configuration and the origin.
        let registration = SCRIPT
            .find("if ARGV[4] == 'register'")
            .unwrap_or_else(|| panic!("the script no longer registers"));
        let shared_part = &SCRIPT[SCRIPT.find("local origin").unwrap_or(0)..registration];
        assert!(script.contains(shared_part), "{bug:?}");
    }
}
