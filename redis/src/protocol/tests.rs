//! The protocol's decisions, call by call, without a server.

use fixed_window::RateLimiterEvent;

use super::script_call::EXPIRY_MARGIN_ARG;
use super::*;
use crate::config::EXPIRY_MARGIN_MILLIS;
use crate::event::SharedEvent;

fn us(micros: u64) -> Instant {
    Instant::from_nanos(micros * 1_000)
}

fn protocol(config: Config) -> Protocol {
    Protocol::new(config)
}

fn config(limit: u32) -> Config {
    Config::of("api", limit, Duration::from_millis(10)).unwrap_or_else(|err| panic!("{err}"))
}

#[test]
fn a_batch_groups_each_keys_attempts_and_gives_each_attempt_its_own_part() {
    let p = protocol(config(5));
    let call = |key| match p.begin(key, us(0), us(0)) {
        Ok(Begin::Call(call)) => call,
        other => panic!("expected a call, got {other:?}"),
    };
    let mut batch = call("a");
    for key in ["b", "a", "c", "b"] {
        assert!(batch.join(call(key)).is_ok());
    }
    let keys: Vec<&str> = batch.keys().skip(1).collect();
    let name = |k: &str| p.config().counter_key(k);
    assert_eq!(
        keys,
        [name("a"), name("a"), name("b"), name("b"), name("c")]
    );
    // The reply follows KEYS: a's two attempts, b's two, c's one.
    let reply: Vec<i64> = (0..5).flat_map(|i| [1, i, 70, 0]).collect();
    let parts: Vec<i64> = (0..5).map(|i| batch.reply_for(&reply, i)[1]).collect();
    // Joined a, b, a, c, b: at KEYS positions 0, 2, 1, 4, 3.
    assert_eq!(parts, [0, 2, 1, 4, 3]);
    let joined: Vec<&str> = (0..5).filter_map(|i| batch.counter_key(i)).collect();
    assert_eq!(
        joined,
        [name("a"), name("b"), name("a"), name("c"), name("b")]
    );
    // A registration or another limiter's attempt does not join.
    assert!(batch.join(p.register_call()).is_err());
    let other = protocol(config(6));
    let Ok(Begin::Call(foreign)) = other.begin("a", us(0), us(0)) else {
        panic!("nothing is remembered");
    };
    assert!(batch.join(foreign).is_err());
    assert_eq!(batch.attempts(), 5);
}

#[test]
fn a_changed_limit_is_adopted_once_newer_and_forgets_the_full_windows() {
    let p = protocol(config(2));
    let t = us(0);
    // Full under the configured limit: remembered.
    p.finish("k", t, t, t, Ok(&[0, 5_000, 0, 0]));
    assert_eq!(p.remembered(), 1);
    // The server says version 2 is a limit of 4: adopted, the memory forgotten.
    assert_eq!(
        p.finish("j", t, t, t, Ok(&[3, 4, 2, 0])),
        Decision::LimitChanged { limit: 4 }
    );
    assert_eq!((p.limit(), p.limit_version(), p.remembered()), (4, 2, 0));
    // An older version is never adopted.
    assert_eq!(p.limit_set(Ok(&[3, 9, 1, 0])), Ok(4));
    assert_eq!((p.limit(), p.limit_version()), (4, 2));
    // A reply decided under the old version says nothing of the window under the new.
    p.finish_at("k", 1, 0, (t, t, t), Ok(&[0, 5_000, 0, 0]));
    p.finish_at("k", 1, 0, (t, t, t), Ok(&[1, 0, 0, 0]));
    assert_eq!(p.remembered(), 0);
    p.finish_at("k", 1, 2, (t, t, t), Ok(&[1, 0, 0, 0]));
    assert_eq!(p.remembered(), 1);
}

#[test]
fn a_call_under_a_changed_limit_carries_its_version_and_joins_only_its_own() {
    let p = protocol(config(5));
    let Ok(Begin::Call(old)) = p.begin("a", us(0), us(0)) else {
        panic!("nothing is remembered");
    };
    assert_eq!(p.limit_set(Ok(&[3, 3, 1, 0])), Ok(3));
    let Ok(Begin::Call(mut new)) = p.begin_n("a", 2, us(0), us(0)) else {
        panic!("nothing is remembered");
    };
    assert_eq!((old.limit_version(), new.limit_version()), (0, 1));
    assert!(
        new.args()
            .eq(["10000", "3", "1000", "acquire", "1", "", "2", "1"])
    );
    assert!(new.join(old).is_err());
    // n above the new limit is refused locally, as too many.
    assert_eq!(
        p.begin_n("a", 4, us(0), us(0)),
        Ok(Begin::Decided(Decision::TooMany {
            requested: 4,
            limit: 3
        }))
    );
}

#[test]
fn the_margin_argument_matches_the_constant() {
    assert_eq!(EXPIRY_MARGIN_ARG, EXPIRY_MARGIN_MILLIS.to_string());
}

#[test]
fn a_permit_that_leaves_none_makes_the_key_known_full_until_the_window_ends() {
    let p = protocol(config(1));
    // Server: now 3,000 µs into a window that started at 0 and lasts 10,000 µs.
    let decision = p.finish("k", us(100), us(200), us(100), Ok(&[1, 0, 3_000, 0]));
    assert_eq!(
        decision,
        Decision::Permitted {
            remaining: 0,
            reset: Duration::from_micros(7_000),
            window_start: 0,
        }
    );
    assert_eq!(p.remembered(), 1);
    // 7,000 µs left on the server; locally known full until 100 + 7,000 − 7.
    assert!(matches!(
        p.begin("k", us(7_092), us(7_092)),
        Ok(Begin::Decided(Decision::Rejected { local: true, .. }))
    ));
    assert!(matches!(
        p.begin("k", us(7_093), us(7_093)),
        Ok(Begin::Call(_))
    ));
}

#[test]
fn a_full_window_is_waited_for_only_if_it_may_open_by_the_deadline() {
    let p = protocol(config(1));
    let full = [0, 5_000, 0, 0];
    // Earliest opening 0 + 5,000: a deadline there waits (until the deadline, before the
    // latest estimate 300 + 5,000).
    assert_eq!(
        p.finish("a", us(0), us(300), us(5_000), Ok(&full)),
        Decision::Wait { until: us(5_000) }
    );
    assert_eq!(
        p.finish("b", us(0), us(300), us(9_000), Ok(&full)),
        Decision::Wait { until: us(5_300) }
    );
    assert_eq!(
        p.finish("c", us(0), us(300), us(4_999), Ok(&full)),
        Decision::Rejected {
            retry_after: Duration::from_micros(5_000),
            local: false
        }
    );
}

#[test]
fn a_waiter_that_wakes_goes_to_the_server() {
    let p = protocol(config(1));
    let Decision::Wait { until } = p.finish("a", us(0), us(300), us(9_000), Ok(&[0, 5_000, 0, 0]))
    else {
        panic!("the window opens before the deadline");
    };
    assert!(matches!(p.begin("a", until, us(9_000)), Ok(Begin::Call(_))));
}

#[test]
fn the_fail_policy_decides_what_an_unavailable_server_means() {
    let cause = Unavailable::new(UnavailableKind::Connection, "refused");
    let closed = protocol(config(1));
    let open = protocol(config(1).with_fail_policy(FailPolicy::Open));
    let t = us(0);
    assert_eq!(
        closed.finish("k", t, t, t, Err(cause.clone())),
        Decision::Unavailable(cause.clone())
    );
    assert_eq!(
        open.finish("k", t, t, t, Err(cause.clone())),
        Decision::FailedOpen(cause)
    );
    // A reply the script never gives is no decision either.
    assert!(matches!(
        closed.finish("k", t, t, t, Ok(&[9, 9, 9, 9])),
        Decision::Unavailable(cause) if cause.kind() == UnavailableKind::Reply
    ));
}

#[test]
fn a_key_decided_by_its_own_limit_names_it_in_its_errors_and_its_conflict() {
    let own = config(2)
        .key_limit("paid", 7)
        .unwrap_or_else(|err| panic!("{err}"));
    let p = protocol(own);
    let t = us(0);
    assert_eq!(
        p.begin_n("paid", 8, t, t),
        Ok(Begin::Decided(Decision::TooMany {
            requested: 8,
            limit: 7
        }))
    );
    assert!(matches!(p.begin_n("paid", 7, t, t), Ok(Begin::Call(_))));
    // The key's counter was written under the limiter's limit: this key's conflict alone.
    let conflict = Conflict {
        name: "api",
        limit: 7,
        period: Duration::from_millis(10),
        origin: None,
        stored_limit: 2,
        stored_period: Duration::from_millis(10),
        stored_origin: 0,
    };
    assert_eq!(
        p.finish("paid", t, t, t, Ok(&[-2, 10_000, 2, 0])),
        Decision::Conflict(conflict)
    );
    assert!(matches!(p.begin("free", t, t), Ok(Begin::Call(_))));
    let full = p.finish("paid", t, t, t, Ok(&[0, 4_000, 1_000, 0]));
    let Conclusion::Done {
        result: Err(SharedError::Limited(RateLimiterError::Rejected { limit, .. })),
        ..
    } = p.conclude("paid", &full, t, false)
    else {
        panic!("a full window is a rejection");
    };
    assert_eq!(limit, 7);
}

#[test]
fn a_conflicting_configuration_is_reported_with_both_sides() {
    let p = protocol(config(1));
    let t = us(0);
    assert_eq!(
        p.finish("k", t, t, t, Ok(&[-1, 20_000, 3, 0])),
        Decision::Conflict(Conflict {
            name: "api",
            limit: 1,
            period: Duration::from_millis(10),
            origin: None,
            stored_limit: 3,
            stored_period: Duration::from_millis(20),
            stored_origin: 0,
        })
    );
}

#[test]
fn a_window_ending_past_the_local_clock_is_rejected_with_the_servers_wait() {
    let p = protocol(config(1));
    let near_end = Instant::MAX;
    assert_eq!(
        p.finish("k", near_end, near_end, near_end, Ok(&[0, 5, 0, 0])),
        Decision::Rejected {
            retry_after: Duration::from_micros(5),
            local: false
        }
    );
}

#[test]
fn a_configured_time_key_is_the_last_key_of_every_call() {
    let timed = config(5)
        .with_time_key("now")
        .unwrap_or_else(|err| panic!("{err}"));
    let p = protocol(timed);
    let Ok(Begin::Call(call)) = p.begin("a", us(0), us(0)) else {
        panic!("nothing is remembered");
    };
    assert_eq!(call.time_key(), Some("now"));
    assert_eq!(call.keys().last(), call.time_key());
    assert_eq!(p.register_call().time_key(), Some("now"));
    assert_eq!(protocol(config(5)).register_call().time_key(), None);
}

#[test]
fn on_a_cluster_a_call_counts_in_its_counters_slot_under_the_registered_origin() {
    let p = Protocol::for_cluster(config(5));
    assert!(p.is_cluster());
    assert!(!protocol(config(5)).is_cluster());
    // Not registered yet: nothing is sent, the fail policy answers.
    assert!(matches!(
        p.begin("a", us(0), us(0)),
        Ok(Begin::Decided(Decision::Unavailable(cause)))
            if cause.kind() == UnavailableKind::NotRegistered
    ));
    assert_eq!(p.registered(Ok(&[2, 1_000, 1_000, 0])), Ok(1_000));
    let call = |key| match p.begin(key, us(0), us(0)) {
        Ok(Begin::Call(call)) => call,
        other => panic!("expected a call, got {other:?}"),
    };
    let mut batch = call("a");
    // The counter alone, without the configuration key; the origin as an argument.
    let counter = p.config().cluster_counter_key("a");
    assert!(batch.keys().eq([counter.as_str()]));
    assert!(
        batch
            .args()
            .eq(["10000", "5", "1000", "count", "1", "1000"])
    );
    // Another attempt on the key is in its slot and joins; one on a key in another slot
    // does not.
    assert!(batch.join(call("a")).is_ok());
    assert!(batch.join(call("b")).is_err());
    assert_eq!(batch.attempts(), 2);
    assert!(batch.keys().eq([counter.as_str(), counter.as_str()]));
    // Changing the limit names the registered origin too.
    let change = p.set_limit_call(3).unwrap_or_else(|err| panic!("{err}"));
    assert!(
        change
            .args()
            .eq(["10000", "3", "1000", "limit", "0", "1000"])
    );
}

#[test]
fn a_cluster_registration_that_finds_the_limit_changed_learns_the_origin_too() {
    let p = Protocol::for_cluster(config(5));
    assert_eq!(p.registered(Ok(&[3, 8, 2, 2_000])), Ok(2_000));
    assert_eq!((p.limit(), p.limit_version()), (8, 2));
    let Ok(Begin::Call(call)) = p.begin("a", us(0), us(0)) else {
        panic!("registered, the server decides");
    };
    assert!(
        call.args()
            .eq(["10000", "8", "1000", "count", "1", "2000", "", "2"])
    );
}

#[test]
fn the_arguments_hold_an_empty_place_only_before_one_that_follows() {
    let p = protocol(config(5));
    let begin = |n| match p.begin_n("a", n, us(0), us(0)) {
        Ok(Begin::Call(call)) => call,
        other => panic!("expected a call, got {other:?}"),
    };
    // One permit under the configured limit: no origin, permits or version.
    assert!(begin(1).args().eq(["10000", "5", "1000", "acquire", "1"]));
    // Other permits: an empty origin before them.
    assert!(
        begin(2)
            .args()
            .eq(["10000", "5", "1000", "acquire", "1", "", "2"])
    );
    // A changed limit: an empty origin and empty permits before its version.
    assert_eq!(p.limit_set(Ok(&[3, 4, 1, 0])), Ok(4));
    assert!(
        begin(1)
            .args()
            .eq(["10000", "4", "1000", "acquire", "1", "", "", "1"])
    );
    // A fixed origin takes its own place, with nothing after it for one permit.
    let fixed = config(5)
        .with_origin(fixed_window::Origin::At(us(7)))
        .unwrap_or_else(|err| panic!("{err}"));
    let Ok(Begin::Call(call)) = protocol(fixed).begin("a", us(0), us(0)) else {
        panic!("nothing is remembered");
    };
    assert!(call.args().eq(["10000", "5", "1000", "acquire", "1", "7"]));
}

#[test]
fn each_attempt_of_a_batch_takes_its_own_permits() {
    let p = protocol(config(5));
    let Ok(Begin::Call(mut batch)) = p.begin_n("a", 3, us(0), us(0)) else {
        panic!("nothing is remembered");
    };
    let Ok(Begin::Call(one)) = p.begin("b", us(0), us(0)) else {
        panic!("nothing is remembered");
    };
    assert!(batch.join(one).is_ok());
    assert_eq!((batch.weight(0), batch.weight(1)), (Some(3), Some(1)));
    assert!(
        batch
            .args()
            .eq(["10000", "5", "1000", "acquire", "2", "", "3,1"])
    );
    let Ok(Begin::Call(drain)) = p.begin_drain("c", us(0)) else {
        panic!("nothing is remembered");
    };
    assert_eq!(drain.weight(0), None);
    // Single permits joined carry no permits argument; a weighed attempt joined to them
    // gives each its own.
    let one = |key| match p.begin(key, us(0), us(0)) {
        Ok(Begin::Call(call)) => call,
        other => panic!("expected a call, got {other:?}"),
    };
    let mut singles = one("a");
    assert!(singles.join(one("b")).is_ok());
    assert!(singles.args().eq(["10000", "5", "1000", "acquire", "2"]));
    assert!(singles.join(drain).is_ok());
    assert!(
        singles
            .args()
            .eq(["10000", "5", "1000", "acquire", "3", "", "1,1,r"])
    );
}

#[test]
fn a_batch_holds_at_most_max_batch_attempts() {
    let p = protocol(config(5));
    let call = || match p.begin("k", us(0), us(0)) {
        Ok(Begin::Call(call)) => call,
        other => panic!("expected a call, got {other:?}"),
    };
    let mut half = call();
    while half.attempts() < MAX_BATCH / 2 {
        assert!(half.join(call()).is_ok());
    }
    let mut batch = half.clone();
    assert!(batch.join(half).is_ok());
    assert_eq!(batch.attempts(), MAX_BATCH);
    assert!(batch.join(call()).is_err());
    assert_eq!(batch.attempts(), MAX_BATCH);
}

#[test]
fn a_window_is_remembered_full_only_when_it_has_no_permit_left() {
    let p = protocol(config(5));
    let t = us(0);
    // A permit that leaves some: nothing to remember.
    assert!(matches!(
        p.finish("k", t, t, t, Ok(&[1, 3, 3_000, 0])),
        Decision::Permitted { remaining: 3, .. }
    ));
    assert_eq!(p.remembered(), 0);
    // Too full for three permits: it may still hold fewer.
    assert!(matches!(
        p.finish_n("k", 3, (t, t, t), Ok(&[0, 5_000, 0, 0])),
        Decision::Rejected { local: false, .. }
    ));
    assert_eq!(p.remembered(), 0);
    // Full for one: remembered, and any attempt for permits is then rejected locally,
    // but one for none still asks the server.
    p.finish("k", t, t, t, Ok(&[0, 5_000, 0, 0]));
    assert_eq!(p.remembered(), 1);
    assert!(matches!(
        p.begin_n("k", 5, t, t),
        Ok(Begin::Decided(Decision::Rejected { local: true, .. }))
    ));
    assert!(matches!(p.begin_n("k", 0, t, t), Ok(Begin::Call(_))));
    // As many permits as the limit may be granted by a window: sent.
    assert!(matches!(p.begin_n("j", 5, t, t), Ok(Begin::Call(_))));
}

#[test]
fn a_deadline_already_reached_is_not_waited_for() {
    let p = protocol(config(1));
    // Sent at 0, answered at 300 with 100 µs to wait: the window may be open by then, but
    // the deadline, 300, has come.
    assert_eq!(
        p.finish("k", us(0), us(300), us(300), Ok(&[0, 100, 0, 0])),
        Decision::Rejected {
            retry_after: Duration::from_micros(100),
            local: false
        }
    );
}

#[test]
fn a_conflicting_configuration_fails_a_registration_and_a_change_of_the_limit() {
    let p = protocol(config(1));
    let conflict = Conflict {
        name: "api",
        limit: 1,
        period: Duration::from_millis(10),
        origin: None,
        stored_limit: 3,
        stored_period: Duration::from_millis(20),
        stored_origin: 0,
    };
    assert_eq!(
        p.registered(Ok(&[-1, 20_000, 3, 0])),
        Err(SharedError::Conflict(conflict))
    );
    assert_eq!(
        p.limit_set(Ok(&[-1, 20_000, 3, 0])),
        Err(SharedError::Conflict(conflict))
    );
}

#[test]
fn each_change_of_the_limit_goes_into_the_next_calls() {
    let p = protocol(config(5));
    let limit_arg = |p: &Protocol| {
        let call = p.register_call();
        call.args().nth(1).map(str::to_owned)
    };
    for (limit, version) in [(3, 1), (7, 2), (2, 3)] {
        assert_eq!(
            p.limit_set(Ok(&[3, i64::from(limit), i64::from(version), 0])),
            Ok(limit)
        );
        assert_eq!(limit_arg(&p), Some(limit.to_string()));
        assert_eq!(p.register_call().limit_version(), version);
    }
}

#[test]
fn an_attempt_the_batch_does_not_hold_gets_the_whole_reply() {
    let p = protocol(config(5));
    let call = |key: &str| match p.begin(key, us(0), us(0)) {
        Ok(Begin::Call(call)) => call,
        other => panic!("expected a call, got {other:?}"),
    };
    let mut batch = call("k0");
    for i in 1..9 {
        assert!(batch.join(call(&format!("k{i}"))).is_ok());
    }
    let reply: Vec<i64> = (0..9).flat_map(|i| [1, i, 70, 0]).collect();
    assert_eq!(batch.reply_for(&reply, 8), [1, 8, 70, 0]);
    assert_eq!(batch.reply_for(&reply, 9), reply);
}

#[test]
fn a_permit_counted_or_failed_open_lets_the_caller_proceed_and_is_told() {
    let t = us(0);
    let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    let permitted = Decision::Permitted {
        remaining: 2,
        reset: Duration::from_micros(5),
        window_start: 0,
    };
    let failed_open = Decision::FailedOpen(cause.clone());
    let rejected = Decision::Rejected {
        retry_after: Duration::from_micros(5),
        local: false,
    };
    assert!(permitted.is_permit() && failed_open.is_permit());
    assert!(!rejected.is_permit() && !Decision::Unavailable(cause.clone()).is_permit());
    assert_eq!(
        permitted.event(t, "api"),
        Some(SharedEvent::Limiter(RateLimiterEvent::Permitted {
            at: t,
            name: "api",
            remaining: 2,
        }))
    );
    assert_eq!(
        failed_open.event(t, "api"),
        Some(SharedEvent::Unavailable {
            at: t,
            name: "api",
            cause,
            failed_open: true,
        })
    );
    assert_eq!(Decision::Wait { until: t }.event(t, "api"), None);
}

#[test]
fn a_permit_knows_the_window_it_counts_in_and_a_leased_one_its_shares() {
    // Windows of 10,000 µs; a share of 8 leased at 23,000 µs in the window starting at 20,000.
    let lease = crate::Lease::new(8).unwrap_or_else(|err| panic!("{err}"));
    let p = protocol(config(100).with_lease(lease));
    let Ok(Begin::Call(call)) = p.begin("k", us(0), us(0)) else {
        panic!("no share yet: a lease call");
    };
    let leased = p.finish_lease(
        "k",
        1,
        call.limit_version(),
        (us(0), us(500), us(0)),
        Ok(&[4, 8, 23_000, 20_000]),
    );
    assert!(matches!(
        leased,
        Decision::Permitted {
            remaining: 7,
            window_start: 20_000,
            ..
        }
    ));
    // Granted in-process until the deadline, whatever the local clock reads, from the share's
    // window; and the permit the limiter makes of it says so.
    for at in [1, 6_000] {
        let Ok(Begin::Decided(decision)) = p.begin("k", us(at), us(at)) else {
            panic!("granted from the share");
        };
        assert!(
            matches!(
                decision,
                Decision::Permitted {
                    window_start: 20_000,
                    ..
                }
            ),
            "{decision:?}"
        );
        let Conclusion::Done { result, .. } = p.conclude("k", &decision, us(at), false) else {
            panic!("a permit is done");
        };
        let permit = result.unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(permit.window_start(), Some(Duration::from_micros(20_000)));
    }
    // An exact permit: its reply's window.
    let exact = protocol(config(100));
    let decision = exact.finish("k", us(0), us(1), us(0), Ok(&[1, 4, 31_000, 30_000]));
    assert!(matches!(
        decision,
        Decision::Permitted {
            window_start: 30_000,
            ..
        }
    ));
}
