//! `cargo xtask lease-binding`: leased shares where the limit binds. Four processes (by
//! default) lease on one key of a `redis-server` this command starts, with a limit each window
//! reaches early, every thread asking as fast as it can and sleeping out each rejection until
//! the window may have ended.
//!
//! Per window it reports the permits granted against the limit, the under-admission measured
//! (the limit less the permits granted, in a window that had demand for more: some process
//! was refused in it) beside the bound [`Lease::under_admission_bound`] states, and how far
//! into the window the last permit came. Over the span, the server's cost per permit granted:
//! `INFO commandstats` (`cmdstat_evalsha`: the scripts' whole runs) and the main thread's CPU
//! (`used_cpu_*_main_thread` of `INFO cpu`), each divided by the permits granted; the main
//! thread's CPU while idle is measured for as long beforehand and given beside it.
//!
//! Every permit is placed in the window the server counted it in (a leased permit in its
//! share's), never by a process's clock, so the count per window is authoritative; and the
//! server's own count of each window is read back from its append-only log ([`server_count`]).
//! It checks, as a matter of correctness: no window granted more than the limit; no window
//! granted more than the server counted in it, nor the server counted more than the limit; no
//! permit asked for after its window had ended; no window with demand refused more than the
//! bound. Any failing is a bug, and fails the command (after `target/lease-binding.json` is
//! written).
//!
//! The processes are this program itself, run as `cargo xtask lease-binding-worker` (see
//! [`worker`]).

mod server_count;
mod worker;

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fixed_window_redis::Lease;

use crate::cargo::Failure;
use crate::report::target_dir;
use crate::server_cost::{command_stats, main_thread_cpu, server_version, start_server};
pub use worker::{Args as WorkerArgs, run as run_worker};

/// Flags of `cargo xtask lease-binding`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Leasing processes.
    #[arg(long, default_value_t = 4)]
    pub processes: u32,
    /// Threads asking in each process.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Permits per window of a second.
    #[arg(long, default_value_t = 2_000)]
    pub limit: u32,
    /// The largest share (`Lease::new`; the default divisor).
    #[arg(long, default_value_t = 64)]
    pub share: u32,
    /// Windows measured.
    #[arg(long, default_value_t = 10)]
    pub windows: usize,
    /// Pace the threads so that together they reach the limit this many milliseconds into a
    /// window (0: no pacing, each thread asks as fast as it can).
    #[arg(long, default_value_t = 0)]
    pub fill_ms: u64,
    /// The processes' timeout for a reply, in milliseconds (short: more replies lost).
    #[arg(long, default_value_t = 250)]
    pub timeout_ms: u64,
    /// Do not log the server's writes to read its count per window back (the log costs the
    /// server's main thread a little CPU per write).
    #[arg(long)]
    pub no_server_count: bool,
}

impl Args {
    /// The microseconds each thread leaves between its permits for `fill_ms`.
    fn interval_us(&self) -> u64 {
        let askers = u64::from(self.processes) * self.threads as u64;
        (self.fill_ms * 1_000 * askers) / u64::from(self.limit).max(1)
    }
}

/// One window of the span, all processes together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub granted: u64,
    pub rejected: u64,
    /// Microseconds into the window of the last permit any process was granted in it.
    pub last_grant_us: u64,
    /// Attempts the server did not decide in time (placed by the clock read before them).
    pub unavailable: u64,
    /// Those of the window before: a call sent then may run on the server in this one (a
    /// server that did not run for a while runs its queued requests when it resumes).
    pub unavailable_before: u64,
    /// Permits asked for after their window had ended by the wall clock.
    pub late: u64,
    /// Permits a placement by the wall clock read after the attempt would have put in
    /// another window.
    pub clock_elsewhere: u64,
    /// The server's count of the window, read from its log (`None`: not read).
    pub server: Option<u64>,
}

impl Window {
    /// The permits refused while the window had room, if it had demand for more than it
    /// granted (someone was refused in it); `None` otherwise.
    fn under_admission(&self, limit: u32) -> Option<u64> {
        (self.rejected > 0).then(|| u64::from(limit).saturating_sub(self.granted))
    }

    /// The bound on this window's under-admission: `bound` (no share dropped early) plus
    /// `largest` for each attempt the server did not decide in time, in this window or the
    /// one before, whose reply, lost, may have carried a share of this window that is dropped
    /// unspent ([`Lease::under_admission_bound`]). A call sent more than a window before it
    /// runs is not provided for: the bound would then be over-stated as broken.
    fn bound(&self, bound: u64, largest: u32) -> u64 {
        let lost = self.unavailable.saturating_add(self.unavailable_before);
        bound.saturating_add(lost.saturating_mul(u64::from(largest)))
    }
}

/// Runs the workload, prints its table and writes `target/lease-binding.json`.
///
/// # Errors
///
/// If the flags are out of range, the server or a process cannot be started or read, or a
/// window broke the limit or the under-admission bound.
pub fn run(args: &Args) -> Result<(), Failure> {
    if !(1..=16).contains(&args.processes)
        || !(1..=64).contains(&args.threads)
        || !(1..=600).contains(&args.windows)
        || args.fill_ms >= 1_000
        || !(1..=10_000).contains(&args.timeout_ms)
    {
        return Err(
            "--processes 1..=16, --threads 1..=64, --windows 1..=600, --fill-ms 0..1000, --timeout-ms 1..=10000".into(),
        );
    }
    let lease = Lease::new(args.share).map_err(|err| err.to_string())?;
    // The configuration is checked here, before any process starts.
    let config = worker::config(args.limit, args.share, args.timeout_ms)?;
    let bound = lease.under_admission_bound(args.processes, args.limit);
    let largest = lease.largest_share(args.limit);
    let (server, _, mut admin) = start_server()?;
    let log = if args.no_server_count {
        None
    } else {
        Some(server_count::start(&mut admin, Duration::from_secs(10))?)
    };
    // The span begins on a whole second far enough ahead for the processes to start.
    let start = unix_seconds()? + 3;
    let exe = std::env::current_exe().map_err(|err| format!("this program's path: {err}"))?;
    let mut children = Vec::new();
    for _ in 0..args.processes {
        let child = Command::new(&exe)
            .args(["lease-binding-worker", "--url", &server.url()])
            .args(["--limit", &args.limit.to_string()])
            .args(["--share", &args.share.to_string()])
            .args(["--threads", &args.threads.to_string()])
            .args(["--start", &start.to_string()])
            .args(["--windows", &args.windows.to_string()])
            .args(["--interval-us", &args.interval_us().to_string()])
            .args(["--timeout-ms", &args.timeout_ms.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|err| format!("starting {}: {err}", exe.display()))?;
        children.push(child);
    }
    // The idle server's main-thread CPU over one second, then the statistics reset just
    // before the span.
    let idle_before = main_thread_cpu(&mut admin)?;
    std::thread::sleep(Duration::from_secs(1));
    let idle_cpu_per_s = main_thread_cpu(&mut admin)? - idle_before;
    sleep_until_us(start * 1_000_000 - 50_000)?;
    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .exec(&mut admin)
        .map_err(|err| format!("CONFIG RESETSTAT: {err}"))?;
    let cpu_before = main_thread_cpu(&mut admin)?;
    let mut windows = vec![Window::default(); args.windows];
    // Every process is waited for before any failure is reported.
    let outputs: Vec<_> = children
        .into_iter()
        .map(std::process::Child::wait_with_output)
        .collect();
    for output in outputs {
        let output = output.map_err(|err| format!("waiting for a process: {err}"))?;
        if !output.status.success() {
            return Err(format!("a leasing process failed: {}", output.status));
        }
        merge(&mut windows, &String::from_utf8_lossy(&output.stdout))?;
    }
    let cpu_usec = (main_thread_cpu(&mut admin)? - cpu_before) * 1e6;
    for index in 1..windows.len() {
        windows[index].unavailable_before = windows[index - 1].unavailable;
    }
    if let Some(log) = &log {
        let counts = server_count::read(log, &config.counter_key(worker::KEY))?;
        for (index, window) in windows.iter_mut().enumerate() {
            let begins = (start + index as u64) * 1_000_000;
            window.server = Some(counts.get(&begins).copied().unwrap_or(0));
        }
    }
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut admin)
        .map_err(|err| format!("INFO commandstats: {err}"))?;
    let (calls, usec) = command_stats(&stats, "evalsha").unwrap_or((0, 0));
    let version = server_version(&mut admin)?;
    let measured = Measured {
        windows,
        calls,
        usec,
        cpu_usec,
        idle_cpu_usec_per_s: idle_cpu_per_s * 1e6,
        bound,
        largest,
    };
    print!("{}", measured.table(args, &version));
    let path = target_dir().join("lease-binding.json");
    std::fs::write(&path, measured.json(args, &version))
        .map_err(|err| format!("writing {}: {err}", path.display()))?;
    eprintln!("xtask: lease-binding: wrote {}", path.display());
    let broken = violations(&measured.windows, args.limit, (bound, largest));
    if broken.is_empty() {
        Ok(())
    } else {
        Err(format!("BUG: {}", broken.join("; ")))
    }
}

/// What one run measured.
struct Measured {
    windows: Vec<Window>,
    /// `EVALSHA` calls and their µs over the span.
    calls: u64,
    usec: u64,
    /// The main thread's CPU over the span, µs.
    cpu_usec: f64,
    idle_cpu_usec_per_s: f64,
    bound: u64,
    /// The largest share a window grants.
    largest: u32,
}

impl Measured {
    fn granted(&self) -> u64 {
        self.windows.iter().map(|w| w.granted).sum()
    }

    #[allow(clippy::cast_precision_loss)]
    fn per_permit(&self, usec: f64) -> f64 {
        usec / self.granted().max(1) as f64
    }

    /// The main thread's CPU over the span less what it spends idle for as long (its
    /// timers), per permit: an estimate, as the idle second is not the span's.
    #[allow(clippy::cast_precision_loss)]
    fn net_cpu_per_permit(&self) -> f64 {
        let idle = self.idle_cpu_usec_per_s * self.windows.len() as f64;
        self.per_permit((self.cpu_usec - idle).max(0.0))
    }

    fn table(&self, args: &Args, version: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "lease-binding: redis-server {version}, {} processes × {} threads on one key, limit {} per 1 s window, largest share {}, bound on under-admission {} per window, {}",
            args.processes,
            args.threads,
            args.limit,
            args.share,
            self.bound,
            if args.fill_ms == 0 {
                "each thread asking as fast as it can".to_owned()
            } else {
                format!("paced to reach the limit {} ms into a window", args.fill_ms)
            }
        );
        let _ = writeln!(
            out,
            "| window | granted | server's count | limit | under-admission | bound | refusals | undecided (lost replies) | asked for after the window's end | placed elsewhere by the clock | last permit asked for at (ms into the window) |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|");
        for (index, w) in self.windows.iter().enumerate() {
            let under = w
                .under_admission(args.limit)
                .map_or_else(|| "no demand beyond".to_owned(), |u| u.to_string());
            #[allow(clippy::cast_precision_loss)]
            let last = w.last_grant_us as f64 / 1e3;
            let server = w
                .server
                .map_or_else(|| "not read".to_owned(), |count| count.to_string());
            let _ = writeln!(
                out,
                "| {index} | {} | {server} | {} | {under} | {} | {} | {} | {} | {} | {last:.1} |",
                w.granted,
                args.limit,
                w.bound(self.bound, self.largest),
                w.rejected,
                w.unavailable,
                w.late,
                w.clock_elsewhere
            );
        }
        #[allow(clippy::cast_precision_loss)]
        let per_call = self.granted() as f64 / self.calls.max(1) as f64;
        let _ = writeln!(
            out,
            "server, per permit granted: {:.3} µs commandstats (EVALSHA: {} calls, {per_call:.1} permits per call), {:.3} µs main-thread CPU ({:.3} µs less the idle server's {:.0} µs CPU per second)",
            self.per_permit(u64_f64(self.usec)),
            self.calls,
            self.per_permit(self.cpu_usec),
            self.net_cpu_per_permit(),
            self.idle_cpu_usec_per_s,
        );
        out
    }

    fn json(&self, args: &Args, version: &str) -> String {
        let windows: Vec<String> = self
            .windows
            .iter()
            .map(|w| {
                format!(
                    "{{ \"granted\": {}, \"server_count\": {}, \"refusals\": {}, \"undecided\": {}, \"late\": {}, \"clock_elsewhere\": {}, \"under_admission\": {}, \"bound\": {}, \"last_grant_usec\": {} }}",
                    w.granted,
                    w.server.map_or_else(|| "null".to_owned(), |count| count.to_string()),
                    w.rejected,
                    w.unavailable,
                    w.late,
                    w.clock_elsewhere,
                    w.under_admission(args.limit)
                        .map_or_else(|| "null".to_owned(), |u| u.to_string()),
                    w.bound(self.bound, self.largest),
                    w.last_grant_us
                )
            })
            .collect();
        format!(
            "{{\n  \"redis_version\": \"{version}\",\n  \"processes\": {},\n  \"threads\": {},\n  \"limit\": {},\n  \"period_ms\": 1000,\n  \"fill_ms\": {},\n  \"timeout_ms\": {},\n  \"max_share\": {},\n  \"under_admission_bound\": {},\n  \"permits_granted\": {},\n  \"evalsha_calls\": {},\n  \"usec_per_permit\": {:.4},\n  \"cpu_usec_per_permit\": {:.4},\n  \"cpu_usec_per_permit_less_idle\": {:.4},\n  \"idle_cpu_usec_per_second\": {:.1},\n  \"windows\": [\n    {}\n  ]\n}}\n",
            args.processes,
            args.threads,
            args.limit,
            args.fill_ms,
            args.timeout_ms,
            args.share,
            self.bound,
            self.granted(),
            self.calls,
            self.per_permit(u64_f64(self.usec)),
            self.per_permit(self.cpu_usec),
            self.net_cpu_per_permit(),
            self.idle_cpu_usec_per_s,
            windows.join(",\n    ")
        )
    }
}

#[allow(clippy::cast_precision_loss)]
fn u64_f64(value: u64) -> f64 {
    value as f64
}

/// Adds one process's lines (`window granted rejected last_grant_us unavailable late
/// clock_elsewhere`) to `windows`.
fn merge(windows: &mut [Window], lines: &str) -> Result<(), Failure> {
    for line in lines.lines() {
        let fields: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|err| format!("a process printed {line:?}: {err}"))?;
        let [
            index,
            granted,
            rejected,
            last,
            unavailable,
            late,
            clock_elsewhere,
        ] = fields[..]
        else {
            return Err(format!("a process printed {line:?}, not seven numbers"));
        };
        let window = usize::try_from(index)
            .ok()
            .and_then(|index| windows.get_mut(index))
            .ok_or_else(|| format!("a process printed window {index}, outside the span"))?;
        window.granted += granted;
        window.rejected += rejected;
        window.last_grant_us = window.last_grant_us.max(last);
        window.unavailable += unavailable;
        window.late += late;
        window.clock_elsewhere += clock_elsewhere;
    }
    Ok(())
}

/// The windows that broke a rule: more than `limit` granted (each permit placed in the window
/// the server counted it in); more granted than the server counted, or the server counting
/// more than `limit`; a permit asked for after its window had ended; or, with demand for more,
/// more than its bound ([`Window::bound`] of `bound` and `largest`) refused while there was
/// room.
fn violations(windows: &[Window], limit: u32, (bound, largest): (u64, u32)) -> Vec<String> {
    let mut broken = Vec::new();
    for (index, w) in windows.iter().enumerate() {
        if w.granted > u64::from(limit) {
            broken.push(format!(
                "window {index} granted {} permits, over the limit of {limit}",
                w.granted
            ));
        }
        if let Some(server) = w.server {
            if w.granted > server {
                broken.push(format!(
                    "window {index} granted {} permits, more than the server counted in it ({server})",
                    w.granted
                ));
            }
            if server > u64::from(limit) {
                broken.push(format!(
                    "the server counted {server} permits in window {index}, over the limit of {limit}"
                ));
            }
        }
        if w.late > 0 {
            broken.push(format!(
                "window {index} granted {} permits asked for after it had ended",
                w.late
            ));
        }
        let bound = w.bound(bound, largest);
        if let Some(under) = w.under_admission(limit)
            && under > bound
        {
            broken.push(format!(
                "window {index} refused {under} permits while it had room, over the bound of {bound}"
            ));
        }
    }
    broken
}

fn unix_seconds() -> Result<u64, Failure> {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|since| since.as_secs())
        .map_err(|err| format!("the clock is before 1970: {err}"))
}

fn sleep_until_us(at_us: u64) -> Result<(), Failure> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|err| format!("the clock is before 1970: {err}"))?;
    let now_us = u64::try_from(now.as_micros()).unwrap_or(u64::MAX);
    std::thread::sleep(Duration::from_micros(at_us.saturating_sub(now_us)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(granted: u64, rejected: u64) -> Window {
        Window {
            granted,
            rejected,
            ..Window::default()
        }
    }

    #[test]
    fn a_window_over_the_limit_is_a_violation() {
        assert!(violations(&[window(2_000, 5)], 2_000, (10, 4)).is_empty());
        let broken = violations(&[window(2_000, 5), window(2_001, 5)], 2_000, (10, 4));
        assert_eq!(broken.len(), 1);
        assert!(broken[0].contains("window 1 granted 2001"), "{broken:?}");
    }

    #[test]
    fn a_window_granting_more_than_the_server_counted_or_late_is_a_violation() {
        let counted = |granted, server| Window {
            server: Some(server),
            ..window(granted, 5)
        };
        // Fewer than counted: remainders dropped unspent.
        assert!(violations(&[counted(1_990, 2_000)], 2_000, (10, 4)).is_empty());
        let broken = violations(&[counted(1_995, 1_994)], 2_000, (10, 4));
        assert_eq!(broken.len(), 1);
        assert!(
            broken[0].contains("more than the server counted"),
            "{broken:?}"
        );
        let broken = violations(&[counted(2_000, 2_001)], 2_000, (10, 4));
        assert_eq!(broken.len(), 1);
        assert!(broken[0].contains("the server counted 2001"), "{broken:?}");
        let late = Window {
            late: 1,
            ..window(2_000, 5)
        };
        assert_eq!(violations(&[late], 2_000, (10, 4)).len(), 1);
    }

    #[test]
    fn under_admission_over_the_bound_is_a_violation_only_with_demand() {
        assert!(violations(&[window(1_990, 1)], 2_000, (10, 4)).is_empty());
        assert_eq!(violations(&[window(1_989, 1)], 2_000, (10, 4)).len(), 1);
        // Nobody refused: the window had no demand for more, whatever it granted.
        assert!(violations(&[window(3, 0)], 2_000, (10, 4)).is_empty());
        // Two lost replies: each may have dropped a share of up to 4.
        let lost = Window {
            unavailable: 2,
            ..window(1_982, 1)
        };
        assert!(violations(&[lost], 2_000, (10, 4)).is_empty());
        // So may one sent in the window before.
        let earlier = Window {
            unavailable: 1,
            unavailable_before: 1,
            ..window(1_982, 1)
        };
        assert!(violations(&[earlier], 2_000, (10, 4)).is_empty());
        let lost = Window {
            unavailable: 2,
            ..window(1_981, 1)
        };
        assert_eq!(violations(&[lost], 2_000, (10, 4)).len(), 1);
    }

    #[test]
    fn pacing_spreads_the_limit_over_the_fill_time_across_every_thread() {
        let args = Args {
            processes: 4,
            threads: 2,
            limit: 2_000,
            share: 64,
            windows: 1,
            fill_ms: 400,
            timeout_ms: 250,
            no_server_count: false,
        };
        // 8 threads, 250 permits each in 400 ms.
        assert_eq!(args.interval_us(), 1_600);
        assert_eq!(Args { fill_ms: 0, ..args }.interval_us(), 0);
    }

    #[test]
    fn merge_adds_processes_and_rejects_what_is_not_a_window() {
        let mut windows = vec![Window::default(); 2];
        merge(&mut windows, "0 10 1 500 0 0 0\n1 7 0 20 0 0 0\n").unwrap();
        merge(&mut windows, "0 5 2 800 1 2 3\n").unwrap();
        assert_eq!(
            windows[0],
            Window {
                granted: 15,
                rejected: 3,
                last_grant_us: 800,
                unavailable: 1,
                unavailable_before: 0,
                late: 2,
                clock_elsewhere: 3,
                server: None,
            }
        );
        assert!(merge(&mut windows, "2 1 0 0 0 0 0").is_err());
        assert!(merge(&mut windows, "0 1 0 0 0 0").is_err());
        assert!(merge(&mut windows, "0 x 0 0 0 0 0").is_err());
    }
}
