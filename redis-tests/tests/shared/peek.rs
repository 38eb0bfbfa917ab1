//! Peeking on a real server: the answer is the shared window's, and a peek counts nothing,
//! writes nothing and registers nothing.

use core::time::Duration;

use fixed_window::Instant;
use fixed_window_redis::{Config, FailPolicy, PeekBegin, Protocol, SharedError, UnavailableKind};
use fixed_window_redis_test::{RedisServer, ServerOptions};

use crate::support::{HOUR, TestResult, connect, on_time_key, raw, run, server, set_time};

const T0: u64 = 4_000_000;

/// How many keys the server holds.
fn keys(redis: &mut redis::Connection) -> Result<u64, Box<dyn std::error::Error>> {
    Ok(redis::cmd("DBSIZE").query(redis)?)
}

#[test]
fn a_peek_after_permits_answers_what_is_left_and_when_the_window_ends() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0 + 2_500)?;
    let config = on_time_key("peek", 5, Duration::from_millis(10))?;
    let a = connect(&server, config.clone())?;
    let b = connect(&server, config)?;
    assert_eq!(b.peek("k")?.remaining(), 5);
    assert_eq!(a.try_acquire_n("k", 2)?.remaining(), Some(3));
    // The first window is [T0 + 2,500, T0 + 12,500): 4 ms in, 6 ms to go.
    set_time(&mut redis, T0 + 6_500)?;
    let peek = b.peek("k")?;
    assert_eq!(
        (peek.remaining(), peek.limit(), peek.resets_in()),
        (3, 5, Duration::from_millis(6))
    );
    // Another key is whole; in the next window, so is this one, though nothing counted there.
    assert_eq!(b.peek("j")?.remaining(), 5);
    set_time(&mut redis, T0 + 12_500)?;
    let peek = b.peek("k")?;
    assert_eq!(
        (peek.remaining(), peek.resets_in()),
        (5, Duration::from_millis(10))
    );
    Ok(())
}

#[test]
fn peeks_consume_nothing() -> TestResult {
    let server = server()?;
    let config = Config::of("peek-free", 4, HOUR)?.with_local_memory(0);
    let a = connect(&server, config.clone())?;
    let b = connect(&server, config)?;
    for _ in 0..25 {
        assert_eq!(b.peek("k")?.remaining(), 4);
    }
    for left in (0..4).rev() {
        assert_eq!(a.try_acquire("k")?.remaining(), Some(left));
        assert_eq!(b.peek("k")?.remaining(), left);
    }
    assert!(matches!(a.try_acquire("k"), Err(SharedError::Limited(_))));
    assert_eq!(
        futures::executor::block_on(b.peek_async("k"))?.remaining(),
        0
    );
    Ok(())
}

#[test]
fn a_peek_registers_nothing_and_writes_no_key() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let limiter = connect(&server, Config::of("peek-fresh", 3, HOUR)?)?;
    // A fresh server: the limiter's registration and everything else gone.
    redis::cmd("FLUSHALL").exec(&mut redis)?;
    let peek = limiter.peek("k")?;
    assert_eq!((peek.remaining(), peek.limit()), (3, 3));
    assert!(peek.resets_in() <= HOUR);
    assert_eq!(keys(&mut redis)?, 0, "a peek wrote a key");
    // A counter of an ended window, or under an older limit, is not rewritten either.
    limiter.try_acquire("k")?;
    let before: Vec<(String, String)> = redis::cmd("KEYS")
        .arg("*")
        .query::<Vec<String>>(&mut redis)?
        .into_iter()
        .map(|key| {
            let value: String = redis::cmd("GET")
                .arg(&key)
                .query(&mut redis)
                .unwrap_or_default();
            (key, value)
        })
        .collect();
    assert_eq!(limiter.peek("k")?.remaining(), 2);
    let after: Vec<(String, String)> = before
        .iter()
        .map(|(key, _)| {
            let value: String = redis::cmd("GET")
                .arg(key)
                .query(&mut redis)
                .unwrap_or_default();
            (key.clone(), value)
        })
        .collect();
    assert_eq!(before, after);
    assert_eq!(keys(&mut redis)?, 2, "the configuration and the counter");
    Ok(())
}

#[test]
fn a_user_that_may_not_write_can_peek() -> TestResult {
    let server = RedisServer::start_with(&ServerOptions::new().with_acl(
        "reader on >pw resetkeys ~fixed-window:* resetchannels -@all +evalsha +script|load +time +get",
    ))?;
    let mut reader = server.client_as("reader", "pw")?.get_connection()?;
    let protocol = Protocol::new(Config::of("peek-acl", 7, HOUR)?);
    let PeekBegin::Call(call) = protocol.begin_peek("k", Instant::ZERO)? else {
        panic!("nothing is remembered: the server answers");
    };
    let reply = run(&mut reader, &call)?;
    let peek = protocol
        .finish_peek("k", call.limit_version(), Ok(&reply))?
        .expect("the limit in force");
    assert_eq!(peek.remaining(), 7);
    assert_eq!(keys(&mut raw(&server)?)?, 0);
    Ok(())
}

#[test]
fn a_peek_the_server_cannot_answer_is_an_error_even_failing_open() -> TestResult {
    let mut server = server()?;
    let config = Config::of("peek-down", 2, HOUR)?
        .with_fail_policy(FailPolicy::Open)
        .with_timeout(Duration::from_millis(500))?;
    let limiter = connect(&server, config)?;
    assert_eq!(limiter.peek("k")?.remaining(), 2);
    server.stop()?;
    let Err(SharedError::Unavailable { .. }) = limiter.peek("k") else {
        panic!("a peek is not answered by a guess");
    };
    // A permit fails open meanwhile, as the policy says.
    assert!(limiter.try_acquire("k")?.failed_open().is_some());
    Ok(())
}

#[test]
fn a_window_remembered_full_is_answered_without_a_round_trip() -> TestResult {
    let mut server = server()?;
    let config = Config::of("peek-known", 1, HOUR)?.with_timeout(Duration::from_millis(500))?;
    let limiter = connect(&server, config)?;
    limiter.try_acquire("k")?;
    assert!(limiter.try_acquire("k").is_err());
    server.stop()?;
    let peek = limiter.peek("k")?;
    assert_eq!(peek.remaining(), 0);
    assert!(peek.resets_in() > Duration::ZERO && peek.resets_in() <= HOUR);
    // A key not remembered needs the server.
    let Err(SharedError::Unavailable { cause, .. }) = limiter.peek("j") else {
        panic!("the server is down");
    };
    assert_ne!(cause.kind(), UnavailableKind::NotRegistered);
    Ok(())
}

#[test]
fn a_bad_key_is_refused() -> TestResult {
    let server = server()?;
    let limiter = connect(&server, Config::of("peek-bad", 1, HOUR)?)?;
    assert!(matches!(
        limiter.peek(""),
        Err(SharedError::InvalidKey { .. })
    ));
    Ok(())
}
