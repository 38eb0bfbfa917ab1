//! What the cluster tests share: a cluster, a limiter on it, and the ledger of the permits
//! granted per key and window.

use core::time::Duration;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use fixed_window_redis::{Config, SharedError, SharedPermit, SharedRateLimiter, UnavailableKind};
use fixed_window_redis_test::RedisCluster;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A permit, as the tests keep it: its key, the wall clock when its call was sent and when
/// it returned, the server's time from its decision to its window's end, and the permits its
/// window had left.
///
/// The server decided between `sent_us` and `at_us` (one machine, one wall clock), so its
/// window ends within `[sent_us + reset_us, at_us + reset_us]`: exactly one boundary of the
/// grid lies there while the call took less than a period, however late its thread ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    pub key: String,
    pub sent_us: u64,
    pub at_us: u64,
    pub reset_us: u64,
    pub remaining: u32,
}

impl Granted {
    /// The record of `permit` on `key`, whose call was sent at `sent_us`, read now.
    pub fn of(key: &str, sent_us: u64, permit: &SharedPermit) -> Option<Granted> {
        Some(Granted {
            key: key.to_owned(),
            sent_us,
            at_us: wall_micros(),
            reset_us: micros(permit.reset_after()?),
            remaining: permit.remaining()?,
        })
    }

    /// As a line a child process prints: `permit KEY SENT AT RESET REMAINING`.
    pub fn line(&self) -> String {
        format!(
            "permit {} {} {} {} {}",
            self.key, self.sent_us, self.at_us, self.reset_us, self.remaining
        )
    }

    /// Read back from [`line`](Granted::line).
    pub fn parse(line: &str) -> Option<Granted> {
        let mut words = line.strip_prefix("permit ")?.split(' ');
        let key = words.next()?.to_owned();
        let sent_us = words.next()?.parse().ok()?;
        let at_us = words.next()?.parse().ok()?;
        let reset_us = words.next()?.parse().ok()?;
        let remaining = words.next()?.parse().ok()?;
        Some(Granted {
            key,
            sent_us,
            at_us,
            reset_us,
            remaining,
        })
    }

    /// The window of the grid of `origin` and `period` (µs) the permit was counted in, if its
    /// call was quick enough to tell (one boundary within its bounds).
    fn window(&self, origin: u64, period: u64) -> Option<u64> {
        let earliest = (self.sent_us + self.reset_us).checked_sub(origin)?;
        let latest = (self.at_us + self.reset_us).checked_sub(origin)?;
        // The first boundary at or after the earliest end, and the next after it.
        let ends = earliest.div_ceil(period);
        (ends * period <= latest && (ends + 1) * period > latest).then(|| ends.saturating_sub(1))
    }
}

/// The permits per key and window of the grid of `origin` (microseconds) and `period`: window
/// `k` is `[origin + k·period, origin + (k+1)·period)`. A permit whose call took longer than a
/// period cannot be placed; more than one in twenty so is an error (the machine was too busy
/// for the test to tell anything).
pub fn per_window(
    granted: &[Granted],
    origin: u64,
    period: Duration,
) -> Result<BTreeMap<(String, u64), u32>, String> {
    let period = micros(period);
    let mut windows = BTreeMap::new();
    let mut unplaced = 0;
    for permit in granted {
        match permit.window(origin, period) {
            Some(window) => *windows.entry((permit.key.clone(), window)).or_insert(0) += 1,
            None => unplaced += 1,
        }
    }
    if unplaced * 20 > granted.len() {
        return Err(format!("{unplaced} of {} permits unplaced", granted.len()));
    }
    Ok(windows)
}

/// The windows that granted more than `most` permits.
pub fn over(windows: &BTreeMap<(String, u64), u32>, most: u32) -> Vec<((String, u64), u32)> {
    windows
        .iter()
        .filter(|&(_, &count)| count > most)
        .map(|(window, &count)| (window.clone(), count))
        .collect()
}

/// How long [`connect_replicated`] tries to register.
const REGISTRATION_DEADLINE: Duration = Duration::from_secs(10);

/// A limiter connected to `cluster` under `config`, its registration made again while it ends
/// `Unreplicated` (for at most [`REGISTRATION_DEADLINE`]); any other error at once.
///
/// Under [`Config::with_wait_for_replicas`] the registration's write must be acknowledged
/// within half the limiter's timeout. A cluster reports itself ok as soon as its replicas are
/// linked, and on a busy machine a replica's first acknowledgements can take longer than that:
/// a test whose subject is a later fault must not fail on its setup, so the registration is
/// made again. The next one finds the configuration the first stored and writes nothing, so its
/// `WAIT` vouches for nothing: the tests rest only on their permits, each granted on its own
/// call's acknowledged write.
pub fn connect_replicated(
    config: &Config,
    cluster: &RedisCluster,
) -> Result<SharedRateLimiter, Box<dyn std::error::Error>> {
    let began = std::time::Instant::now();
    loop {
        match SharedRateLimiter::connect_blocking(config.clone(), cluster.client()?) {
            Err(SharedError::Unavailable { cause, .. })
                if cause.kind() == UnavailableKind::Unreplicated
                    && began.elapsed() < REGISTRATION_DEADLINE =>
            {
                eprintln!("registration not acknowledged by a replica, made again: {cause}");
            }
            connected => return Ok(connected?),
        }
    }
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
                        let sent = wall_micros();
                        match limiter.try_acquire(key) {
                            Ok(permit) => granted.extend(Granted::of(key, sent, &permit)),
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

/// A process stopped with `SIGSTOP`, continued when dropped, whatever the test did meanwhile.
pub struct Stopped(u32);

impl Stopped {
    /// Stops the `redis-server` answering on `port`.
    pub fn node(cluster: &RedisCluster, port: u16) -> Result<Stopped, Box<dyn std::error::Error>> {
        let mut connection = cluster.node_client(port)?.get_connection()?;
        let info: String = redis::cmd("INFO").arg("server").query(&mut connection)?;
        let pid: u32 = info
            .lines()
            .find_map(|line| line.strip_prefix("process_id:"))
            .ok_or("no process_id in INFO server")?
            .trim()
            .parse()?;
        signal("-STOP", pid)?;
        Ok(Stopped(pid))
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = signal("-CONT", self.0);
    }
}

fn signal(signal: &str, pid: u32) -> Result<(), Box<dyn std::error::Error>> {
    let status = Command::new("kill")
        .arg(signal)
        .arg(pid.to_string())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("kill {signal} {pid}: {status}").into())
    }
}
