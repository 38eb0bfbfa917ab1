//! The one clock of every history: the server's. The server runs on this host, and its `TIME`
//! reads the host's real-time clock (`gettimeofday`), so a process here reading that clock just
//! before sending a request and just after its reply brackets the time the script read, in
//! microseconds, whatever process it is. (A remote server would need its clock read over the
//! network; here the bracket is exact.)

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch on the host's real-time clock, as the server's `TIME`
/// gives them.
pub fn server_now() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
}

/// The real-time clock must not step during a run (a step would move the server's time under
/// the history): this compares it with the monotonic clock before and after.
pub struct Steady {
    offset: i128,
    monotonic: Instant,
}

/// How far the two clocks may drift apart in one run: slewing moves the real-time clock by at
/// most 0.05%, which a run of seconds keeps under a millisecond.
const STEP: i128 = 5_000;

impl Steady {
    pub fn start() -> Steady {
        let monotonic = Instant::now();
        Steady {
            offset: i128::from(server_now()),
            monotonic,
        }
    }

    /// An error if the real-time clock stepped since [`Steady::start`].
    pub fn check(&self) -> Result<(), String> {
        let elapsed = i128::try_from(self.monotonic.elapsed().as_micros()).unwrap_or(i128::MAX);
        let moved = i128::from(server_now()) - self.offset;
        if (moved - elapsed).abs() > STEP {
            return Err(format!(
                "the host's real-time clock stepped by {} µs during the run: its history cannot be judged",
                moved - elapsed
            ));
        }
        Ok(())
    }
}
