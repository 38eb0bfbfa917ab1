//! Weighted permits on a real server: `n` permits of one window at once, all or none, counted
//! by the script, alone, in a batch, and on the cluster path.

use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use fixed_window::{Instant, RateLimiterError};
use fixed_window_redis::{Begin, Protocol, ScriptCall, SharedError};

use crate::support::{HOUR, TestResult, connect, on_time_key, raw, run, server, set_time};

const T0: u64 = 9_000_000;

#[test]
fn weighted_attempts_take_all_or_nothing_of_one_window() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let config = on_time_key("weighted", 5, Duration::from_millis(10))?;
    // Remembering full windows, to see that a weighted refusal does not make one.
    let limiter = connect(&server, config.clone().with_local_memory(100))?;

    assert_eq!(limiter.try_acquire_n("k", 3)?.remaining(), Some(2));
    // Two left: three are refused by the server, and the key is not taken to be full.
    let refused = limiter.try_acquire_n("k", 3).unwrap_err();
    assert_eq!(refused.retry_after(), Some(Duration::from_millis(10)));
    assert_eq!(limiter.protocol().remembered(), 0);
    assert_eq!(limiter.try_acquire_n("k", 2)?.remaining(), Some(0));
    // Now full, and known so.
    assert!(limiter.try_acquire("k").is_err());
    assert_eq!(limiter.protocol().remembered(), 1);
    // Zero takes nothing, whatever is left; above the limit is refused at once.
    assert_eq!(limiter.try_acquire_n("j", 0)?.remaining(), Some(5));
    // ... and writes nothing: as in core, a counter's earlier window stays what it was.
    let written: bool = redis::cmd("EXISTS")
        .arg(config.counter_key("j"))
        .query(&mut redis)?;
    assert!(!written, "zero permits wrote a counter");
    assert!(matches!(
        limiter.try_acquire_n("j", 6),
        Err(SharedError::Limited(RateLimiterError::TooMany {
            limit: 5,
            requested: 6,
            ..
        }))
    ));
    // The next window holds the whole limit again (asked by a process that remembers
    // nothing: this one's memory runs on its own clock, which the test does not move).
    set_time(&mut redis, T0 + 10_000)?;
    let fresh = connect(&server, config)?;
    assert_eq!(fresh.try_acquire_n("k", 5)?.remaining(), Some(0));
    Ok(())
}

#[test]
fn weighted_calls_run_the_operation_only_with_all_their_permits() -> TestResult {
    let server = server()?;
    set_time(&mut raw(&server)?, T0)?;
    let limiter = connect(&server, on_time_key("weighted-calls", 5, HOUR)?)?;
    let runs = AtomicU32::new(0);
    let run_once = || runs.fetch_add(1, Ordering::SeqCst);
    assert_eq!(limiter.call_n("k", 3, run_once)?, 0);
    // Two left: the operation does not run, and nothing is taken.
    assert!(matches!(
        limiter.call_n("k", 3, run_once),
        Err(SharedError::Limited(RateLimiterError::Rejected { .. }))
    ));
    // Above the limit: refused at once, the operation does not run either.
    assert!(matches!(
        limiter.call_n("k", 6, run_once),
        Err(SharedError::Limited(RateLimiterError::TooMany {
            requested: 6,
            ..
        }))
    ));
    let interrupt = fixed_window_redis::Interrupt::new();
    assert_eq!(
        limiter.call_n_interruptible("k", 2, &interrupt, run_once)?,
        1
    );
    assert!(
        limiter
            .call_n_interruptible("k", 1, &interrupt, run_once)
            .is_err()
    );
    let later = futures::executor::block_on(limiter.call_n_async("j", 5, async { 7 }))?;
    assert_eq!(later, 7);
    assert!(futures::executor::block_on(limiter.call_n_async("j", 1, async { 8 })).is_err());
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    Ok(())
}

#[test]
fn threads_on_two_replicas_never_take_more_units_than_the_limit() -> TestResult {
    let server = server()?;
    let config = on_time_key("weighted-threads", 40, HOUR)?;
    set_time(&mut raw(&server)?, T0)?;
    let replicas = [
        Arc::new(connect(&server, config.clone())?),
        Arc::new(connect(&server, config)?),
    ];
    let units = Arc::new(AtomicU32::new(0));
    let handles: Vec<_> = (0..8_u32)
        .map(|thread| {
            let limiter = Arc::clone(&replicas[thread as usize % 2]);
            let units = Arc::clone(&units);
            std::thread::spawn(move || {
                for attempt in 0..40_u32 {
                    let n = (thread + attempt) % 4; // 0, 1, 2 or 3 units
                    if limiter.try_acquire_n("k", n).is_ok() {
                        units.fetch_add(n, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().map_err(|_| "a thread panicked")?;
    }
    let taken = units.load(Ordering::Relaxed);
    // 8 threads ask for 480 units of 40: all 40 are taken (a single unit always fits what
    // is left), and not one more.
    assert_eq!(taken, 40);
    Ok(())
}

fn begin(protocol: &Protocol, key: &str, n: u32) -> Result<ScriptCall, Box<dyn std::error::Error>> {
    match protocol.begin_n(key, n, Instant::ZERO, Instant::ZERO)? {
        Begin::Call(call) => Ok(call),
        Begin::Decided(decision) => Err(format!("decided locally: {decision:?}").into()),
    }
}

#[test]
fn a_batch_of_weighted_attempts_counts_each_by_its_weight_on_both_paths() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    for protocol in [
        Protocol::new(on_time_key("batch-node", 5, HOUR)?),
        Protocol::for_cluster(on_time_key("batch-cluster", 5, HOUR)?),
    ] {
        let registered = run(&mut redis, &protocol.register_call())?;
        protocol.registered(Ok(&registered))?;
        // On "k": 3, then 1, then 2 (refused: one left), then 1; on "k1967" (the same slot): 5.
        let mut batch = begin(&protocol, "k", 3)?;
        for (key, n) in [("k", 1), ("k", 2), ("k1967", 5), ("k", 1)] {
            batch
                .join(begin(&protocol, key, n)?)
                .map_err(|_| "refused")?;
        }
        let reply = run(&mut redis, &batch)?;
        let outcomes: Vec<(i64, i64)> = (0..5)
            .map(|i| {
                let part = batch.reply_for(&reply, i);
                (part[0], part[1])
            })
            .collect();
        // (permitted, remaining) or (full, retry_after in µs).
        let hour = i64::try_from(HOUR.as_micros())?;
        assert_eq!(
            outcomes,
            [(1, 2), (1, 1), (0, hour), (1, 0), (1, 0)],
            "{}",
            protocol.config().name()
        );
    }
    Ok(())
}
