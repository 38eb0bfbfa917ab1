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

use core::num::NonZeroU32;
use core::time::Duration;

use allocation_counter::measure;
use fixed_window::{KeyedRateLimiter, ManualClock};
use fixed_window_benches::MutexKeyedWindow;
use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};

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

fn row(name: &str, bytes: i64, keys: usize, per: u64) {
    println!("| {name} | {bytes} | {keys} | {:.1} |", ratio(bytes, per));
}

/// Bytes held by each limiter with `keys` keys called once in one window.
fn per_live_key(keys: u64) {
    let clock = ManualClock::new();
    let (bytes, limiter) = held(|| {
        let limiter = ours(&clock);
        for key in 0..keys {
            let _ = limiter.try_acquire(&key);
        }
        limiter
    });
    row(&format!("ours, {keys} keys"), bytes, limiter.len(), keys);
    let fake = FakeRelativeClock::default();
    let (bytes, limiter) = held(|| {
        let limiter = governor(&fake);
        for key in 0..keys {
            let _ = limiter.check_key(&key);
        }
        limiter
    });
    row(
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
    row(&format!("mutex, {keys} keys"), bytes, limiter.len(), keys);
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

fn main() {
    let mut args = std::env::args().skip(1).map(|arg| {
        arg.parse::<u64>()
            .unwrap_or_else(|_| panic!("{arg:?} is not a number of keys"))
    });
    let total = args.next().unwrap_or(10_000_000);
    let per_window = args.next().unwrap_or(1_000).max(1);
    let windows = total.div_ceil(per_window);

    println!("## Bytes per live key (keys held in one window)\n");
    println!("| limiter | bytes held | keys held | bytes per key |");
    println!("|---|---|---|---|");
    for keys in [1_u64, 1_000, 100_000] {
        per_live_key(keys);
    }

    println!(
        "\n## After {total} distinct keys, {per_window} a window, one window each ({windows} windows)\n"
    );
    println!("| limiter | bytes held | keys held | bytes per live key |");
    println!("|---|---|---|---|");
    let clock = ManualClock::new();
    let call = |limiter: &KeyedRateLimiter<u64, ManualClock>, key| {
        let _ = limiter.try_acquire(&key);
    };
    let (live, limiter) = churn(1, per_window, || ours(&clock), call, |_| {});
    row(
        "ours, one window's keys only",
        live,
        limiter.len(),
        per_window,
    );
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
    row("ours, swept as it goes", bytes, limiter.len(), per_window);
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
        let name = if retain {
            "governor, retain_recent() at every window"
        } else {
            "governor, never retain_recent()"
        };
        row(name, bytes, limiter.len(), per_window);
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
    row(
        "mutex, cleared each window",
        held_by_mutex,
        limiter.len(),
        per_window,
    );
    println!(
        "\nours after {total} keys: {:.2}× the memory of the live window's keys alone",
        ratio(bytes, u64::try_from(live).unwrap_or(1))
    );
}
