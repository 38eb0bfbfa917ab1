//! The production limiter under each fault: every run linearizable against the keyed window on
//! the server's clock, within the ledger's bound, with no immortal counter; and available as
//! its policy says.

use fixed_window_redis::FailPolicy;

use crate::TestResult;
use crate::plans;
use crate::run::{Ran, run};
use crate::verdict::Verdict;

fn holds(ran: &Ran) -> TestResult {
    Verdict::of(ran).holds(ran)?;
    Ok(())
}

/// Asserts that no call of `ran` was unavailable, nor permitted by failing open.
#[track_caller]
fn never_unavailable(ran: &Ran) {
    assert_eq!(
        (ran.tally.unavailable, ran.tally.failed_open),
        (0, 0),
        "{:?}",
        ran.tally
    );
}

#[test]
fn no_fault_is_linearizable_and_never_unavailable() -> TestResult {
    let ran = run(plans::none("faults-none"))?;
    holds(&ran)?;
    never_unavailable(&ran);
    assert_eq!(ran.injected.faults(), 0);
    assert!(
        ran.tally.permits > 0 && ran.tally.rejections > 0,
        "{:?}",
        ran.tally
    );
    Ok(())
}

#[test]
fn delays_keep_every_rule() -> TestResult {
    let ran = run(plans::delay("faults-delay"))?;
    holds(&ran)?;
    assert!(
        ran.injected.delayed > 0 && ran.injected.delayed_past_timeout > 0,
        "{:?}",
        ran.injected
    );
    Ok(())
}

#[test]
fn lost_replies_are_indeterminate_and_keep_every_rule() -> TestResult {
    let ran = run(plans::lost_reply("faults-lost-reply"))?;
    let (checked, _) = Verdict::of(&ran).holds(&ran)?;
    assert!(
        ran.injected.replies_lost + ran.injected.replies_stalled > 0,
        "{:?}",
        ran.injected
    );
    assert!(checked.indeterminate > 0, "{checked:?}");
    Ok(())
}

#[test]
fn resets_keep_every_rule() -> TestResult {
    let ran = run(plans::reset("faults-reset"))?;
    holds(&ran)?;
    assert!(ran.injected.resets > 0, "{:?}", ran.injected);
    Ok(())
}

#[test]
fn callers_dying_mid_call_leave_no_immortal_counter() -> TestResult {
    let ran = run(plans::crash("faults-crash"))?;
    holds(&ran)?;
    assert!(ran.tally.crashed > 0, "{:?}", ran.tally);
    Ok(())
}

#[test]
fn a_paused_server_fails_closed_and_keeps_every_rule() -> TestResult {
    let ran = run(plans::pause("faults-pause-closed", FailPolicy::Closed))?;
    holds(&ran)?;
    assert_eq!(ran.server_faults, 2);
    assert!(ran.tally.unavailable > 0, "{:?}", ran.tally);
    assert_eq!(ran.tally.failed_open, 0);
    Ok(())
}

#[test]
fn a_paused_server_fails_open_with_flagged_permits_outside_the_limit() -> TestResult {
    let ran = run(plans::pause("faults-pause-open", FailPolicy::Open))?;
    holds(&ran)?;
    assert_eq!(ran.server_faults, 2);
    assert!(ran.tally.failed_open > 0, "{:?}", ran.tally);
    assert_eq!(ran.tally.unavailable, 0);
    Ok(())
}

#[test]
fn a_restart_without_persistence_forgets_no_more_than_the_ledger_allows() -> TestResult {
    let ran = run(plans::restart("faults-restart"))?;
    let (_, bounded) = Verdict::of(&ran).holds(&ran)?;
    assert_eq!((ran.server_faults, ran.history.losses.len()), (1, 1));
    let loss = &ran.history.losses[0];
    assert!(
        ran.history
            .attempts
            .iter()
            .any(|a| a.invoked > loss.to && a.returned.is_some()),
        "no attempt after the restart"
    );
    assert!(bounded.forgotten > 0, "{bounded:?}");
    Ok(())
}

#[test]
fn a_failover_to_a_lagging_replica_forgets_no_more_than_the_ledger_allows() -> TestResult {
    let ran = run(plans::failover("faults-failover"))?;
    holds(&ran)?;
    assert_eq!((ran.server_faults, ran.history.losses.len()), (1, 1));
    assert!(ran.injected.severed > 0, "{:?}", ran.injected);
    // The replica really lagged: the primary had counted permits it lacked.
    assert!(ran.lag > 0, "the replica lacked nothing");
    eprintln!(
        "figures faults-failover: the replica lacked {} permits",
        ran.lag
    );
    Ok(())
}

#[test]
fn every_network_fault_at_once_with_local_rejections_fail_closed() -> TestResult {
    let ran = run(plans::mixed("faults-mixed-closed", FailPolicy::Closed))?;
    holds(&ran)?;
    assert!(ran.injected.faults() > 0, "{:?}", ran.injected);
    Ok(())
}

#[test]
fn every_network_fault_at_once_with_local_rejections_fail_open() -> TestResult {
    let ran = run(plans::mixed("faults-mixed-open", FailPolicy::Open))?;
    holds(&ran)?;
    assert!(ran.tally.failed_open > 0, "{:?}", ran.tally);
    Ok(())
}

#[test]
fn a_request_lost_on_an_open_connection_times_out_unavailable_never_permitted() -> TestResult {
    let ran = run(plans::lost_request(
        "faults-lost-request",
        FailPolicy::Closed,
    ))?;
    let (checked, _) = Verdict::of(&ran).holds(&ran)?;
    assert!(ran.injected.requests_swallowed > 0, "{:?}", ran.injected);
    // Fail closed: each lost request is an Unavailable, never a permit.
    assert!(ran.tally.unavailable > 0, "{:?}", ran.tally);
    assert_eq!(ran.tally.failed_open, 0, "{:?}", ran.tally);
    assert!(checked.indeterminate > 0, "{checked:?}");
    Ok(())
}

#[test]
fn the_script_cache_flushed_under_load_is_reloaded_and_keeps_every_rule() -> TestResult {
    let ran = run(plans::script_flush("faults-script-flush"))?;
    holds(&ran)?;
    assert_eq!(ran.server_faults, 3);
    // Each flush sent some client through NOSCRIPT and a reload.
    assert!(ran.noscript >= 3, "only {} NOSCRIPT replies", ran.noscript);
    never_unavailable(&ran);
    Ok(())
}

#[test]
fn the_servers_clock_stepping_forward_and_back_keeps_every_rule() -> TestResult {
    let ran = run(plans::clock_steps("faults-clock-steps"))?;
    holds(&ran)?;
    assert_eq!((ran.server_faults, ran.history.steps.len()), (2, 2));
    never_unavailable(&ran);
    Ok(())
}

#[test]
fn readings_on_window_boundaries_keep_every_rule() -> TestResult {
    let ran = run(plans::on_boundaries("faults-on-boundaries"))?;
    holds(&ran)?;
    Ok(())
}

#[test]
fn local_rejections_with_nothing_wrong_keep_every_rule() -> TestResult {
    let ran = run(plans::remembered("faults-remembered"))?;
    holds(&ran)?;
    Ok(())
}

#[test]
fn a_request_lost_on_an_open_connection_fails_open_with_flagged_permits() -> TestResult {
    let ran = run(plans::lost_request(
        "faults-lost-request-open",
        FailPolicy::Open,
    ))?;
    holds(&ran)?;
    assert!(ran.injected.requests_swallowed > 0, "{:?}", ran.injected);
    assert!(ran.tally.failed_open > 0, "{:?}", ran.tally);
    assert_eq!(ran.tally.unavailable, 0, "{:?}", ran.tally);
    Ok(())
}
