//! A server whose memory is full of other keys: `noeviction` refuses the limiter's writes
//! (`Unavailable`, never a permit under fail-closed); an evicting policy forgets a counter, and
//! the key then gets up to `limit` more permits in its window, as redis/README.md states; the
//! limiter reports the risk when it registers.

use core::time::Duration;

use fixed_window_redis::{
    Config, EvictionRisk, FailPolicy, SharedError, SharedEvent, SharedRateLimiter, UnavailableKind,
    redis,
};
use fixed_window_redis_test::{RedisServer, ServerOptions};

use crate::support::{HOUR, TestResult, events, logged, retried};

/// The server's memory limit: a few MiB above what an empty server uses.
const MAXMEMORY: u64 = 4 << 20;
/// The size of one filler value.
const FILLER: usize = 64 << 10;
/// At most this many filler keys are written (64 MiB, many times the limit).
const FILLERS: usize = 1_024;

const LIMIT: u32 = 3;

fn server(policy: &str) -> Result<RedisServer, Box<dyn std::error::Error>> {
    Ok(RedisServer::start_with(
        &ServerOptions::new().with_maxmemory(MAXMEMORY, policy),
    )?)
}

fn config(name: &'static str) -> Result<Config, Box<dyn std::error::Error>> {
    // No local memory: every attempt asks the server, so a forgotten count shows at once.
    Ok(Config::of(name, LIMIT, HOUR)?.with_local_memory(0))
}

/// Writes filler keys (with an expiry if `volatile`) until `done` says so, at most `FILLERS`
/// of them; how many were written, and whether `done` said so.
fn fill(
    connection: &mut redis::Connection,
    mut done: impl FnMut(&mut redis::Connection, Result<(), redis::RedisError>) -> bool,
) -> (usize, bool) {
    let value = "x".repeat(FILLER);
    for n in 0..FILLERS {
        let written = redis::cmd("SET")
            .arg(format!("filler:{n}"))
            .arg(&value)
            .exec(connection);
        if done(connection, written) {
            return (n + 1, true);
        }
    }
    (FILLERS, false)
}

fn exists(connection: &mut redis::Connection, key: &str) -> Result<bool, redis::RedisError> {
    redis::cmd("EXISTS").arg(key).query(connection)
}

/// Frees the fillers, so that nothing more is evicted.
fn empty(connection: &mut redis::Connection, written: usize) -> TestResult {
    for n in 0..written {
        redis::cmd("DEL")
            .arg(format!("filler:{n}"))
            .exec(connection)?;
    }
    Ok(())
}

/// Permits `limiter` grants on `key` before its first rejection, at most `2 × LIMIT + 1`.
fn permits_until_rejected(
    limiter: &SharedRateLimiter,
    key: &str,
) -> Result<u32, Box<dyn std::error::Error>> {
    for granted in 0..=2 * LIMIT {
        match limiter.try_acquire(key) {
            Ok(permit) => assert!(permit.remaining().is_some(), "uncounted: {permit:?}"),
            Err(SharedError::Limited(_)) => return Ok(granted),
            Err(err) => return Err(err.into()),
        }
    }
    Ok(2 * LIMIT + 1)
}

#[test]
fn noeviction_refuses_the_limiters_writes_and_fail_closed_grants_nothing() -> TestResult {
    let server = server("noeviction")?;
    let mut connection = server.client()?.get_connection()?;
    let (closed, log) = logged(SharedRateLimiter::connect_blocking(
        config("oom")?,
        server.client()?,
    )?);
    let open = SharedRateLimiter::connect_blocking(
        config("oom")?.with_fail_policy(FailPolicy::Open),
        server.client()?,
    )?;
    // noeviction evicts nothing: no risk to report.
    assert_eq!(closed.eviction_risk(), None);
    assert_eq!(closed.try_acquire("k")?.remaining(), Some(2));

    let (_, full) = fill(&mut connection, |_, written| {
        written.is_err_and(|err| err.to_string().contains("OOM"))
    });
    assert!(full, "the server never refused a write");
    // A write is refused when the memory in use passes the limit as it starts, its own
    // request buffered included: a large filler is refused before the data alone passes the
    // limit, and a small command may then pass. Lower the limit below the data held, as when
    // the data outgrows it.
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(MAXMEMORY / 4)
        .exec(&mut connection)?;

    // A counter to update and one to create: both writes refused, nothing counted.
    for key in ["k", "new"] {
        for _ in 0..3 {
            let err = closed.try_acquire(key).unwrap_err();
            let cause = err
                .unavailable()
                .ok_or_else(|| format!("not Unavailable: {err}"))?;
            assert_eq!(cause.kind(), UnavailableKind::Server, "{cause}");
            assert!(cause.message().contains("OOM"), "{cause}");
            assert!(!cause.may_have_counted());
            let permit = open.try_acquire(key)?;
            assert!(permit.failed_open().is_some(), "{permit:?}");
        }
    }
    // A limiter of another name cannot store its configuration: it does not register.
    let refused = SharedRateLimiter::connect_blocking(config("oom-new")?, server.client()?);
    assert!(
        refused
            .as_ref()
            .err()
            .and_then(SharedError::unavailable)
            .is_some_and(|cause| cause.message().contains("OOM")),
        "{refused:?}"
    );
    assert!(matches!(
        events(&log).last(),
        Some((
            _,
            SharedEvent::Unavailable {
                failed_open: false,
                ..
            }
        ))
    ));
    let counter: String = redis::cmd("GET")
        .arg("fixed-window:{oom}:k")
        .query(&mut connection)?;
    assert!(counter.ends_with(":1"), "{counter}");
    assert!(!exists(&mut connection, "fixed-window:{oom}:new")?);
    Ok(())
}

#[test]
fn allkeys_lru_forgets_a_full_counter_and_the_key_gets_at_most_limit_more_permits() -> TestResult {
    let server = server("allkeys-lru")?;
    let mut connection = server.client()?.get_connection()?;
    let limiter = SharedRateLimiter::connect_blocking(config("lru")?, server.client()?)?;
    let risk = limiter.eviction_risk().ok_or("allkeys-lru evicts")?;
    assert_eq!(
        risk,
        EvictionRisk::of("allkeys-lru", MAXMEMORY).ok_or("a risk")?
    );
    assert!(risk.configuration());

    assert_eq!(permits_until_rejected(&limiter, "k")?, LIMIT);
    let counter = "fixed-window:{lru}:k";
    let (written, forgotten) = fill(&mut connection, |connection, _| {
        !exists(connection, counter).unwrap_or(true)
    });
    assert!(forgotten, "the counter outlived {written} fillers");
    empty(&mut connection, written)?;

    // The window's count is gone: the key gets its limit again, and no more (the configuration
    // key may have gone too, in which case the windows realigned on a new origin).
    assert_eq!(permits_until_rejected(&limiter, "k")?, LIMIT);
    Ok(())
}

#[test]
fn volatile_lru_forgets_a_counter_but_keeps_the_configuration() -> TestResult {
    let server = server("volatile-lru")?;
    let mut connection = server.client()?.get_connection()?;
    let limiter = SharedRateLimiter::connect_blocking(config("volatile")?, server.client()?)?;
    let origin = limiter.origin();
    let risk = limiter
        .eviction_risk()
        .ok_or("volatile-lru evicts counters")?;
    assert!(!risk.configuration());

    assert_eq!(permits_until_rejected(&limiter, "k")?, LIMIT);
    let counter = "fixed-window:{volatile}:k";
    // The fillers never expire, so volatile-lru can evict only the counters: the first
    // eviction is this one, and then writes are refused.
    let (written, forgotten) = fill(&mut connection, |connection, _| {
        !exists(connection, counter).unwrap_or(true)
    });
    assert!(forgotten, "the counter outlived {written} fillers");
    assert!(exists(&mut connection, "fixed-window:{volatile}")?);
    empty(&mut connection, written)?;

    assert_eq!(permits_until_rejected(&limiter, "k")?, LIMIT);
    let again = SharedRateLimiter::connect_blocking(config("volatile")?, server.client()?)?;
    assert_eq!(again.origin(), origin);
    Ok(())
}

#[test]
fn listeners_hear_of_the_risk_once_each_whenever_they_were_added() -> TestResult {
    let server = server("allkeys-lfu")?;
    let (limiter, first) = logged(SharedRateLimiter::connect_blocking(
        config("told")?,
        server.client()?,
    )?);
    let risk_events = |log| {
        events(log)
            .into_iter()
            .filter(|(key, event)| {
                key.is_empty()
                    && matches!(event, SharedEvent::EvictionRisk { name: "told", risk, .. }
                        if risk.policy() == "allkeys-lfu")
            })
            .count()
    };
    // Added after the registration: told at once.
    assert_eq!(risk_events(&first), 1);
    limiter.try_acquire("k")?;
    let (limiter, second) = logged(limiter);
    limiter.try_acquire("k")?;
    assert_eq!((risk_events(&first), risk_events(&second)), (1, 1));

    // A limiter started before its server: told with the first call after its registration.
    let port = RedisServer::free_port()?;
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
    let (started, log) = logged(SharedRateLimiter::start_blocking(config("told")?, client)?);
    assert!(started.try_acquire("k").is_err());
    assert_eq!(risk_events(&log), 0);
    let _server = RedisServer::start_with(
        &ServerOptions::new()
            .with_port(port)
            .with_maxmemory(MAXMEMORY, "allkeys-lfu"),
    )?;
    let permit = retried(200, Duration::from_millis(50), || started.try_acquire("k"));
    assert!(permit.is_ok(), "{permit:?}");
    started.try_acquire("k")?;
    assert_eq!(risk_events(&log), 1);
    assert!(started.eviction_risk().is_some());
    Ok(())
}

#[test]
fn a_user_who_may_not_read_the_policy_registers_all_the_same() -> TestResult {
    let server = RedisServer::start_with(
        &ServerOptions::new()
            .with_maxmemory(MAXMEMORY, "allkeys-lru")
            .with_acl("limiter on >pw resetkeys ~fixed-window:* -@all +evalsha +script|load +time +get +set"),
    )?;
    let limiter =
        SharedRateLimiter::connect_blocking(config("quiet")?, server.client_as("limiter", "pw")?)?;
    assert_eq!(limiter.eviction_risk(), None);
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(2));
    Ok(())
}
