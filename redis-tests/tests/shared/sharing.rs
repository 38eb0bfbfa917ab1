//! Several limiter instances, as separate replicas would be, share one limit per key.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use fixed_window::RateLimiterError;
use fixed_window_redis::{Config, SharedError, SharedRateLimiter};

use crate::support::{HOUR, TestResult, connect, server};

#[test]
fn replicas_taking_turns_get_exactly_limit_permits_between_them() -> TestResult {
    let server = server()?;
    let config = Config::of("turns", 10, HOUR)?;
    let replicas = (0..4)
        .map(|_| connect(&server, config.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut remaining = Vec::new();
    let mut rejected = 0;
    for attempt in 0..40 {
        match replicas[attempt % replicas.len()].try_acquire("client-1") {
            Ok(permit) => remaining.push(permit.remaining()),
            Err(SharedError::Limited(RateLimiterError::Rejected {
                name: "turns",
                limit: 10,
                period,
                retry_after,
                ..
            })) if period == HOUR && retry_after <= HOUR => rejected += 1,
            Err(other) => return Err(other.into()),
        }
    }
    // One count on the server: the remaining permits go down by one whichever replica asks.
    let expected: Vec<_> = (0..10).rev().map(Some).collect();
    assert_eq!(remaining, expected);
    assert_eq!(rejected, 30);
    Ok(())
}

#[test]
fn each_key_has_its_own_window_count() -> TestResult {
    let server = server()?;
    let config = Config::of("keys", 2, HOUR)?;
    let (a, b) = (connect(&server, config.clone())?, connect(&server, config)?);
    for key in ["alice", "bob", "carol"] {
        assert_eq!(a.try_acquire(key)?.remaining(), Some(1));
        assert_eq!(b.try_acquire(key)?.remaining(), Some(0));
        assert!(a.try_acquire(key).is_err());
        assert!(b.try_acquire(key).is_err());
    }
    Ok(())
}

#[test]
fn threads_on_separate_replicas_and_on_one_share_the_limit() -> TestResult {
    let server = server()?;
    let config = Config::of("threads", 30, HOUR)?;
    let shared = Arc::new(connect(&server, config.clone())?);
    let permits = Arc::new(AtomicU32::new(0));
    let mut handles = Vec::new();
    for thread in 0..6 {
        // Three threads each with their own replica, three on one shared limiter.
        let limiter = if thread < 3 {
            Arc::new(connect(&server, config.clone())?)
        } else {
            Arc::clone(&shared)
        };
        let permits = Arc::clone(&permits);
        handles.push(std::thread::spawn(move || {
            for _ in 0..20 {
                match limiter.try_acquire("hot") {
                    Ok(_) => {
                        permits.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(SharedError::Limited(_)) => {}
                    Err(other) => return Err(other),
                }
            }
            Ok(())
        }));
    }
    for handle in handles {
        handle.join().map_err(|_| "a caller thread panicked")??;
    }
    assert_eq!(permits.load(Ordering::Relaxed), 30);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_tasks_over_one_connection_share_the_limit() -> TestResult {
    let server = server()?;
    let config = Config::of("tasks", 50, HOUR)?;
    let limiter = Arc::new(SharedRateLimiter::connect(config.clone(), server.client()?).await?);
    let other = Arc::new(SharedRateLimiter::connect(config, server.client()?).await?);
    let mut tasks = Vec::new();
    for task in 0..16 {
        let limiter = if task % 2 == 0 {
            Arc::clone(&limiter)
        } else {
            Arc::clone(&other)
        };
        tasks.push(tokio::spawn(async move {
            let mut permits = 0_u32;
            for _ in 0..8 {
                match limiter.try_acquire_async("hot").await {
                    Ok(_) => permits += 1,
                    Err(SharedError::Limited(_)) => {}
                    Err(other) => return Err(other),
                }
            }
            Ok(permits)
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await??;
    }
    assert_eq!(total, 50);
    Ok(())
}
