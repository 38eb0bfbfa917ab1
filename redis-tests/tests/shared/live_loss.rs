//! Live limits lost with the server's memory (a restart without persistence): a process that
//! registers afterwards reads the same version with no live limits, so until a process still
//! holding them writes them back, two processes at one version decide a key by different
//! limits, and the one without them is told `Conflict` on the key's counter.

use core::time::Duration;

use fixed_window_redis::{Config, Protocol, ScriptCall, SharedError, SharedRateLimiter, redis};
use fixed_window_redis_test::RedisServer;

use crate::support::{HOUR, TestResult, retried, run_script};

/// `a` holds `paid`'s live limit 5 (the limiter's is 2) when the server restarts empty; `b`
/// registers afterwards. While `b` decides `paid` by 2 and `a` by 5, `b` is told `Conflict`
/// (nothing counted); once `a` reads the live limits again in the background (its attempts
/// go on, at most every `LIMIT_REFRESH`), it finds them lost and writes them back with a new
/// version: `b` is told the change, reads them, and decides `paid` by 5 from the count `a`
/// made, and a process registering later adopts them too.
#[test]
fn live_limits_lost_in_a_restart_are_written_back_by_a_process_holding_them() -> TestResult {
    let mut server = RedisServer::start()?;
    let config = Config::of("live-lost", 2, HOUR)?.with_timeout(Duration::from_millis(500))?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), server.client()?)?;
    a.set_key_limit("paid", 5)?;
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(4));

    server.restart()?;
    // The first attempts reconnect; at most 100 tries 50 ms apart (5 s).
    let counted = retried(100, Duration::from_millis(50), || a.try_acquire("paid"));
    assert_eq!(
        counted?.remaining(),
        Some(4),
        "a counts paid by its live limit"
    );
    let b = SharedRateLimiter::connect_blocking(config.clone(), server.client()?)?;
    assert_eq!(b.key_limit("paid"), 2, "b registered with no live limits");

    // Each round, `a` makes an attempt on a key of its own (so its background read comes due
    // once `LIMIT_REFRESH` has passed) and `b` one on `paid`; at most 60 rounds 100 ms apart
    // (6 s).
    let (mut conflicts, mut decided) = (0, None);
    for round in 0..60 {
        a.try_acquire(&format!("tick-{round}"))?;
        match b.try_acquire("paid") {
            Err(SharedError::Conflict(_)) => conflicts += 1,
            other => {
                decided = Some(other?.remaining());
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(decided, Some(Some(3)), "after {conflicts} conflicts");
    assert_eq!((a.key_limit("paid"), b.key_limit("paid")), (5, 5));
    let c = SharedRateLimiter::connect_blocking(config, server.client()?)?;
    assert_eq!(c.try_acquire("paid")?.remaining(), Some(2));

    let mut redis = server.client()?.get_connection()?;
    let live: String = redis::cmd("GET")
        .arg("fixed-window:{live-lost}/limits")
        .query(&mut redis)?;
    assert_eq!(live, "5 4:paid");
    Ok(())
}

/// A live change made after the server lost the live limits is made to those its process
/// holds: `a` holds `paid`'s live limit 5 when the server restarts empty, then sets `vip`'s to
/// 7 before any read finds the loss. The server stores both (not `vip` alone), so a process
/// registering afterwards decides `paid` by 5 too.
#[test]
fn a_live_change_made_after_a_loss_keeps_the_live_limits_its_process_holds() -> TestResult {
    let mut server = RedisServer::start()?;
    let config =
        Config::of("live-changed-lost", 2, HOUR)?.with_timeout(Duration::from_millis(500))?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), server.client()?)?;
    a.set_key_limit("paid", 5)?;

    server.restart()?;
    // The first calls reconnect; at most 100 tries 50 ms apart (5 s).
    retried(100, Duration::from_millis(50), || a.set_key_limit("vip", 7))?;
    assert_eq!((a.key_limit("paid"), a.key_limit("vip")), (5, 7));

    let mut redis = server.client()?.get_connection()?;
    let live: String = redis::cmd("GET")
        .arg("fixed-window:{live-changed-lost}/limits")
        .query(&mut redis)?;
    assert_eq!(live, "5 4:paid7 3:vip");
    let b = SharedRateLimiter::connect_blocking(config, server.client()?)?;
    assert_eq!((b.key_limit("paid"), b.key_limit("vip")), (5, 7));
    assert_eq!(b.try_acquire("paid")?.remaining(), Some(4));
    Ok(())
}

/// Runs `call` as the client runs a read of the live limits: its reply as the server gives it.
fn run_live(
    redis: &mut redis::Connection,
    keys: &[&str],
    args: &[&str],
) -> redis::RedisResult<Vec<redis::Value>> {
    let script = redis::Script::new(fixed_window_redis::SCRIPT);
    run_script(redis, &script, keys, args)
}

/// The four numbers of a live limits' reply, and its text (`None`: nil, none stored).
fn split(reply: &[redis::Value]) -> Result<(Vec<i64>, Option<String>), Box<dyn std::error::Error>> {
    let mut numbers = Vec::new();
    let mut text = None;
    for value in reply {
        match value {
            redis::Value::Int(n) => numbers.push(*n),
            redis::Value::BulkString(bytes) => text = Some(String::from_utf8(bytes.clone())?),
            redis::Value::Nil => {}
            other => return Err(format!("unexpected {other:?}").into()),
        }
    }
    Ok((numbers, text))
}

/// The script's `restore`: it writes the text back, with the next version, only where the
/// live limits' key is absent; present (another process wrote them back or changed them
/// first), it answers as a read and writes nothing; a malformed text is refused.
#[test]
fn the_script_writes_back_only_live_limits_still_absent() -> TestResult {
    let server = RedisServer::start()?;
    let mut redis = server.client()?.get_connection()?;
    let protocol = Protocol::new(Config::of("restore-only", 2, HOUR)?);
    let (config_key, live_key) = (
        "fixed-window:{restore-only}",
        "fixed-window:{restore-only}/limits",
    );
    let call = protocol.set_key_limit_call("paid", Some(5))?;
    let reply = crate::support::run(&mut redis, &call)?;
    protocol.key_limit_set("paid", Some(5), Ok(&reply))?;
    let read = |redis: &mut redis::Connection, call: &ScriptCall| {
        let keys: Vec<&str> = call.keys().collect();
        let args: Vec<&str> = call.args().collect();
        run_live(redis, &keys, &args)
    };

    // Lost: a read finds none, and this process holds `paid`'s.
    redis::cmd("DEL").arg(live_key).exec(&mut redis)?;
    let call = protocol.limits_call();
    let (numbers, text) = split(&read(&mut redis, &call)?)?;
    assert_eq!(text, None);
    protocol.limits_read(&call, Ok((&numbers, text.as_deref())))?;
    let restore = protocol.restore_call().ok_or("the loss was not found")?;

    // Another process wrote them first: answered as a read, nothing written.
    redis::cmd("SET")
        .arg(live_key)
        .arg("9 4:paid")
        .exec(&mut redis)?;
    let (numbers, text) = split(&read(&mut redis, &restore)?)?;
    assert_eq!((numbers[0], text.as_deref()), (2, Some("9 4:paid")));
    let stored: String = redis::cmd("GET").arg(config_key).query(&mut redis)?;
    assert!(stored.ends_with(":2/1"), "{stored}");

    // Still absent: written, with the next version.
    redis::cmd("DEL").arg(live_key).exec(&mut redis)?;
    let (numbers, text) = split(&read(&mut redis, &restore)?)?;
    assert_eq!(
        (numbers[0], numbers[2], text.as_deref()),
        (3, 2, Some("5 4:paid"))
    );
    let stored: String = redis::cmd("GET").arg(config_key).query(&mut redis)?;
    assert!(stored.ends_with(":2/2"), "{stored}");
    let live: String = redis::cmd("GET").arg(live_key).query(&mut redis)?;
    assert_eq!(live, "5 4:paid");

    // A malformed text (a key shorter than its length, a zero limit) is refused.
    redis::cmd("DEL").arg(live_key).exec(&mut redis)?;
    let keys: Vec<&str> = restore.keys().collect();
    let mut args: Vec<&str> = restore.args().collect();
    for malformed in ["5 4:pai", "0 4:paid", "", "5 0:"] {
        *args.last_mut().ok_or("no text")? = malformed;
        let err = run_live(&mut redis, &keys, &args).expect_err(malformed);
        assert!(
            err.to_string().contains("bad arguments"),
            "{malformed}: {err}"
        );
    }
    let absent: Option<String> = redis::cmd("GET").arg(live_key).query(&mut redis)?;
    assert_eq!(absent, None);
    Ok(())
}
