//! Whether a reply stands where the configuration waits for replicas: the count `WAIT`
//! answered against the replicas asked for.

use core::time::Duration;

use super::Protocol;
use crate::unavailable::{Unavailable, UnavailableKind};

impl Protocol {
    /// Whether a script call's reply stands, `WAIT` having counted `acknowledged` replicas
    /// after it: fewer than [`wait_for_replicas`](crate::Config::wait_for_replicas) asks for
    /// makes the attempt `Unavailable` (`Unreplicated`), whatever the script answered, since
    /// a failover could forget what it wrote. The production client reads each `WAIT` so; a
    /// client driving the protocol itself does the same.
    ///
    /// # Errors
    ///
    /// [`UnavailableKind::Unreplicated`] if too few replicas acknowledged.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, UnavailableKind};
    ///
    /// let config = Config::of("api", 5, Duration::from_secs(1))?.with_wait_for_replicas(2);
    /// let protocol = Protocol::new(config);
    /// assert_eq!(protocol.replicated(2), Ok(()));
    /// assert_eq!(protocol.replicated(3), Ok(()));
    /// assert_eq!(protocol.replicated(1).unwrap_err().kind(), UnavailableKind::Unreplicated);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn replicated(&self, acknowledged: u32) -> Result<(), Unavailable> {
        replicated(
            acknowledged,
            self.config.wait_for_replicas(),
            wait_millis(self.config.timeout()),
        )
    }
}

/// How long `WAIT` may wait for a limiter with `timeout`, in milliseconds: half the timeout,
/// so that writes the replicas did not acknowledge are told as such, within the call's bound,
/// rather than as a timeout; at least 1 (0 would wait for ever).
pub(crate) fn wait_millis(timeout: Duration) -> u64 {
    u64::try_from(timeout.as_millis() / 2)
        .unwrap_or(u64::MAX)
        .max(1)
}

/// Whether a reply stands, `WAIT` of `wait_millis` having counted `acknowledged` of the
/// `asked` replicas: the one rule of [`Protocol::replicated`] and the production client.
pub(crate) fn replicated(
    acknowledged: u32,
    asked: u32,
    wait_millis: u64,
) -> Result<(), Unavailable> {
    if acknowledged >= asked {
        return Ok(());
    }
    Err(Unavailable::new(
        UnavailableKind::Unreplicated,
        format!(
            "{acknowledged} of the {asked} replicas asked for acknowledged the call's writes \
             within {wait_millis} ms"
        ),
    ))
}
