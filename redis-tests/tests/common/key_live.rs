//! The checks of a live change of one key's limit (`set_key_limit`, `clear_key_limit`), shared
//! by the one-node and the cluster tests (`tests/shared/key_live.rs`,
//! `tests/cluster/key_live.rs`): the change takes effect at once, for the key's current window
//! too, its count kept, in every process; a process of an older version is told and makes its
//! attempt again under the new limit; clearing goes back to the configured limit; a process
//! registering later adopts it. After each change the process that made it attempts on the key
//! first, so that on a cluster the key's counter is of the new version (a process learns a
//! change there from such a counter, or from its background read).

use core::time::Duration;

use fixed_window::RateLimiterError;
use fixed_window_redis::{Config, Server, SharedError, SharedRateLimiter};
use fixed_window_spec::KeyWindow;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

/// No window boundary falls inside the test.
const HOUR: Duration = Duration::from_secs(3600);

/// A configuration whose every attempt reaches the server (no window remembered full).
fn config(name: &'static str, limit: u32) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of(name, limit, HOUR)?
        .with_timeout(Duration::from_secs(2))?
        .with_local_memory(0))
}

fn is_rejected(result: &Result<fixed_window_redis::SharedPermit, SharedError>) -> bool {
    matches!(
        result,
        Err(SharedError::Limited(RateLimiterError::Rejected { .. }))
    )
}

/// A key full at 2 of 2 is raised to 5 by one process: both have 3 more in the same window,
/// and every other key keeps the limiter's limit.
pub fn a_raise_frees_room_for_every_process(server: &dyn Fn() -> Server) -> TestResult {
    let config = config("live-raise", 2)?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), server())?;
    let b = SharedRateLimiter::connect_blocking(config, server())?;
    assert_eq!(b.try_acquire("paid")?.remaining(), Some(1));
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(0));
    assert!(is_rejected(&b.try_acquire("paid")));

    a.set_key_limit("paid", 5)?;
    assert_eq!((a.key_limit("paid"), a.key_limit("free")), (5, 2));
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(2));
    assert_eq!(b.try_acquire("paid")?.remaining(), Some(1));
    assert_eq!((b.key_limit("paid"), b.key_limit("free")), (5, 2));
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(0));
    for limiter in [&a, &b] {
        assert!(is_rejected(&limiter.try_acquire("paid")));
        let peek = limiter.peek("paid")?;
        assert_eq!((peek.remaining(), peek.limit()), (0, 5));
    }
    assert_eq!(b.try_acquire("free")?.remaining(), Some(1));
    Ok(())
}

/// A key with 3 of 5 used is lowered to 2: full at once for both processes (its count kept),
/// a weight above 2 is `TooMany`, and other keys keep 5.
pub fn a_lowering_below_the_count_fills_the_window_at_once(
    server: &dyn Fn() -> Server,
) -> TestResult {
    let config = config("live-lower", 5)?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), server())?;
    let b = SharedRateLimiter::connect_blocking(config, server())?;
    for (taken, limiter) in (1..).zip([&a, &b, &a]) {
        assert_eq!(limiter.try_acquire("paid")?.remaining(), Some(5 - taken));
    }

    b.set_key_limit("paid", 2)?;
    assert!(is_rejected(&b.try_acquire("paid")));
    assert!(is_rejected(&a.try_acquire("paid")));
    assert_eq!(a.key_limit("paid"), 2);
    assert!(matches!(
        a.try_acquire_n("paid", 3),
        Err(SharedError::Limited(RateLimiterError::TooMany {
            limit: 2,
            requested: 3,
            ..
        }))
    ));
    let peek = a.peek("paid")?;
    assert_eq!((peek.remaining(), peek.limit()), (0, 2));
    assert_eq!(a.try_acquire("free")?.remaining(), Some(4));
    Ok(())
}

/// A live limit cleared: the key goes back to its configured limit (its own, 4, for `paid`;
/// the limiter's, 2, for `free`), its count kept, in every process.
pub fn clearing_goes_back_to_the_configured_limit(server: &dyn Fn() -> Server) -> TestResult {
    let config = config("live-clear", 2)?.key_limit("paid", 4)?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), server())?;
    let b = SharedRateLimiter::connect_blocking(config, server())?;

    a.set_key_limit("paid", 1)?;
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(0));
    a.clear_key_limit("paid")?;
    assert_eq!(a.key_limit("paid"), 4);
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(2));
    assert_eq!(b.try_acquire("paid")?.remaining(), Some(1));
    assert_eq!(b.key_limit("paid"), 4);
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(0));
    assert!(is_rejected(&b.try_acquire("paid")));

    b.set_key_limit("free", 3)?;
    assert_eq!(b.try_acquire("free")?.remaining(), Some(2));
    assert_eq!(a.try_acquire("free")?.remaining(), Some(1));
    b.clear_key_limit("free")?;
    assert!(is_rejected(&b.try_acquire("free")));
    assert!(is_rejected(&a.try_acquire("free")));
    assert_eq!((a.key_limit("free"), b.key_limit("free")), (2, 2));
    Ok(())
}

/// A key with a limit of its own in the configuration keeps it, and its count, across a change
/// of the limiter's limit (`set_limit`): its counter, written under the old version with the
/// key's limit recorded, is rewritten under the new one.
pub fn a_configured_own_limit_outlasts_a_change_of_the_limiters_limit(
    server: &dyn Fn() -> Server,
) -> TestResult {
    let config = config("live-configured", 2)?.key_limit("paid", 5)?;
    let a = SharedRateLimiter::connect_blocking(config.clone(), server())?;
    let b = SharedRateLimiter::connect_blocking(config, server())?;
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(4));
    a.set_limit(3)?;
    assert_eq!(a.try_acquire("paid")?.remaining(), Some(3));
    assert_eq!(b.try_acquire("paid")?.remaining(), Some(2));
    assert_eq!((b.limit(), b.key_limit("paid")), (3, 5));
    Ok(())
}

/// A process that registers after a change adopts the live limit before its first attempt,
/// over the limit its own configuration gives the key, and agrees with the others on it.
pub fn a_process_registering_later_adopts_the_live_limits(
    server: &dyn Fn() -> Server,
) -> TestResult {
    let a = SharedRateLimiter::connect_blocking(config("live-later", 2)?, server())?;
    a.set_key_limit("vip", 7)?;
    assert_eq!(a.try_acquire("vip")?.remaining(), Some(6));

    let configured_apart = config("live-later", 2)?.key_limit("vip", 3)?;
    let c = SharedRateLimiter::connect_blocking(configured_apart, server())?;
    assert_eq!((c.key_limit("vip"), c.key_limit("free")), (7, 2));
    assert_eq!(c.try_acquire("vip")?.remaining(), Some(5));
    assert_eq!(a.try_acquire("vip")?.remaining(), Some(4));
    Ok(())
}

/// Limits set one after the other by three processes in turn on one key, in one window, each
/// process attempting until the server refuses: after each change the window holds exactly
/// the larger of its count and the new limit (never more than the limit in force lets it),
/// and every permit reports what the limit in force leaves; each process that grants one
/// decides the key by the limit the spec's [`KeyWindow`] says the window is counted by.
pub fn a_key_never_holds_more_than_the_limit_in_force(server: &dyn Fn() -> Server) -> TestResult {
    let config = config("live-sequence", 3)?;
    let processes = [
        SharedRateLimiter::connect_blocking(config.clone(), server())?,
        SharedRateLimiter::connect_blocking(config.clone(), server())?,
        SharedRateLimiter::connect_blocking(config, server())?,
    ];
    let mut count = 0;
    let mut window = KeyWindow::default();
    for (change, limit) in [4, 2, 6, 1, 9, 3].into_iter().enumerate() {
        let changer = change % processes.len();
        let before = count;
        processes[changer].set_key_limit("k", limit)?;
        window.change(limit);
        // The changer first, then the others in turn, until each has been refused.
        let mut refused = [false; 3];
        for turn in 0..30 {
            if refused.iter().all(|&r| r) {
                break;
            }
            let at = (changer + turn) % processes.len();
            match processes[at].try_acquire("k") {
                Ok(permit) => {
                    count += 1;
                    assert!(
                        count <= limit,
                        "change {change}: {count} permits of {limit}"
                    );
                    assert_eq!(permit.remaining(), Some(limit - count), "change {change}");
                    let decided_by = processes[at].key_limit("k");
                    assert_eq!(window.settle(decided_by), Ok(limit), "change {change}");
                }
                Err(SharedError::Limited(RateLimiterError::Rejected { limit: told, .. })) => {
                    assert_eq!(told, limit, "change {change}: the rejection's limit");
                    refused[at] = true;
                }
                Err(other) => return Err(format!("change {change}: {other}").into()),
            }
        }
        assert!(
            refused.iter().all(|&r| r),
            "change {change}: every process refused"
        );
        let peek = processes[changer].peek("k")?;
        assert_eq!((peek.remaining(), peek.limit()), (0, limit));
        assert_eq!(count, before.max(limit), "change {change}");
    }
    Ok(())
}
