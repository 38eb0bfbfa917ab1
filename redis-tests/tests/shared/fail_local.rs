//! `FailPolicy::Local { share }` on a real server: while the server is stopped, each limiter
//! (a process of its own: each keeps its own windows) grants each key at most `share` per
//! window of its clock, and rejects the rest locally; once the server is back, it decides
//! again, exactly.

use core::time::Duration;

use fixed_window::{Clock, ManualClock};
use fixed_window_redis::{Config, FailPolicy, SharedError, SharedRateLimiter};

use crate::support::{HOUR, TestResult, connect, server};

const LIMIT: u32 = 10;
const SHARE: u32 = 3;
const PROCESSES: usize = 3;

/// The permits each limiter gets on `key` from 2 × `SHARE` tries, none counted by the server;
/// the others rejected locally, with the time to the end of the local window.
fn outage_permits(
    limiters: &[SharedRateLimiter<ManualClock>],
    key: &str,
) -> Result<Vec<u32>, String> {
    let mut permits = Vec::new();
    for limiter in limiters {
        let mut granted = 0;
        for _ in 0..2 * SHARE {
            match limiter.try_acquire(key) {
                Ok(permit) if permit.failed_open().is_some() && permit.remaining().is_none() => {
                    granted += 1;
                }
                Ok(permit) => {
                    return Err(format!("counted while the server is stopped: {permit:?}"));
                }
                Err(SharedError::Limited(rejection)) => {
                    let retry = rejection
                        .retry_after()
                        .ok_or("a rejection without a wait")?;
                    if retry.is_zero() || retry > HOUR {
                        return Err(format!("retry after {retry:?}"));
                    }
                }
                Err(err) => return Err(format!("unexpected: {err}")),
            }
        }
        permits.push(granted);
    }
    Ok(permits)
}

#[test]
fn local_shares_bound_each_process_per_window_while_the_server_is_away() -> TestResult {
    let mut server = server()?;
    let config = Config::of("fail-local", LIMIT, HOUR)?
        .with_timeout(Duration::from_secs(1))?
        .with_fail_policy(FailPolicy::Local { share: SHARE });
    let clock = ManualClock::new();
    let limiters = (0..PROCESSES)
        .map(|_| Ok(connect(&server, config.clone())?.with_clock(clock.clone())))
        .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;
    for (used, limiter) in (1..).zip(&limiters) {
        assert_eq!(limiter.try_acquire("k")?.remaining(), Some(LIMIT - used));
    }

    server.stop()?;
    // Each window of the local grid: exactly `SHARE` per process per key, so at most
    // `PROCESSES × SHARE` in all.
    for window in 0..3 {
        for key in ["k", "other"] {
            let permits = outage_permits(&limiters, key)?;
            assert_eq!(permits, vec![SHARE; PROCESSES], "window {window}, {key}");
        }
        clock.advance(HOUR);
    }
    println!(
        "while the server was stopped: {SHARE} permits per process per key per window, {} in all",
        SHARE * u32::try_from(PROCESSES)?
    );

    // The server restarts empty: it decides again, exactly, and nothing the outage let
    // through was counted.
    server.restart()?;
    // Each limiter finds its connection broken once, and then the server again.
    for (used, limiter) in (1..).zip(&limiters) {
        let started = std::time::Instant::now();
        let counted = loop {
            match limiter.try_acquire("k") {
                Ok(permit) if permit.remaining().is_some() => break permit,
                _ if started.elapsed() < Duration::from_secs(10) => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return Err(format!("not deciding after the restart: {other:?}").into()),
            }
        };
        assert_eq!(counted.remaining(), Some(LIMIT - used));
    }
    for (used, limiter) in (4..=LIMIT).zip(limiters.iter().cycle()) {
        assert_eq!(limiter.try_acquire("k")?.remaining(), Some(LIMIT - used));
    }
    for limiter in &limiters {
        let err = limiter.try_acquire("k").unwrap_err();
        assert!(matches!(err, SharedError::Limited(_)), "{err}");
    }
    assert!(clock.now() > fixed_window::Instant::ZERO);
    Ok(())
}

/// The local permits `limiter` grants `key` out of `tries` while the server is stopped, each
/// flagged as failed open; the others rejected locally.
fn local_grants(
    limiter: &SharedRateLimiter<ManualClock>,
    key: &str,
    tries: u32,
) -> Result<u32, String> {
    let mut granted = 0;
    for _ in 0..tries {
        match limiter.try_acquire(key) {
            Ok(permit) if permit.failed_open().is_some() => granted += 1,
            Ok(permit) => return Err(format!("counted while the server is stopped: {permit:?}")),
            Err(SharedError::Limited(_)) => {}
            Err(err) => return Err(format!("unexpected: {err}")),
        }
    }
    Ok(granted)
}

/// A live change of one key's limit changes its local share in every process that adopted
/// it: the process that made the change at once, another once told of it by the server.
#[test]
fn a_live_change_of_a_keys_limit_changes_its_local_share() -> TestResult {
    let mut server = server()?;
    // A share of 10 in a limiter of 100: a tenth of each key's limit.
    let config = Config::of("fail-local-live", 100, HOUR)?
        .with_timeout(Duration::from_secs(1))?
        .with_fail_policy(FailPolicy::Local { share: 10 });
    let clock = ManualClock::new();
    let changer = connect(&server, config.clone())?.with_clock(clock.clone());
    let other = connect(&server, config)?.with_clock(clock.clone());
    changer.set_key_limit("lowered", 20)?;
    changer.set_key_limit("raised", 1_000)?;
    // The other process is told of the newer version by its next attempt, and reads the
    // live limits before making it again.
    assert_eq!(other.try_acquire("free")?.remaining(), Some(99));
    for limiter in [&changer, &other] {
        assert_eq!(
            (limiter.key_limit("lowered"), limiter.key_limit("raised")),
            (20, 1_000)
        );
    }

    server.stop()?;
    for limiter in [&changer, &other] {
        assert_eq!(local_grants(limiter, "lowered", 10)?, 2);
        assert_eq!(local_grants(limiter, "raised", 150)?, 100);
        assert_eq!(local_grants(limiter, "free", 20)?, 10);
    }
    println!(
        "while the server was stopped: 2 permits per process for a key lowered live to 20, 100 for one raised to 1,000, 10 for the others"
    );
    Ok(())
}
