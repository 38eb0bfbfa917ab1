//! A limiter started while nothing listens on its server's port: calls answered by the fail
//! policy (never a counted permit, never a permit under fail-closed), then the server started on
//! that port and the same limiter counting, without being built again.

use core::time::Duration;
use std::sync::Arc;

use fixed_window_redis::{
    Config, FailPolicy, Registration, SharedError, SharedEvent, SharedPermit, SharedRateLimitLayer,
    SharedRateLimiter, SharedServiceError, UnavailableKind, redis,
};
use fixed_window_redis_test::{RedisServer, ServerOptions};
use tower::{Layer, Service, ServiceExt};

use crate::support::{HOUR, TestResult, events, logged, raw};

/// How often, and how long apart, a test asks a limiter whose server just came back.
const TRIES: usize = 200;
const PAUSE: Duration = Duration::from_millis(50);

fn config(name: &'static str, policy: FailPolicy) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of(name, 3, HOUR)?
        .with_fail_policy(policy)
        .with_timeout(Duration::from_millis(200))?)
}

/// A free port with nothing listening on it, and a client for it.
fn nowhere() -> Result<(u16, redis::Client), Box<dyn std::error::Error>> {
    let port = RedisServer::free_port()?;
    Ok((
        port,
        redis::Client::open(format!("redis://127.0.0.1:{port}/"))?,
    ))
}

fn is_not_registered(result: &Result<SharedPermit, SharedError>) -> bool {
    matches!(
        result,
        Err(SharedError::Unavailable { cause, .. }) if cause.kind() == UnavailableKind::NotRegistered
    )
}

/// Attempts until the server counts one, at most `TRIES` attempts `PAUSE` apart.
fn counted(limiter: &SharedRateLimiter, key: &str) -> Result<SharedPermit, SharedError> {
    let mut last = limiter.try_acquire(key);
    for _ in 0..TRIES {
        if matches!(&last, Ok(permit) if permit.remaining().is_some()) {
            break;
        }
        std::thread::sleep(PAUSE);
        last = limiter.try_acquire(key);
    }
    last
}

#[test]
fn fail_closed_a_limiter_started_without_its_server_refuses_then_counts_once_it_is_up() -> TestResult
{
    let (port, client) = nowhere()?;
    let (limiter, log) = logged(SharedRateLimiter::start_blocking(
        config("start-closed", FailPolicy::Closed)?,
        client,
    )?);

    for _ in 0..3 {
        let result = limiter.try_acquire("k");
        assert!(is_not_registered(&result), "{result:?}");
    }
    assert!(is_not_registered(&limiter.acquire("k")));
    assert!(matches!(
        limiter.call("k", || unreachable!("no permit, so this never runs")),
        Err(SharedError::Unavailable { .. })
    ));
    // A bad key is refused as such, before any registration.
    assert!(matches!(
        limiter.try_acquire(""),
        Err(SharedError::InvalidKey { .. })
    ));
    let Registration::Pending { failures, cause } = limiter.registration() else {
        panic!("registered with nothing listening");
    };
    assert!(failures >= 1, "{failures}");
    assert_eq!(
        cause.map(|cause| cause.kind()),
        Some(UnavailableKind::Connection)
    );
    assert_eq!(limiter.origin(), None);
    let unavailable = events(&log)
        .iter()
        .filter(|(_, event)| {
            matches!(
                event,
                SharedEvent::Unavailable {
                    failed_open: false,
                    ..
                }
            )
        })
        .count();
    assert_eq!(unavailable, 5);

    let server = RedisServer::start_with(&ServerOptions::new().with_port(port))?;
    assert_eq!(counted(&limiter, "k")?.remaining(), Some(2));
    assert_eq!(limiter.call("k", || "ran")?, "ran");
    assert_eq!(limiter.acquire("k")?.remaining(), Some(0));
    assert!(matches!(
        limiter.try_acquire("k"),
        Err(SharedError::Limited(_))
    ));
    assert!(matches!(
        limiter.registration(),
        Registration::Registered { .. }
    ));
    let stored: String = redis::cmd("GET")
        .arg("fixed-window:{start-closed}")
        .query(&mut raw(&server)?)?;
    assert!(stored.ends_with(":3600000000:3"), "{stored}");
    Ok(())
}

#[test]
fn fail_open_a_limiter_started_without_its_server_lets_calls_through_flagged_then_counts()
-> TestResult {
    let (port, client) = nowhere()?;
    let (limiter, log) = logged(SharedRateLimiter::start_blocking(
        config("start-open", FailPolicy::Open)?,
        client,
    )?);

    // More calls than the limit: none is counted, each is flagged.
    for _ in 0..5 {
        let permit = limiter.try_acquire("k")?;
        assert_eq!(permit.remaining(), None);
        assert_eq!(
            permit
                .failed_open()
                .map(fixed_window_redis::Unavailable::kind),
            Some(UnavailableKind::NotRegistered)
        );
    }
    assert_eq!(limiter.call("k", || 7)?, 7);
    let failed_open = events(&log)
        .iter()
        .filter(|(_, event)| {
            matches!(
                event,
                SharedEvent::Unavailable {
                    failed_open: true,
                    ..
                }
            )
        })
        .count();
    assert_eq!(failed_open, 6);

    let _server = RedisServer::start_with(&ServerOptions::new().with_port(port))?;
    // Counted from the first permit on: the uncounted ones left no trace on the server.
    assert_eq!(counted(&limiter, "k")?.remaining(), Some(2));
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(0));
    assert!(matches!(
        limiter.try_acquire("k"),
        Err(SharedError::Limited(_))
    ));
    Ok(())
}

#[test]
fn a_limiter_started_without_its_server_registers_in_the_background_without_any_call() -> TestResult
{
    let (port, client) = nowhere()?;
    let limiter =
        SharedRateLimiter::start_blocking(config("background", FailPolicy::Closed)?, client)?;
    // Let a few background tries fail first.
    std::thread::sleep(Duration::from_millis(400));
    assert!(limiter.registration().failures() >= 2);

    let server = RedisServer::start_with(&ServerOptions::new().with_port(port))?;
    let mut registered = false;
    // The background retries at most REGISTRATION_RETRY_MAX (5 s) apart: 10 s is enough.
    for _ in 0..TRIES {
        if matches!(limiter.registration(), Registration::Registered { .. }) {
            registered = true;
            break;
        }
        std::thread::sleep(PAUSE);
    }
    assert!(registered, "{:?}", limiter.registration());
    let stored: Option<String> = redis::cmd("GET")
        .arg("fixed-window:{background}")
        .query(&mut raw(&server)?)?;
    assert!(stored.is_some());
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(2));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_calls_the_tower_layer_and_coalesced_attempts_work_once_a_started_limiter_registers()
-> TestResult {
    let (port, client) = nowhere()?;
    let limiter = Arc::new(SharedRateLimiter::start(
        config("start-async", FailPolicy::Closed)?,
        client,
    ));
    let layer = SharedRateLimitLayer::new(Arc::clone(&limiter), |request: &String| request.clone());
    let mut service = layer.layer(tower::service_fn(|_: String| async {
        Ok::<_, std::io::Error>("served")
    }));

    let refused = service.ready().await?.call("k".into()).await;
    assert!(
        matches!(
            &refused,
            Err(SharedServiceError::RateLimited(SharedError::Unavailable { cause, .. }))
                if cause.kind() == UnavailableKind::NotRegistered
        ),
        "{refused:?}"
    );
    let concurrent =
        futures::future::join_all((0..8).map(|_| limiter.try_acquire_async("k"))).await;
    assert!(concurrent.iter().all(is_not_registered), "{concurrent:?}");
    assert!(limiter.call_async("k", async { 1 }).await.is_err());

    let _server = RedisServer::start_with(&ServerOptions::new().with_port(port))?;
    let mut first = limiter.acquire_async("warm-up").await;
    for _ in 0..TRIES {
        if first.is_ok() {
            break;
        }
        tokio::time::sleep(PAUSE).await;
        first = limiter.acquire_async("warm-up").await;
    }
    assert_eq!(first?.remaining(), Some(2));

    // Eight attempts at once on one key: coalesced, exactly the limit counted.
    let attempts = futures::future::join_all((0..8).map(|_| limiter.try_acquire_async("k"))).await;
    let permits = attempts.iter().filter(|result| result.is_ok()).count();
    let rejected = attempts
        .iter()
        .filter(|result| matches!(result, Err(SharedError::Limited(_))))
        .count();
    assert_eq!((permits, rejected), (3, 5), "{attempts:?}");
    assert_eq!(service.ready().await?.call("other".into()).await?, "served");
    Ok(())
}

#[test]
fn a_conflict_found_by_a_late_registration_fails_every_call_with_conflict() -> TestResult {
    let server = RedisServer::start()?;
    // Another deployment's configuration is stored; then the server stops answering.
    let _other =
        SharedRateLimiter::connect_blocking(Config::of("late", 4, HOUR)?, server.client()?)?;
    server.pause()?;
    let limiter =
        SharedRateLimiter::start_blocking(config("late", FailPolicy::Open)?, server.client()?);
    let paused = match &limiter {
        Ok(limiter) => Some(limiter.try_acquire("k")),
        Err(_) => None,
    };
    server.resume()?;
    let limiter = limiter?;
    let permit = paused.ok_or("no limiter")??;
    assert!(permit.failed_open().is_some());

    let mut result = limiter.try_acquire("k");
    for _ in 0..TRIES {
        if !matches!(result, Ok(ref permit) if permit.failed_open().is_some()) {
            break;
        }
        std::thread::sleep(PAUSE);
        result = limiter.try_acquire("k");
    }
    let Err(SharedError::Conflict(conflict)) = result else {
        panic!("{result:?}");
    };
    assert_eq!((conflict.limit, conflict.stored_limit), (3, 4));
    assert!(matches!(limiter.registration(), Registration::Refused(_)));
    // Fail open does not hide a conflict: the server answered.
    assert!(matches!(
        limiter.try_acquire("k"),
        Err(SharedError::Conflict(_))
    ));
    Ok(())
}
