//! What the cluster tests share: a cluster, a limiter on it, and the ledger of the permits
//! granted per key and window.

use core::time::Duration;
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use fixed_window_redis::{SharedPermit, SharedRateLimiter};

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A permit, as the tests keep it: its key, when it arrived (wall clock), the server's end of
/// its window (estimated from that), and the permits its window had left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    pub key: String,
    pub at_us: u64,
    pub window_end_us: u64,
    pub remaining: u32,
}

impl Granted {
    /// The record of `permit` on `key`, read now.
    pub fn of(key: &str, permit: &SharedPermit) -> Option<Granted> {
        let reset = permit.reset_after()?;
        let at_us = wall_micros();
        Some(Granted {
            key: key.to_owned(),
            at_us,
            window_end_us: at_us.saturating_add(micros(reset)),
            remaining: permit.remaining()?,
        })
    }

    /// As a line a child process prints: `permit KEY AT END REMAINING`.
    pub fn line(&self) -> String {
        format!(
            "permit {} {} {} {}",
            self.key, self.at_us, self.window_end_us, self.remaining
        )
    }

    /// Read back from [`line`](Granted::line).
    pub fn parse(line: &str) -> Option<Granted> {
        let mut words = line.strip_prefix("permit ")?.split(' ');
        let key = words.next()?.to_owned();
        let at_us = words.next()?.parse().ok()?;
        let window_end_us = words.next()?.parse().ok()?;
        let remaining = words.next()?.parse().ok()?;
        Some(Granted {
            key,
            at_us,
            window_end_us,
            remaining,
        })
    }
}

/// The permits per key and window of the grid of `origin` (microseconds) and `period`: window
/// `k` is `[origin + k·period, origin + (k+1)·period)`, and a permit is in the window whose end
/// is nearest its estimated end.
pub fn per_window(
    granted: &[Granted],
    origin: u64,
    period: Duration,
) -> BTreeMap<(String, u64), u32> {
    let period = micros(period);
    let mut windows = BTreeMap::new();
    for permit in granted {
        let since = permit.window_end_us.saturating_sub(origin);
        let ends = (since + period / 2) / period;
        *windows
            .entry((permit.key.clone(), ends.saturating_sub(1)))
            .or_insert(0) += 1;
    }
    windows
}

/// The windows that granted more than `most` permits.
pub fn over(windows: &BTreeMap<(String, u64), u32>, most: u32) -> Vec<((String, u64), u32)> {
    windows
        .iter()
        .filter(|&(_, &count)| count > most)
        .map(|(window, &count)| (window.clone(), count))
        .collect()
}

/// The limiter's registered origin.
pub fn origin(limiter: &SharedRateLimiter) -> Result<u64, Box<dyn std::error::Error>> {
    Ok(limiter.origin().ok_or("the limiter has not registered")?)
}

/// Microseconds since the Unix epoch: the server's `TIME` on this machine.
pub fn wall_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, micros)
}

pub fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// How long a thread pauses after a rejection.
const PAUSE: Duration = Duration::from_millis(1);

/// Threads on `limiter`, each trying `keys` in turn until `stop` is set (at most `most`
/// attempts each): the permits granted, and the `Unavailable` answers with their wall times.
pub fn hammer(
    limiter: &SharedRateLimiter,
    keys: &[&str],
    threads: usize,
    most: usize,
    stop: &std::sync::atomic::AtomicBool,
) -> (Vec<Granted>, Vec<u64>) {
    use std::sync::atomic::Ordering;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                scope.spawn(move || {
                    let mut granted = Vec::new();
                    let mut unavailable = Vec::new();
                    for attempt in 0..most {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let key = keys[(attempt + thread) % keys.len()];
                        match limiter.try_acquire(key) {
                            Ok(permit) => granted.extend(Granted::of(key, &permit)),
                            // A rejection is local and quick while the window is known
                            // full: a short pause keeps the attempts bounded by time as well.
                            Err(fixed_window_redis::SharedError::Limited(_)) => {
                                std::thread::sleep(PAUSE);
                            }
                            Err(_) => unavailable.push(wall_micros()),
                        }
                    }
                    (granted, unavailable)
                })
            })
            .collect();
        let mut granted = Vec::new();
        let mut unavailable = Vec::new();
        for handle in handles {
            let (g, u) = handle.join().unwrap_or_default();
            granted.extend(g);
            unavailable.extend(u);
        }
        (granted, unavailable)
    })
}
