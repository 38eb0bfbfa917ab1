//! Waiting for the next window: the deadline fixed at the call's start, a sleep only when the
//! window may open by it. The local clock is a manual one whose sleeps also move the server's
//! time key, so both clocks move together and every instant is exact.

use core::time::Duration;
use std::sync::Mutex;

use fixed_window::{Clock, Instant, Interrupt, Interrupted, ManualClock, RateLimiterError, Sleep};
use fixed_window_redis::{Config, SharedError, SharedRateLimiter};
use fixed_window_redis_test::RedisServer;

use crate::support::{TIME_KEY, TestResult, raw, server, set_time};

/// The server's time at the local clock's zero.
const BASE: u64 = 1_000_000;

/// A manual clock that, when it sleeps, sets the server's time key to match.
struct LinkedClock {
    local: ManualClock,
    server: Mutex<redis::Connection>,
}

impl LinkedClock {
    fn sync(&self) {
        let micros = BASE + self.local.now().as_nanos() / 1_000;
        let mut server = self
            .server
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        set_time(&mut server, micros).unwrap_or_else(|err| panic!("cannot set the time: {err}"));
    }
}

impl Clock for LinkedClock {
    fn now(&self) -> Instant {
        self.local.now()
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        self.local.sleep(duration, interrupt)?;
        self.sync();
        Ok(())
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        Box::pin(async move {
            self.local.sleep_async(duration).await?;
            self.sync();
            Ok(())
        })
    }
}

fn limiter(
    server: &RedisServer,
    max_wait: Duration,
) -> Result<SharedRateLimiter<LinkedClock>, Box<dyn std::error::Error>> {
    let mut redis = raw(server)?;
    set_time(&mut redis, BASE)?;
    let config = Config::of("waiting", 1, Duration::from_secs(1))?
        .with_time_key(TIME_KEY)?
        .with_max_wait(max_wait);
    let clock = LinkedClock {
        local: ManualClock::new(),
        server: Mutex::new(redis),
    };
    Ok(SharedRateLimiter::connect_blocking(config, server.client()?)?.with_clock(clock))
}

#[test]
fn a_call_whose_next_window_opens_by_its_deadline_sleeps_until_then_and_gets_a_permit() -> TestResult
{
    let server = server()?;
    let limiter = limiter(&server, Duration::from_secs(5))?;
    assert_eq!(limiter.acquire("k")?.at(), Instant::ZERO);
    let permit = limiter.acquire("k")?;
    assert_eq!(permit.at(), Instant::from_nanos(1_000_000_000));
    assert_eq!(permit.remaining(), Some(0));
    // The same through the async path, one window later.
    let permit = futures::executor::block_on(limiter.acquire_async("k"))?;
    assert_eq!(permit.at(), Instant::from_nanos(2_000_000_000));
    Ok(())
}

#[test]
fn a_call_whose_next_window_opens_after_its_deadline_is_rejected_without_sleeping() -> TestResult {
    let server = server()?;
    let limiter = limiter(&server, Duration::from_millis(999))?;
    limiter.acquire("k")?;
    let err = limiter.acquire("k").unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(1)));
    assert_eq!(limiter.clock().now(), Instant::ZERO);
    assert!(futures::executor::block_on(limiter.call_async("k", async {})).is_err());
    assert_eq!(limiter.clock().now(), Instant::ZERO);
    Ok(())
}

#[test]
fn an_interrupted_wait_fails_the_call_and_takes_nothing() -> TestResult {
    let server = server()?;
    let limiter = limiter(&server, Duration::from_secs(5))?;
    limiter.acquire("k")?;
    let interrupt = Interrupt::new();
    interrupt.interrupt();
    assert_eq!(
        limiter.call_interruptible("k", &interrupt, || "ran"),
        Err(SharedError::Limited(RateLimiterError::Interrupted {
            name: "waiting"
        }))
    );
    interrupt.clear();
    assert_eq!(
        limiter.call_interruptible("k", &interrupt, || "ran")?,
        "ran"
    );
    Ok(())
}
