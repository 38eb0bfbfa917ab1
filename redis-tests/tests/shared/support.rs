//! Shared setup: servers, limiters, a raw connection for looking at the keyspace, and the time
//! key.

use core::time::Duration;
use std::sync::{Arc, Mutex};

use fixed_window_redis::{Config, SharedEvent, SharedRateLimiter};
use fixed_window_redis_test::RedisServer;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The key the script reads the time from in tests that control it.
pub const TIME_KEY: &str = "test:now";

/// An hour: no window boundary falls inside a test.
pub const HOUR: Duration = Duration::from_secs(3600);

pub fn server() -> Result<RedisServer, Box<dyn std::error::Error>> {
    Ok(RedisServer::start()?)
}

pub fn connect(
    server: &RedisServer,
    config: Config,
) -> Result<SharedRateLimiter, Box<dyn std::error::Error>> {
    Ok(SharedRateLimiter::connect_blocking(
        config,
        server.client()?,
    )?)
}

/// A plain connection, for reading and writing keys behind the limiter's back.
pub fn raw(server: &RedisServer) -> Result<redis::Connection, Box<dyn std::error::Error>> {
    Ok(server.client()?.get_connection()?)
}

/// Sets the server time the script reads, in microseconds.
pub fn set_time(connection: &mut redis::Connection, micros: u64) -> TestResult {
    redis::cmd("SET")
        .arg(TIME_KEY)
        .arg(micros)
        .exec(connection)?;
    Ok(())
}

/// `attempt`, made again every `every` while it fails, at most `tries` times more: its last
/// outcome (a server restarting, a limiter reconnecting).
pub fn retried<T, E>(
    tries: u32,
    every: Duration,
    mut attempt: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    let mut outcome = attempt();
    for _ in 0..tries {
        if outcome.is_ok() {
            break;
        }
        std::thread::sleep(every);
        outcome = attempt();
    }
    outcome
}

/// Holds every client's commands for `millis` (`CLIENT PAUSE … ALL`).
pub fn pause(redis: &mut redis::Connection, millis: u64) -> TestResult {
    redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(millis)
        .arg("ALL")
        .exec(redis)?;
    Ok(())
}

/// A configuration on the time key with no local memory, so that every attempt reaches the
/// server and sees exactly the time the test set.
pub fn on_time_key(
    name: &'static str,
    limit: u32,
    period: Duration,
) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of(name, limit, period)?
        .with_time_key(TIME_KEY)?
        .with_local_memory(0))
}

/// Every event a listener received, with its key.
pub type Log = Arc<Mutex<Vec<(String, SharedEvent)>>>;

pub fn logged<C: fixed_window::Clock>(
    limiter: SharedRateLimiter<C>,
) -> (SharedRateLimiter<C>, Log) {
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    let limiter = limiter.with_listener(move |key, event| {
        sink.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((key.to_owned(), event.clone()));
    });
    (limiter, log)
}

pub fn events(log: &Log) -> Vec<(String, SharedEvent)> {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// Runs `call` as the client does: `EVALSHA` of the script with the call's keys and arguments.
pub fn run(
    redis: &mut redis::Connection,
    call: &fixed_window_redis::ScriptCall,
) -> redis::RedisResult<Vec<i64>> {
    let script = redis::Script::new(fixed_window_redis::SCRIPT);
    run_script(redis, &script, call.keys(), call.args())
}

/// Runs `script` (the production one or a variant) on `keys` and `args` as the client does:
/// `EVALSHA`, loading it where the server lacks it.
pub fn run_script<T: redis::FromRedisValue, K: redis::ToRedisArgs, A: redis::ToRedisArgs>(
    redis: &mut redis::Connection,
    script: &redis::Script,
    keys: impl IntoIterator<Item = K>,
    args: impl IntoIterator<Item = A>,
) -> redis::RedisResult<T> {
    let mut invocation = script.prepare_invoke();
    for key in keys {
        invocation.key(key);
    }
    for arg in args {
        invocation.arg(arg);
    }
    invocation.invoke(redis)
}
