//! One leasing process of `cargo xtask lease-binding`: a shared limiter leasing shares of key
//! `hot`, its threads asking for permits as fast as they can (or paced) through a span of whole
//! windows, each sleeping out a rejection until the window may have ended.
//!
//! Every permit is placed in the window the server counted it in
//! ([`SharedPermit::window_start`]: for a permit from a leased share, the window the share was
//! counted in), never by a clock of this process. It prints one line per window of the span:
//! `window granted rejected last_grant_us unavailable late clock_elsewhere`, the window's
//! index in the span, the permits this process was granted in it, the rejections it met there
//! (placed by the wall clock read before the attempt), how far into the window (µs, by that
//! clock) its last permit was asked for, the attempts the server did not decide in time (a
//! lost reply: any share it carried is dropped), the permits asked for only after their
//! window had ended (the wall clock read before the attempt at or past the window's end: a
//! share spent too late; the server's clock is the same machine's), and the permits a
//! placement by the wall clock read after the attempt and the time the permit said was left
//! would have put in another window.

use std::io::Write as _;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fixed_window_redis::{
    Config, Lease, Origin, SharedError, SharedPermit, SharedRateLimiter, redis,
};

use crate::cargo::Failure;

/// Flags of the worker (`cargo xtask lease-binding` passes them; not meant to be typed).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's URL.
    #[arg(long)]
    pub url: String,
    /// Permits per window of a second.
    #[arg(long)]
    pub limit: u32,
    /// The largest share.
    #[arg(long)]
    pub share: u32,
    /// Threads asking.
    #[arg(long)]
    pub threads: usize,
    /// The span's first window begins at this Unix second.
    #[arg(long)]
    pub start: u64,
    /// Windows in the span.
    #[arg(long)]
    pub windows: usize,
    /// Microseconds each thread leaves between its permits (0: none, as fast as it can).
    #[arg(long, default_value_t = 0)]
    pub interval_us: u64,
    /// The limiter's timeout for a reply, in milliseconds.
    #[arg(long, default_value_t = 250)]
    pub timeout_ms: u64,
}

/// The configuration every process of the workload shares: windows of a second aligned to
/// whole Unix seconds on the server's clock, so that a window's index in the span follows from
/// the start the server gives it, with the limiter's timeout of `timeout_ms`.
pub fn config(limit: u32, share: u32, timeout_ms: u64) -> Result<Config, Failure> {
    let lease = Lease::new(share).map_err(|err| err.to_string())?;
    Ok(Config::of("lease-binding", limit, PERIOD)
        .and_then(|config| config.with_origin(Origin::UnixEpoch))
        .and_then(|config| config.with_timeout(Duration::from_millis(timeout_ms)))
        .map_err(|err| err.to_string())?
        .with_lease(lease))
}

/// The one key every process asks for.
pub const KEY: &str = "hot";

/// The window of the workload.
pub const PERIOD: Duration = Duration::from_secs(1);

/// What one process saw in one window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    pub granted: u64,
    pub rejected: u64,
    /// Microseconds into the window of the last permit granted in it.
    pub last_grant_us: u64,
    /// Attempts the server did not decide (`SharedError::Unavailable`).
    pub unavailable: u64,
    /// Permits of this window asked for when the wall clock already read its end or later.
    pub late: u64,
    /// Permits of this window that the wall clock read after the attempt, with the time the
    /// permit said was left, places in another window ([`clock_window`]).
    pub clock_elsewhere: u64,
}

/// Runs the worker: asks until the span ends, then prints its windows.
///
/// # Errors
///
/// If the flags are out of range, the limiter cannot connect, or an attempt fails otherwise
/// than by a rejection.
pub fn run(args: &Args) -> Result<(), Failure> {
    if args.threads == 0 || args.threads > 64 || args.windows == 0 || args.windows > 600 {
        return Err("lease-binding-worker: --threads 1..=64, --windows 1..=600".into());
    }
    let client = redis::Client::open(args.url.as_str()).map_err(|err| err.to_string())?;
    // A loaded machine can miss the connection's timeout (a short one on purpose): tried
    // again until the span begins, then given up.
    let mut tries = 0_u32;
    let limiter = loop {
        match SharedRateLimiter::connect_blocking(
            config(args.limit, args.share, args.timeout_ms)?,
            client.clone(),
        ) {
            Ok(limiter) => break limiter,
            Err(err) if tries >= 1_000 || unix_us() >= args.start * 1_000_000 => {
                return Err(format!("connecting ({} tries): {err}", tries + 1));
            }
            Err(_) => tries += 1,
        }
    };
    let span = Span {
        start_us: args.start * 1_000_000,
        windows: args.windows,
    };
    let seen = Mutex::new(vec![Seen::default(); args.windows]);
    let outcome: Result<(), Failure> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..args.threads)
            .map(|_| scope.spawn(|| ask(&limiter, span, args.interval_us, &seen)))
            .collect();
        workers.into_iter().try_for_each(|worker| {
            worker
                .join()
                .unwrap_or_else(|_| Err("a thread panicked".into()))
        })
    });
    outcome?;
    let seen = seen
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut out = std::io::stdout().lock();
    for (window, seen) in seen.iter().enumerate() {
        writeln!(
            out,
            "{window} {} {} {} {} {} {}",
            seen.granted,
            seen.rejected,
            seen.last_grant_us,
            seen.unavailable,
            seen.late,
            seen.clock_elsewhere
        )
        .map_err(|err| format!("writing the windows: {err}"))?;
    }
    Ok(())
}

/// The windows measured, on the Unix clock in µs.
#[derive(Debug, Clone, Copy)]
struct Span {
    start_us: u64,
    windows: usize,
}

impl Span {
    fn end_us(self) -> u64 {
        self.start_us + self.windows as u64 * period_us()
    }

    /// The index of the window that contains `at_us`, if it is in the span.
    fn window(self, at_us: u64) -> Option<usize> {
        let index = usize::try_from(at_us.checked_sub(self.start_us)? / period_us()).ok()?;
        (index < self.windows).then_some(index)
    }
}

fn period_us() -> u64 {
    u64::try_from(PERIOD.as_micros()).unwrap_or(u64::MAX)
}

fn unix_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
        })
}

/// The window the server counted `permit` in, as an index into the span, with its start (µs
/// on the Unix clock); `None` outside the span.
///
/// # Errors
///
/// If the permit has no window (nobody counted it: the workload fails closed).
fn server_window(span: Span, permit: &SharedPermit) -> Result<Option<(usize, u64)>, Failure> {
    let start = permit
        .window_start()
        .ok_or("a permit nobody counted (the server failed)")?;
    let start = u64::try_from(start.as_micros()).unwrap_or(u64::MAX);
    Ok(span.window(start).map(|index| (index, start)))
}

/// The window a placement by this process's wall clock gives a permit granted at `now_us`
/// that reports `reset` left: the one ending at the whole period nearest `now_us + reset`.
/// Kept to count how often it differs from the server's window: a thread stalled for half a
/// window between the decision and the reading moves it, and so does a share whose reply
/// was read late (a leased permit's `reset` runs from the reply's arrival).
fn clock_window(span: Span, now_us: u64, reset: Duration) -> Option<usize> {
    let reset_us = u64::try_from(reset.as_micros()).unwrap_or(u64::MAX);
    let end = now_us.saturating_add(reset_us);
    let period = period_us();
    let end = (end + period / 2) / period * period;
    span.window(end.checked_sub(period)?)
}

/// One thread: waits for the span, then asks until it ends, a permit every `interval_us` at
/// most (on a schedule kept from the window's first permit, so a late wake-up is caught up).
fn ask(
    limiter: &SharedRateLimiter,
    span: Span,
    interval_us: u64,
    seen: &Mutex<Vec<Seen>>,
) -> Result<(), Failure> {
    let now = unix_us();
    if now < span.start_us {
        std::thread::sleep(Duration::from_micros(span.start_us - now));
    }
    let mut next_us = span.start_us;
    // Bounded in time (the span) and in count.
    for _ in 0..100_000_000_u64 {
        let now = unix_us();
        if now >= span.end_us() {
            break;
        }
        match limiter.try_acquire(KEY) {
            Ok(permit) => {
                let reset = permit
                    .reset_after()
                    .ok_or("a permit nobody counted (the server failed)")?;
                let after = unix_us();
                if let Some((window, begun)) = server_window(span, &permit)? {
                    let mut seen = seen
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    let entry = &mut seen[window];
                    entry.granted += 1;
                    entry.last_grant_us = entry.last_grant_us.max(now.saturating_sub(begun));
                    // Asked for only once the window was over: its permits are spent past
                    // the server's end of the window (the same machine's clock).
                    if now >= begun + period_us() {
                        entry.late += 1;
                    }
                    if clock_window(span, after, reset) != Some(window) {
                        entry.clock_elsewhere += 1;
                    }
                }
                if interval_us > 0 {
                    next_us += interval_us;
                    let now = unix_us();
                    if next_us > now {
                        std::thread::sleep(Duration::from_micros(next_us - now));
                    }
                }
            }
            Err(err @ SharedError::Limited(_)) => {
                if let Some(window) = span.window(now) {
                    seen.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)[window]
                        .rejected += 1;
                }
                let wait = err.retry_after().unwrap_or(Duration::from_millis(1));
                let left = Duration::from_micros(span.end_us().saturating_sub(unix_us()));
                std::thread::sleep(wait.min(left));
                next_us = unix_us();
            }
            // The server did not answer in time (a loaded machine): counted, and the run goes
            // on; the window's bound grows by the share the lost reply may have carried.
            Err(SharedError::Unavailable { .. }) => {
                if let Some(window) = span.window(now) {
                    seen.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)[window]
                        .unavailable += 1;
                }
            }
            Err(err) => return Err(format!("try_acquire: {err}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span() -> Span {
        Span {
            start_us: 10_000_000,
            windows: 3,
        }
    }

    #[test]
    fn a_permit_belongs_to_the_window_the_server_counted_it_in() -> Result<(), Failure> {
        let in_window = |start_us: u64| {
            SharedPermit::counted(fixed_window::Instant::ZERO, 0, Duration::ZERO)
                .in_window(Duration::from_micros(start_us))
        };
        assert_eq!(
            server_window(span(), &in_window(11_000_000))?,
            Some((1, 11_000_000))
        );
        assert_eq!(server_window(span(), &in_window(9_000_000))?, None);
        assert_eq!(server_window(span(), &in_window(13_000_000))?, None);
        let nobody = SharedPermit::counted(fixed_window::Instant::ZERO, 0, Duration::ZERO);
        assert!(server_window(span(), &nobody).is_err());
        Ok(())
    }

    #[test]
    fn the_clock_places_a_permit_in_the_window_ending_nearest_its_reset() {
        // Granted 0.3 s into the second window, told 0.7 s are left (give or take a little).
        assert_eq!(
            clock_window(span(), 11_300_000, Duration::from_micros(700_400)),
            Some(1)
        );
        assert_eq!(
            clock_window(span(), 11_300_000, Duration::from_micros(699_000)),
            Some(1)
        );
        // Read 0.6 s late: the next window, though the server counted it in this one.
        assert_eq!(
            clock_window(span(), 11_900_000, Duration::from_micros(700_000)),
            Some(2)
        );
        // Before and after the span.
        assert_eq!(
            clock_window(span(), 9_300_000, Duration::from_micros(700_000)),
            None
        );
        assert_eq!(
            clock_window(span(), 13_000_100, Duration::from_micros(999_900)),
            None
        );
    }
}
