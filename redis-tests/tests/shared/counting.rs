//! The script's cluster path ("count": the counters alone, the origin an argument, each counter
//! recording its settings), run on one server with the time key, so that every boundary is
//! exact. The cluster tests run the same path through a real cluster.

use core::time::Duration;

use fixed_window::Instant;
use fixed_window_redis::{Begin, Decision, Protocol, ScriptCall, ScriptReply};

use crate::support::{TestResult, on_time_key, raw, run, server, set_time};

const T0: u64 = 5_000_000;

fn micros(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// The call of an attempt on `key`, which the server decides.
fn call(protocol: &Protocol, key: &str) -> Result<ScriptCall, Box<dyn std::error::Error>> {
    match protocol.begin(key, Instant::ZERO, Instant::ZERO)? {
        Begin::Call(call) => Ok(call),
        Begin::Decided(decision) => Err(format!("decided locally: {decision:?}").into()),
    }
}

/// A registered cluster protocol on a server whose clock reads `T0`.
fn registered(
    redis: &mut redis::Connection,
    limit: u32,
    period: Duration,
) -> Result<Protocol, Box<dyn std::error::Error>> {
    let protocol =
        Protocol::for_cluster(on_time_key("counting", limit, period)?.with_local_memory(0));
    set_time(redis, T0)?;
    let reply = run(redis, &protocol.register_call())?;
    assert_eq!(protocol.registered(Ok(&reply))?, T0);
    Ok(protocol)
}

#[test]
fn counting_without_the_configuration_key_keeps_the_registered_grid() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let protocol = registered(&mut redis, 2, micros(1_000))?;

    // Inside the third window [T0 + 2,000, T0 + 3,000).
    set_time(&mut redis, T0 + 2_400)?;
    let first = run(&mut redis, &call(&protocol, "k")?)?;
    assert_eq!(
        ScriptReply::parse(&first),
        Some(ScriptReply::Permitted {
            remaining: 1,
            now: T0 + 2_400,
            window_start: T0 + 2_000
        })
    );
    run(&mut redis, &call(&protocol, "k")?)?;
    let full = run(&mut redis, &call(&protocol, "k")?)?;
    assert_eq!(
        ScriptReply::parse(&full),
        Some(ScriptReply::Full {
            retry_after: 600,
            now: T0 + 2_400,
            window_start: T0 + 2_000
        })
    );
    // The counter records the settings that wrote it.
    let counter: String = redis::cmd("GET")
        .arg("fixed-window:counting:{k}")
        .query(&mut redis)?;
    assert_eq!(counter, format!("{:x}:2:1000:2:{T0}", T0 + 2_000));

    // At the boundary, the next window of the same grid.
    set_time(&mut redis, T0 + 3_000)?;
    let next = run(&mut redis, &call(&protocol, "k")?)?;
    assert_eq!(
        ScriptReply::parse(&next),
        Some(ScriptReply::Permitted {
            remaining: 1,
            now: T0 + 3_000,
            window_start: T0 + 3_000
        })
    );
    Ok(())
}

#[test]
fn a_counter_written_with_other_settings_is_a_conflict_and_counts_nothing() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let two = registered(&mut redis, 2, micros(1_000))?;
    set_time(&mut redis, T0 + 100)?;
    run(&mut redis, &call(&two, "k")?)?;

    // A process with a limit of 3 (as after the configuration key was lost and stored anew):
    // the counter tells it.
    let three = Protocol::for_cluster(on_time_key("counting", 3, micros(1_000))?);
    three.registered(Ok(&[2, i64::try_from(T0)?, i64::try_from(T0)?, 0]))?;
    let reply = run(&mut redis, &call(&three, "k")?)?;
    let t = Instant::ZERO;
    let Decision::Conflict(conflict) = three.finish("k", t, t, t, Ok(&reply)) else {
        return Err(format!("not a conflict: {reply:?}").into());
    };
    assert_eq!(
        (conflict.stored_limit, conflict.stored_period),
        (2, micros(1_000))
    );
    let counter: String = redis::cmd("GET")
        .arg("fixed-window:counting:{k}")
        .query(&mut redis)?;
    assert_eq!(counter, format!("{T0:x}:1:1000:2:{T0}"));
    Ok(())
}

#[test]
fn a_counter_written_on_another_grid_is_a_conflict_naming_its_origin() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let registered = registered(&mut redis, 2, micros(1_000))?;
    set_time(&mut redis, T0 + 100)?;
    run(&mut redis, &call(&registered, "k")?)?;

    // A process aligned to the Unix epoch, the same limit and period: its windows are not
    // those of the counter, so it must not count on it.
    let epoch = Protocol::for_cluster(
        on_time_key("counting", 2, micros(1_000))?.with_origin(fixed_window::Origin::UnixEpoch)?,
    );
    let reply = run(&mut redis, &call(&epoch, "k")?)?;
    let t = Instant::ZERO;
    let Decision::Conflict(conflict) = epoch.finish("k", t, t, t, Ok(&reply)) else {
        return Err(format!("not a conflict: {reply:?}").into());
    };
    assert_eq!((conflict.origin, conflict.stored_origin), (Some(0), T0));
    let counter: String = redis::cmd("GET")
        .arg("fixed-window:counting:{k}")
        .query(&mut redis)?;
    assert_eq!(counter, format!("{T0:x}:1:1000:2:{T0}"));
    Ok(())
}

#[test]
fn a_batch_counts_each_key_on_its_own_counter() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let protocol = registered(&mut redis, 1, micros(1_000))?;
    set_time(&mut redis, T0 + 10)?;
    // Two attempts on one key and one on another of its slot ("k" and "k1967" both hash to
    // slot 7629).
    let mut batch = call(&protocol, "k")?;
    batch.join(call(&protocol, "k")?).map_err(|_| "refused")?;
    batch
        .join(call(&protocol, "k1967")?)
        .map_err(|_| "refused")?;
    let reply = run(&mut redis, &batch)?;
    let outcomes: Vec<i64> = (0..3).map(|i| batch.reply_for(&reply, i)[0]).collect();
    assert_eq!(outcomes, [1, 0, 1]);
    Ok(())
}

#[test]
fn a_cluster_protocol_refuses_to_join_keys_of_different_slots() -> TestResult {
    let protocol = Protocol::for_cluster(on_time_key("counting", 1, micros(1_000))?);
    protocol.registered(Ok(&[2, 7, 7, 0]))?;
    // "a" and "b" hash to different slots (15495 and 3300); "{a}x" is tagged as "a".
    let mut batch = call(&protocol, "a")?;
    assert!(batch.join(call(&protocol, "b")?).is_err());
    assert!(batch.join(call(&protocol, "a")?).is_ok());
    assert_eq!(batch.attempts(), 2);
    // On one node, any keys share a call.
    let node = Protocol::new(on_time_key("counting", 1, micros(1_000))?);
    let mut batch = call(&node, "a")?;
    assert!(batch.join(call(&node, "b")?).is_ok());
    Ok(())
}
