//! A clock on `std::time::Instant`, to price the permit path on the operating system's clock.

use core::time::Duration;
use std::sync::OnceLock;

use fixed_window::{Clock, Instant, Interrupt, Interrupted, Sleep, SystemClock};

/// A [`Clock`] read through `std::time::Instant::now()` (the operating system's monotonic
/// clock, a `clock_gettime` call); sleeps go through [`SystemClock`].
///
/// [`SystemClock`] reads the TSC through `quanta`; benchmarking the limiter on this clock
/// beside it shows what that choice saves on every call.
///
/// # Examples
///
/// ```
/// use fixed_window::Clock;
/// use fixed_window_benches::StdClock;
///
/// let (a, b) = (StdClock.now(), StdClock.now());
/// assert!(a <= b);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct StdClock;

fn epoch() -> std::time::Instant {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// Sleeps borrow their clock for the sleep's lifetime; the system clock is a unit, so one
/// static instance lends every sleep a `'static` borrow.
static SYSTEM: SystemClock = SystemClock;

impl Clock for StdClock {
    #[inline]
    fn now(&self) -> Instant {
        let elapsed = epoch().elapsed();
        Instant::from_nanos(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX))
    }

    fn sleep(&self, duration: Duration, interrupt: &Interrupt) -> Result<(), Interrupted> {
        SYSTEM.sleep(duration, interrupt)
    }

    fn sleep_async(&self, duration: Duration) -> Sleep<'_> {
        SYSTEM.sleep_async(duration)
    }
}
