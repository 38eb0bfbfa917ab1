//! The checks of a conflicting configuration, shared by the one-node and the cluster tests
//! (`tests/shared/conflict.rs`, `tests/cluster/conflict.rs`): refused with
//! `SharedError::Conflict` on every call, never a permit, under either policy, whether the
//! limiter was made with `connect` or `start`, and whether its call comes before the
//! background registration completed or after.

use core::time::Duration;

use fixed_window_redis::{
    Config, FailPolicy, Registration, Server, SharedError, SharedRateLimiter,
};

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

/// No window boundary falls inside the test.
const HOUR: Duration = Duration::from_secs(3600);

/// The stored configuration allows 4 per hour; a limiter of 3 is refused every way, and
/// counts nothing.
pub fn every_call_is_refused(server: &dyn Fn() -> Server) -> TestResult {
    let keys: Vec<String> = (0..12).map(|n| format!("key-{n}")).collect();
    let stored = SharedRateLimiter::connect_blocking(Config::of("conflict", 4, HOUR)?, server())?;
    for policy in [FailPolicy::Closed, FailPolicy::Open] {
        let config = Config::of("conflict", 3, HOUR)?
            .with_timeout(Duration::from_secs(2))?
            .with_fail_policy(policy);
        let refused = SharedRateLimiter::connect_blocking(config.clone(), server());
        assert!(
            matches!(refused, Err(SharedError::Conflict(conflict)) if (conflict.limit, conflict.stored_limit) == (3, 4)),
            "{policy:?}: connect: {:?}",
            refused.err()
        );

        // Called at once: the call registers itself (or takes the background try's outcome).
        let started = SharedRateLimiter::start_blocking(config.clone(), server())?;
        refused_everywhere(&started, &keys, policy, "started, called at once");

        // Called once the background registration has been refused.
        let started = SharedRateLimiter::start_blocking(config.clone(), server())?;
        for _ in 0..200 {
            if !matches!(started.registration(), Registration::Pending { .. }) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            matches!(started.registration(), Registration::Refused(_)),
            "{policy:?}: {:?}",
            started.registration()
        );
        refused_everywhere(&started, &keys, policy, "started, registered");

        // The async forms, on the caller's runtime.
        let runtime = tokio::runtime::Runtime::new()?;
        runtime.block_on(async {
            let started = SharedRateLimiter::start(config.clone(), server());
            for key in &keys {
                let result = started.try_acquire_async(key).await;
                assert!(
                    matches!(result, Err(SharedError::Conflict(_))),
                    "{policy:?}: async start: {key}: {result:?}"
                );
            }
            let refused = SharedRateLimiter::connect(config.clone(), server()).await;
            assert!(
                matches!(refused, Err(SharedError::Conflict(_))),
                "{policy:?}"
            );
        });
    }
    // None of the refused calls counted: each key's first permit leaves 3 of 4.
    for key in &keys {
        assert_eq!(stored.try_acquire(key)?.remaining(), Some(3), "{key}");
    }
    Ok(())
}

fn refused_everywhere(limiter: &SharedRateLimiter, keys: &[String], policy: FailPolicy, how: &str) {
    for key in keys {
        for _ in 0..2 {
            let result = limiter.try_acquire(key);
            assert!(
                matches!(result, Err(SharedError::Conflict(conflict)) if (conflict.limit, conflict.stored_limit) == (3, 4)),
                "{policy:?}, {how}: {key}: {result:?}"
            );
        }
    }
    let result = limiter.acquire("key-0");
    assert!(
        matches!(result, Err(SharedError::Conflict(_))),
        "{policy:?}, {how}: acquire: {result:?}"
    );
}
