//! A clock on tokio's timer, so limiters follow tokio's paused and advanced test time.

use core::time::Duration;

use crate::clock::{Clock, Sleep};
use crate::instant::{Instant, saturating_nanos};
use crate::interrupt::{Interrupt, Interrupted};

/// A [`Clock`] that reads `tokio::time::Instant` and sleeps with `tokio::time::sleep`
/// (feature `tokio`).
///
/// Under `#[tokio::test(start_paused = true)]` a limiter on this clock waits in tokio's
/// virtual time: `tokio::time::advance` opens new windows, and waiting calls complete as soon
/// as the runtime auto-advances. Its epoch is the clock's creation. Blocking sleeps wait in
/// real time on the [`Interrupt`] handle, as [`SystemClock`](crate::SystemClock)'s do; use the
/// async methods under tokio.
///
/// # Panics
///
/// [`sleep_async`](Clock::sleep_async) must be awaited inside a tokio runtime with the time
/// driver enabled, as `tokio::time::sleep` must.
///
/// # Examples
///
/// With tokio's time paused, a waiting call completes at the next window without real waiting.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{RateLimiter, TokioClock};
///
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build()?;
/// runtime.block_on(async {
///     let limiter = RateLimiter::of("api", 1, Duration::from_secs(3600))?
///         .with_clock(TokioClock::new())
///         .with_max_wait(Duration::from_secs(3600));
///     limiter.acquire_async().await?;
///     let second = limiter.acquire_async().await?;
///     assert_eq!(second.at().as_nanos(), 3_600_000_000_000);
///     Ok::<(), Box<dyn std::error::Error>>(())
/// })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub struct TokioClock {
    epoch: tokio::time::Instant,
}

impl TokioClock {
    /// A clock whose epoch is tokio's current instant.
    ///
    /// # Examples
    ///
    /// Under paused time the clock reads exactly what tokio has advanced.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, TokioClock};
    ///
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build()?;
    /// runtime.block_on(async {
    ///     let clock = TokioClock::new();
    ///     assert_eq!(clock.now(), Instant::ZERO);
    ///     tokio::time::advance(Duration::from_secs(1)).await;
    ///     assert_eq!(clock.now(), Instant::from_nanos(1_000_000_000));
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new() -> TokioClock {
        TokioClock {
            epoch: tokio::time::Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        TokioClock::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        Instant::from_nanos(saturating_nanos(self.epoch.elapsed()))
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        interrupt.wait_timeout(duration)
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        // tokio's deadline arithmetic saturates far in the future, so any duration is safe.
        let sleep = tokio::time::sleep(duration);
        Box::pin(async move {
            sleep.await;
            Ok(())
        })
    }
}
