//! A server that lost its script cache gets the script again, and the count is kept.

use fixed_window_redis::{Config, SCRIPT};

use crate::support::{HOUR, TestResult, connect, raw, server};

fn script_cached(redis: &mut redis::Connection) -> Result<bool, redis::RedisError> {
    let sha = redis::Script::new(SCRIPT).get_hash().to_owned();
    let exists: Vec<bool> = redis::cmd("SCRIPT").arg("EXISTS").arg(sha).query(redis)?;
    Ok(exists == [true])
}

#[test]
fn after_script_flush_the_next_call_reloads_the_script_and_counts_once() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    let limiter = connect(&server, Config::of("reload", 5, HOUR)?)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(4));
    assert!(script_cached(&mut redis)?);

    redis::cmd("SCRIPT").arg("FLUSH").exec(&mut redis)?;
    assert!(!script_cached(&mut redis)?);

    // NOSCRIPT means the script did not run: after the reload it runs once.
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(3));
    assert!(script_cached(&mut redis)?);
    Ok(())
}
