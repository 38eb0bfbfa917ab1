//! Live limits lost with the server's memory (a restart without persistence): a process that
//! registers afterwards reads the same version with no live limits, so until a process still
//! holding them writes them back, two processes at one version decide a key by different
//! limits, and the one without them is told `Conflict` on the key's counter.

use core::time::Duration;

use fixed_window_redis::{Config, SharedError, SharedRateLimiter, redis};
use fixed_window_redis_test::RedisServer;

use crate::support::{HOUR, TestResult};

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
    let mut counted = a.try_acquire("paid");
    for _ in 0..100 {
        if counted.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        counted = a.try_acquire("paid");
    }
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
