//! Memory of the keyed limiters, counted by a counting allocator (`allocation-counter`): the
//! bytes each live key holds, and the bytes held after ten million distinct keys have passed
//! through one window each.
//!
//! ```sh
//! cargo run --release -p fixed-window-benches --example keyed_memory            # 10,000,000 keys, 1,000 a window
//! cargo run --release -p fixed-window-benches --example keyed_memory -- 100000 1000
//! ```
//!
//! Everything runs on the main thread, so every allocation and free is counted. The figures
//! are net bytes still allocated when the limiter has done its calls (table, entries, keys,
//! and any removed entries still awaiting reclamation), measured with the limiter alive.
//!
//! The tables go to standard output, and the same figures to `target/keyed-memory.json` for
//! the report (`cargo xtask bench` keeps that file with its first run):
//!
//! ```json
//! {"limit": 10, "period_ns": 1000000000,
//!  "per_live_key": [{"limiter": "ours", "keys": 1000, "bytes": 88464, "held": 1000}, …],
//!  "churn": {"keys": 10000000, "per_window": 1000, "windows": 10000,
//!            "results": [{"limiter": "ours-live-window", "bytes": 88464, "held": 1000}, …]}}
//! ```
//!
//! `limiter` is `ours`, `governor` or `mutex`, and in `churn` also `ours-live-window` (ours
//! holding one window's keys only: the bound) and `governor-retain-recent` (governor with
//! `retain_recent()` called at every window).

use core::num::NonZeroU32;
use core::time::Duration;

use std::path::PathBuf;
use std::process::ExitCode;

use allocation_counter::measure;
use fixed_window::{KeyedRateLimiter, ManualClock};
use fixed_window_benches::MutexKeyedWindow;
use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};
use serde_json::{Value, json};

/// Each window's length, on every limiter's virtual clock.
const PERIOD: Duration = Duration::from_secs(1);

/// Permits per key per window.
const LIMIT: u32 = 10;

/// Net bytes `run` leaves allocated while the limiter it builds is alive, and that limiter.
fn held<L>(run: impl FnOnce() -> L) -> (i64, L) {
    let mut limiter = None;
    let info = measure(|| limiter = Some(run()));
    (
        info.bytes_current,
        limiter.expect("the run returns its limiter"),
    )
}

fn ours(clock: &ManualClock) -> KeyedRateLimiter<u64, ManualClock> {
    KeyedRateLimiter::of("memory", LIMIT, PERIOD)
        .expect("a valid configuration")
        .with_clock(clock.clone())
}

type Governor = RateLimiter<
    u64,
    governor::state::keyed::DashMapStateStore<u64>,
    FakeRelativeClock,
    governor::middleware::NoOpMiddleware<<FakeRelativeClock as governor::clock::Clock>::Instant>,
>;

/// governor's keyed limiter with the same budget: `LIMIT` per `PERIOD`, as a burst of `LIMIT`
/// replenished one per `PERIOD / LIMIT` (so a key unused for a period is fully replenished, and
/// `retain_recent` may drop it).
fn governor(clock: &FakeRelativeClock) -> Governor {
    let limit = NonZeroU32::new(LIMIT).expect("a positive limit");
    let quota = Quota::with_period(PERIOD / LIMIT)
        .expect("a non-zero period")
        .allow_burst(limit);
    RateLimiter::dashmap_with_clock(quota, clock.clone())
}

fn mutex(clock: &ManualClock) -> MutexKeyedWindow<u64, ManualClock> {
    MutexKeyedWindow::new(LIMIT, PERIOD, clock.clone())
}

/// `bytes / per`, for printing: the figures are far below 2^52, where `f64` is exact.
#[allow(clippy::cast_precision_loss)]
fn ratio(bytes: i64, per: u64) -> f64 {
    bytes as f64 / per as f64
}

/// Prints a table row and returns its figures as JSON, `limiter` being the report's name of
/// the row's limiter.
fn row(limiter: &str, name: &str, bytes: i64, held: usize, per: u64) -> Value {
    println!("| {name} | {bytes} | {held} | {:.1} |", ratio(bytes, per));
    json!({ "limiter": limiter, "bytes": bytes, "held": held })
}

/// Bytes held by each limiter with `keys` keys called once in one window.
fn per_live_key(keys: u64) -> [Value; 3] {
    let clock = ManualClock::new();
    let (bytes, limiter) = held(|| {
        let limiter = ours(&clock);
        for key in 0..keys {
            let _ = limiter.try_acquire(&key);
        }
        limiter
    });
    let ours_row = row(
        "ours",
        &format!("ours, {keys} keys"),
        bytes,
        limiter.len(),
        keys,
    );
    let fake = FakeRelativeClock::default();
    let (bytes, limiter) = held(|| {
        let limiter = governor(&fake);
        for key in 0..keys {
            let _ = limiter.check_key(&key);
        }
        limiter
    });
    let governor_row = row(
        "governor",
        &format!("governor, {keys} keys"),
        bytes,
        limiter.len(),
        keys,
    );
    let (bytes, limiter) = held(|| {
        let limiter = mutex(&clock);
        for key in 0..keys {
            let _ = limiter.try_acquire(&key);
        }
        limiter
    });
    let mutex_row = row(
        "mutex",
        &format!("mutex, {keys} keys"),
        bytes,
        limiter.len(),
        keys,
    );
    [ours_row, governor_row, mutex_row].map(|mut row| {
        row["keys"] = keys.into();
        row
    })
}

/// Bytes held after `windows` windows of `per_window` fresh keys each: `call` is one call for
/// a key, `next` moves to the next window.
fn churn<L>(
    windows: u64,
    per_window: u64,
    make: impl FnOnce() -> L,
    call: impl Fn(&L, u64),
    next: impl Fn(&L),
) -> (i64, L) {
    held(|| {
        let limiter = make();
        for window in 0..windows {
            for key in window * per_window..(window + 1) * per_window {
                call(&limiter, key);
            }
            if window + 1 < windows {
                next(&limiter);
            }
        }
        limiter
    })
}

/// Bytes held by each limiter after `windows` windows of `per_window` fresh keys each (`total`
/// in all), beside ours holding one window's keys only.
fn after_churn(total: u64, per_window: u64, windows: u64) -> Vec<Value> {
    println!("| limiter | bytes held | keys held | bytes per live key |");
    println!("|---|---|---|---|");
    let mut churned = Vec::new();
    let clock = ManualClock::new();
    let call = |limiter: &KeyedRateLimiter<u64, ManualClock>, key| {
        let _ = limiter.try_acquire(&key);
    };
    let (live_window, limiter) = churn(1, per_window, || ours(&clock), call, |_| {});
    churned.push(row(
        "ours-live-window",
        "ours, one window's keys only",
        live_window,
        limiter.len(),
        per_window,
    ));
    let clock = ManualClock::new();
    let (bytes, limiter) = churn(
        windows,
        per_window,
        || ours(&clock),
        call,
        |_| {
            clock.advance(PERIOD);
        },
    );
    churned.push(row(
        "ours",
        "ours, swept as it goes",
        bytes,
        limiter.len(),
        per_window,
    ));
    for retain in [false, true] {
        let fake = FakeRelativeClock::default();
        let (bytes, limiter) = churn(
            windows,
            per_window,
            || governor(&fake),
            |limiter, key| {
                let _ = limiter.check_key(&key);
            },
            |limiter| {
                fake.advance(PERIOD);
                if retain {
                    limiter.retain_recent();
                }
            },
        );
        let (id, name) = if retain {
            (
                "governor-retain-recent",
                "governor, retain_recent() at every window",
            )
        } else {
            ("governor", "governor, never retain_recent()")
        };
        churned.push(row(id, name, bytes, limiter.len(), per_window));
    }
    let clock = ManualClock::new();
    let (held_by_mutex, limiter) = churn(
        windows,
        per_window,
        || mutex(&clock),
        |limiter, key| {
            let _ = limiter.try_acquire(&key);
        },
        |_| clock.advance(PERIOD),
    );
    churned.push(row(
        "mutex",
        "mutex, cleared each window",
        held_by_mutex,
        limiter.len(),
        per_window,
    ));
    println!(
        "\nours after {total} keys: {:.2}× the memory of the live window's keys alone",
        ratio(bytes, u64::try_from(live_window).unwrap_or(1))
    );

    churned
}

/// The keys in all and per window, from the arguments `[TOTAL [PER_WINDOW]]`.
fn arguments() -> Result<(u64, u64), String> {
    let mut numbers = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.parse::<u64>() {
            Ok(n) if n > 0 => numbers.push(n),
            _ => return Err(format!("{arg:?} is not a positive number of keys")),
        }
    }
    match numbers.as_slice() {
        [] => Ok((10_000_000, 1_000)),
        [total] => Ok((*total, 1_000)),
        [total, per_window] => Ok((*total, *per_window)),
        _ => Err("expected at most two numbers: TOTAL [PER_WINDOW]".to_owned()),
    }
}

fn main() -> ExitCode {
    let (total, per_window) = match arguments() {
        Ok(numbers) => numbers,
        Err(err) => {
            eprintln!("keyed_memory: {err}");
            eprintln!("usage: keyed_memory [TOTAL [PER_WINDOW]] (default 10000000 1000)");
            return ExitCode::from(2);
        }
    };
    let windows = total.div_ceil(per_window);
    // Whole windows: the keys that pass are a multiple of the window's.
    let total = windows * per_window;

    println!("## Bytes per live key (keys held in one window)\n");
    println!("| limiter | bytes held | keys held | bytes per key |");
    println!("|---|---|---|---|");
    let live: Vec<Value> = [1_u64, 1_000, 100_000]
        .into_iter()
        .flat_map(per_live_key)
        .collect();

    println!(
        "\n## After {total} distinct keys, {per_window} a window, one window each ({windows} windows)\n"
    );
    let churned = after_churn(total, per_window, windows);

    let figures = json!({
        "limit": LIMIT,
        "period_ns": u64::try_from(PERIOD.as_nanos()).unwrap_or(u64::MAX),
        "per_live_key": live,
        "churn": {
            "keys": total,
            "per_window": per_window,
            "windows": windows,
            "results": churned,
        },
    });
    let path = target_dir().join("keyed-memory.json");
    let text = serde_json::to_string_pretty(&figures).unwrap_or_default() + "\n";
    if let Err(err) = std::fs::write(&path, text) {
        eprintln!("keyed_memory: cannot write {}: {err}", path.display());
        return ExitCode::FAILURE;
    }
    eprintln!("keyed_memory: figures in {}", path.display());
    ExitCode::SUCCESS
}

/// `CARGO_TARGET_DIR`, or the workspace's `target/`.
fn target_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir))
}
