//! Leased shares of a window ([`Config::with_lease`]): leasing and exact processes on one key
//! share one count and never pass the limit; a share is spent only before its local deadline,
//! is dropped when the limit changes, and a server that loses its data lets through no more
//! than the exact mode does; what a window refuses while it has room stays within the stated
//! bound. Each is judged by the spec's rules (`fixed_window_spec::Lease`, `spend_deadline`),
//! never by the limiter's own.

use core::time::Duration;

use fixed_window::{Clock, ManualClock};
use fixed_window_redis::{Config, DEFAULT_LEASE_DIVISOR, Lease, SharedRateLimiter};
use fixed_window_spec::{Count, Grid, Lease as Rule, spend_deadline};

use crate::support::{HOUR, TestResult, connect, on_time_key, pause, raw, server, set_time};

const T0: u64 = 1_000_000_000;

/// The largest share in these tests.
const SHARE: u32 = 8;

/// The spec's rule for the shares of [`leasing`].
fn rule() -> Result<Rule, Box<dyn std::error::Error>> {
    Ok(Rule::checked(SHARE, DEFAULT_LEASE_DIVISOR).ok_or("a positive share and divisor")?)
}

fn leasing(
    name: &'static str,
    limit: u32,
    period: Duration,
) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(on_time_key(name, limit, period)?.with_lease(Lease::new(SHARE)?))
}

/// The count the server holds for `key` of limiter `name` (0 if no counter).
fn counted(
    redis: &mut redis::Connection,
    name: &str,
    key: &str,
) -> Result<u64, Box<dyn std::error::Error>> {
    let counter: Option<String> = redis::cmd("GET")
        .arg(format!("fixed-window:{{{name}}}:{key}"))
        .query(redis)?;
    let Some(counter) = counter else {
        return Ok(0);
    };
    let used = counter.split(':').nth(1).ok_or("a counter is start:used")?;
    Ok(u64::from_str_radix(used, 16)?)
}

/// Takes permits of `key` from each limiter in turn until every one has been refused (or
/// `rounds` rounds): how many each was granted.
fn round_robin<C: Clock>(limiters: &[&SharedRateLimiter<C>], key: &str, rounds: usize) -> Vec<u32> {
    let mut granted = vec![0; limiters.len()];
    let mut refused = vec![false; limiters.len()];
    for _ in 0..rounds {
        for (index, limiter) in limiters.iter().enumerate() {
            match limiter.try_acquire(key) {
                Ok(_) => granted[index] += 1,
                Err(_) => refused[index] = true,
            }
        }
        if refused.iter().all(|&r| r) {
            break;
        }
    }
    granted
}

#[test]
fn leasing_and_exact_processes_on_one_key_never_pass_the_limit() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let limit = 50;
    let a = connect(&server, leasing("mixed", limit, HOUR)?)?;
    let b = connect(&server, leasing("mixed", limit, HOUR)?)?;
    let c = connect(&server, leasing("mixed", limit, HOUR)?)?;
    let exact = connect(&server, on_time_key("mixed", limit, HOUR)?)?;
    for window in 0..3 {
        set_time(&mut redis, T0 + window * 3_600_000_000)?;
        let granted = round_robin(&[&a, &b, &c, &exact], "k", 200);
        let total: u32 = granted.iter().sum();
        assert!(
            total <= limit,
            "window {window}: {granted:?} granted, limit {limit}"
        );
        // Nothing was dropped (no deadline passed, nothing failed): every share was spent.
        assert_eq!(total, limit, "window {window}: {granted:?}");
        assert!(counted(&mut redis, "mixed", "k")? <= u64::from(limit));
        // Every process was granted something: the exact one too, as the shares shrank.
        assert!(
            granted.iter().all(|&g| g > 0),
            "window {window}: {granted:?}"
        );
    }
    Ok(())
}

#[test]
fn a_share_is_never_spent_at_or_after_its_local_deadline() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let period = Duration::from_secs(1);
    let clock = ManualClock::new();
    let limiter = connect(&server, leasing("deadline", 100, period)?)?.with_clock(clock.clone());
    // 10 ms before the window's end on the server's clock: the share's deadline is 10 ms
    // after the send (the clock's reading 0), less 0.1 % (10 µs).
    let (now, end) = (u128::from(T0 + 990_000), u128::from(T0 + 1_000_000));
    let deadline = spend_deadline(0, now * 1_000, end * 1_000).ok_or("a deadline")?;
    let deadline = Duration::from_nanos(u64::try_from(deadline)?);
    assert_eq!(deadline, Duration::from_micros(9_990));
    set_time(&mut redis, T0 + 990_000)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(SHARE - 1));
    assert_eq!(counted(&mut redis, "deadline", "k")?, u64::from(SHARE));
    clock.advance(deadline.saturating_sub(Duration::from_micros(1)));
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(SHARE - 2));
    assert_eq!(counted(&mut redis, "deadline", "k")?, u64::from(SHARE));

    // At the deadline the share is dropped: the permit is the next window's, counted there.
    clock.advance(Duration::from_micros(1));
    set_time(&mut redis, T0 + 1_000_000)?;
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(99));
    assert_eq!(counted(&mut redis, "deadline", "k")?, 1);
    Ok(())
}

#[test]
fn a_share_is_dropped_when_the_limit_changes() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    // A manual clock standing still: no background read of the configuration, so this
    // process hears of another's change only through its own calls.
    let a = connect(&server, leasing("change", 100, HOUR)?)?.with_clock(ManualClock::new());
    assert_eq!(a.try_acquire("k")?.remaining(), Some(SHARE - 1));
    a.set_limit(60)?;
    // Under the new limit the old share is not spent: a new one is leased and counted.
    assert_eq!(a.try_acquire("k")?.remaining(), Some(SHARE - 1));
    assert_eq!(counted(&mut redis, "change", "k")?, u64::from(2 * SHARE));

    // Another process's change reaches this one at its next call to the server.
    let b = connect(&server, leasing("change", 60, HOUR)?)?;
    b.set_limit(30)?;
    for _ in 0..SHARE - 1 {
        a.try_acquire("k")?;
    }
    // a's share is spent; its next lease meets the change and is made again under it: the
    // window holds 16 of 30, so the share is 14 / 4 = 3.
    assert_eq!(a.limit(), 60);
    assert_eq!(a.try_acquire("k")?.remaining(), Some(2));
    assert_eq!(a.limit(), 30);
    // Its own change drops the 2 left: the next share is (40 - 19) / 4 = 5.
    a.set_limit(40)?;
    assert_eq!(a.try_acquire("k")?.remaining(), Some(4));
    assert_eq!(
        counted(&mut redis, "change", "k")?,
        u64::from(2 * SHARE + 3 + 5)
    );
    Ok(())
}

/// A server that loses its data (`FLUSHALL`, or a restart without persistence) starts the
/// window's count again, as it does for exact processes: every permit spent was counted by
/// the server before or after the loss, never by neither.
#[test]
fn a_server_losing_its_data_lets_through_no_more_than_the_exact_mode() -> TestResult {
    let mut server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let limit = 40;
    let a = connect(&server, leasing("lost", limit, HOUR)?)?;
    let b = connect(&server, leasing("lost", limit, HOUR)?)?;
    let exact = connect(&server, on_time_key("lost", limit, HOUR)?)?;
    let mut spent = 0;
    for _ in 0..3 {
        spent += u64::from(a.try_acquire("k").is_ok()) + u64::from(b.try_acquire("k").is_ok());
    }
    let before = counted(&mut redis, "lost", "k")?;
    redis::cmd("FLUSHALL").exec(&mut redis)?;
    set_time(&mut redis, T0 + 10)?;
    let granted = round_robin(&[&a, &b, &exact], "k", 200);
    spent += u64::from(granted.iter().sum::<u32>());
    let flushed = counted(&mut redis, "lost", "k")?;
    assert!(
        spent <= before + flushed,
        "{spent} spent, {before} + {flushed} counted"
    );
    assert!(spent <= 2 * u64::from(limit));

    // A restart, in the next window, while a and b hold the rest of their shares.
    set_time(&mut redis, T0 + 3_600_000_000)?;
    let mut spent = 0;
    for _ in 0..3 {
        spent += u64::from(a.try_acquire("k").is_ok()) + u64::from(b.try_acquire("k").is_ok());
    }
    let before = counted(&mut redis, "lost", "k")?;
    server.restart()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0 + 3_600_000_020)?;
    spent += u64::from(restarted_round_robin(&[&a, &b, &exact], "k")?);
    let after = counted(&mut redis, "lost", "k")?;
    assert!(
        spent <= before + after,
        "{spent} spent, {before} + {after} counted"
    );
    Ok(())
}

/// [`round_robin`] after a restart: the first calls of each limiter may fail (the connection
/// is made again), and those are not permits.
fn restarted_round_robin(
    limiters: &[&SharedRateLimiter],
    key: &str,
) -> Result<u32, Box<dyn std::error::Error>> {
    let mut granted = 0;
    let mut refused = vec![false; limiters.len()];
    for _ in 0..200 {
        for (index, limiter) in limiters.iter().enumerate() {
            match limiter.try_acquire(key) {
                Ok(_) => granted += 1,
                Err(error) if error.retry_after().is_some() => refused[index] = true,
                Err(_) => {}
            }
        }
        if refused.iter().all(|&r| r) {
            return Ok(granted);
        }
    }
    Err("the limiters did not fill the window again after the restart".into())
}

/// Two processes take a few permits and stop, holding the rest of their shares; a third fills
/// the window. What it refuses while the window has room (the others' unspent remainders) is
/// within the spec's `Lease::under_admission_bound`.
#[test]
fn a_window_refuses_no_more_than_the_stated_bound_while_it_has_room() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let limit = 100;
    let limiters = [
        connect(&server, leasing("room", limit, HOUR)?)?,
        connect(&server, leasing("room", limit, HOUR)?)?,
        connect(&server, leasing("room", limit, HOUR)?)?,
    ];
    let mut spent = 0;
    for limiter in &limiters[..2] {
        for _ in 0..3 {
            spent += u32::from(limiter.try_acquire("k").is_ok());
        }
    }
    let mut refused = false;
    for _ in 0..2 * limit {
        if limiters[2].try_acquire("k").is_ok() {
            spent += 1;
        } else {
            refused = true;
            break;
        }
    }
    assert!(refused);
    assert_eq!(counted(&mut redis, "room", "k")?, u64::from(limit));
    let room = u64::from(limit - spent);
    let bound = rule()?.under_admission_bound(3, limit);
    assert!(room <= bound, "{room} refused with room, bound {bound}");
    // The two held remainders are the room: 5 each.
    assert_eq!(room, 2 * u64::from(SHARE - 3));
    Ok(())
}

#[test]
fn a_bad_lease_is_a_clear_configuration_error() {
    assert_eq!(
        Lease::new(0).map_err(|e| (e.field(), e.to_string())),
        Err((
            "lease",
            "lease's largest share must be at least 1 permit, got 0".to_owned()
        ))
    );
    assert!(
        Lease::new(1)
            .and_then(|lease| lease.with_divisor(0))
            .is_err()
    );
}

/// A period so long (about 127 years from an origin of 0) that the server's `TIME` stays in
/// the window beginning at 0 for the whole test: the window is begun, as the script's hot
/// path needs.
const LONG_PERIOD: &str = "4000000000000000";

/// Runs `script` as a lease call of one permit with the largest share `max` and divisor
/// `divisor` on a window of `limit` that has counted `used`: the reply without the server's
/// time, and the count it leaves. `weights` is the call's `ARGV[7]`: empty, the hot path's
/// form; `"1"`, the same call spelt as a weighted one, which takes the full path.
fn lease_once(
    redis: &mut redis::Connection,
    script: &redis::Script,
    (limit, used, max, divisor): (u32, u32, u32, u32),
    weights: &str,
) -> Result<(Vec<i64>, u64), Box<dyn std::error::Error>> {
    let (config, counter) = ("fixed-window:{hot}:config", "fixed-window:{hot}:k");
    redis::cmd("SET")
        .arg(config)
        .arg(format!("0:{LONG_PERIOD}:{limit}"))
        .exec(redis)?;
    redis::cmd("SET")
        .arg(counter)
        .arg(format!("0:{used:x}"))
        .arg("PX")
        .arg(3_600_000)
        .exec(redis)?;
    let mut reply: Vec<i64> = script
        .key(config)
        .key(counter)
        .arg(LONG_PERIOD)
        .arg(limit)
        .arg(1_000)
        .arg("lease")
        .arg(1)
        .arg("")
        .arg(weights)
        .arg("")
        .arg(max)
        .arg(divisor)
        .invoke(redis)?;
    // The server's time differs from call to call, and with it a refusal's retry-after.
    if let [code, retry, now, _] = &mut reply[..] {
        *now = 0;
        if *code == 0 {
            *retry = 0;
        }
    }
    Ok((reply, counted(redis, "hot", "k")?))
}

/// Whether `script`'s hot path leases as its full path does, and as the spec's rule says (the
/// share's size, counted whole at once), on windows of every fill.
fn hot_lease_agrees_with_full_path(
    redis: &mut redis::Connection,
    script: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let script = redis::Script::new(script);
    // Every reading of the test lies in window 0: the count is the spec's window 0.
    let grid = Grid::checked(0, LONG_PERIOD.parse()?).ok_or("a positive period")?;
    for (max, divisor) in [(1, 1), (8, 4), (64, 4), (5, 1)] {
        let rule = Rule::checked(max, divisor).ok_or("a positive share and divisor")?;
        for limit in [1, 7, 100, 1_000] {
            // Past the limit too: a limit lowered below the count.
            for used in (0..=limit + 2).filter(|u| *u < 30 || u % 37 == 0 || *u + 2 >= limit) {
                let case = (limit, used, max, divisor);
                let hot = lease_once(redis, &script, case, "")?;
                let full = lease_once(redis, &script, case, "1")?;
                if hot != full {
                    return Err(format!("{case:?}: hot path {hot:?}, full path {full:?}").into());
                }
                // A share of the rule's size counted whole, or a refusal that counts nothing.
                let mut count = Count::stored(0, used);
                let leasing = rule.decide(&count, &grid, limit, 0, 1);
                leasing.apply(&mut count, 1);
                let share = leasing.share();
                let code = if share == 0 { 0 } else { 4 };
                let expected = (code, i64::from(share), u64::from(count.used()));
                if (hot.0[0], hot.0[1], hot.1) != expected {
                    return Err(format!("{case:?}: {hot:?}, the rule's {expected:?}").into());
                }
            }
        }
    }
    Ok(())
}

#[test]
fn a_lease_on_the_hot_path_takes_the_share_the_full_path_would() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    hot_lease_agrees_with_full_path(&mut redis, fixed_window_redis::SCRIPT)?;
    // The evidence that the comparison can fail: hot paths that size or count the share
    // otherwise are caught.
    let hot_share = "math.max(math.min(math.floor((limit - used) / lease_divisor), lease_max), 1)";
    let planted = [
        (
            "no divisor",
            hot_share,
            "math.max(math.min(limit - used, lease_max), 1)",
        ),
        (
            "share not counted",
            "string.format('%x', used + share)",
            "string.format('%x', used + 1)",
        ),
    ];
    for (bug, from, to) in planted {
        assert!(
            fixed_window_redis::SCRIPT.contains(from),
            "the script no longer holds {from:?}"
        );
        let script = fixed_window_redis::SCRIPT.replace(from, to);
        match hot_lease_agrees_with_full_path(&mut redis, &script) {
            Ok(()) => panic!("the comparison did not catch the planted bug: {bug}"),
            Err(caught) => eprintln!("{bug}: caught: {caught}"),
        }
    }
    Ok(())
}

#[test]
fn attempts_that_find_a_lease_in_flight_spend_its_share_instead_of_counting() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let config = leasing("landing", 1_000, HOUR)?.with_timeout(Duration::from_secs(10))?;
    let limiter = connect(&server, config)?;
    // The server answers nothing for a second: the first attempt's lease call is in flight
    // while the others begin.
    pause(&mut redis, 1_000)?;
    let others = SHARE - 1;
    let granted = std::thread::scope(|scope| {
        let first = scope.spawn(|| limiter.try_acquire("k"));
        std::thread::sleep(Duration::from_millis(300));
        let rest: Vec<_> = (0..others)
            .map(|_| scope.spawn(|| limiter.try_acquire("k")))
            .collect();
        std::iter::once(first)
            .chain(rest)
            .map(std::thread::ScopedJoinHandle::join)
            .filter(|joined| matches!(joined, Ok(Ok(_))))
            .count()
    });
    assert_eq!(granted, 1 + others as usize);
    // One share, all of it spent by the attempts: none of them was counted apart.
    assert_eq!(counted(&mut redis, "landing", "k")?, u64::from(SHARE));
    Ok(())
}

/// The same with tasks on a tokio runtime of their own (`try_acquire_async`): an attempt that
/// finds the lease call in flight waits for it in its own task, timed by that runtime, and
/// spends from the share it brings.
#[test]
fn tasks_that_find_a_lease_in_flight_spend_its_share_instead_of_counting() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let config = leasing("landing-async", 1_000, HOUR)?.with_timeout(Duration::from_secs(10))?;
    let limiter = std::sync::Arc::new(connect(&server, config)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    pause(&mut redis, 1_000)?;
    let others = SHARE - 1;
    let granted = runtime.block_on(async {
        let attempt = || {
            let limiter = std::sync::Arc::clone(&limiter);
            tokio::spawn(async move { limiter.try_acquire_async("k").await })
        };
        let first = attempt();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let rest: Vec<_> = (0..others).map(|_| attempt()).collect();
        let mut granted = 0;
        for task in std::iter::once(first).chain(rest) {
            if matches!(task.await, Ok(Ok(_))) {
                granted += 1;
            }
        }
        granted
    });
    assert_eq!(granted, 1 + others);
    assert_eq!(counted(&mut redis, "landing-async", "k")?, u64::from(SHARE));
    Ok(())
}

/// Handing back (`SharedRateLimiter::hand_back`): a process that stops spending its share
/// returns the rest to the window's count, and another process is granted those permits in
/// the same window; the window still grants exactly its limit, never more.
#[test]
fn handed_back_permits_are_granted_to_another_process_in_the_same_window() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let limit = 20;
    let leasing = connect(&server, leasing("back", limit, HOUR)?)?;
    let exact = connect(&server, on_time_key("back", limit, HOUR)?)?;
    // A share of min(20 / 4, 8) = 5: the caller's one and 4 held.
    assert_eq!(leasing.try_acquire("k")?.remaining(), Some(4));
    let mut granted = 1;
    while exact.try_acquire("k").is_ok() {
        granted += 1;
    }
    assert_eq!(granted, limit - 4);
    assert_eq!(counted(&mut redis, "back", "k")?, u64::from(limit));

    assert_eq!(leasing.hand_back()?, 4);
    assert_eq!(counted(&mut redis, "back", "k")?, u64::from(limit - 4));
    while exact.try_acquire("k").is_ok() {
        granted += 1;
    }
    // The 4 went to the other process; the handing one's share is gone, so it asks the
    // server, which refuses: the window granted its limit, no more.
    assert_eq!(granted, limit);
    assert!(leasing.try_acquire("k").is_err());
    assert_eq!(counted(&mut redis, "back", "k")?, u64::from(limit));
    // Nothing is left to hand back.
    assert_eq!(leasing.hand_back()?, 0);
    Ok(())
}

#[test]
fn nothing_is_handed_back_into_a_later_window() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let leasing = connect(&server, leasing("later", 100, HOUR)?)?;
    let exact = connect(&server, on_time_key("later", 100, HOUR)?)?;
    assert_eq!(leasing.try_acquire("k")?.remaining(), Some(SHARE - 1));
    // The next window begins on the server, and another process counts in it.
    set_time(&mut redis, T0 + 3_600_000_000)?;
    for _ in 0..3 {
        exact.try_acquire("k")?;
    }
    assert_eq!(leasing.hand_back()?, 0);
    assert_eq!(counted(&mut redis, "later", "k")?, 3);
    Ok(())
}

/// A share spent by several threads while it is handed back: every permit of it is granted
/// once or handed back once, so after the rest of the window is filled the window granted
/// exactly its limit.
#[test]
fn the_sum_never_passes_the_limit_while_a_share_is_handed_back() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let limit = 60;
    let leasing = connect(&server, leasing("sum", limit, HOUR)?)?;
    let exact = connect(&server, on_time_key("sum", limit, HOUR)?)?;
    assert!(leasing.try_acquire("k").is_ok());
    // What is left of the share is out of the process's hands at once: the next permits are
    // the server's, counted there.
    assert_eq!(leasing.hand_back()?, SHARE - 1);
    let mut granted = 1;
    for _ in 0..3 {
        granted += u32::from(leasing.try_acquire("k").is_ok());
    }
    // Threads spending the new share while it is handed back.
    let (spent, back) = std::thread::scope(|scope| {
        let spenders: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    (0..5)
                        .map(|_| u32::from(leasing.try_acquire("k").is_ok()))
                        .sum::<u32>()
                })
            })
            .collect();
        let back = leasing.hand_back();
        let spent: u32 = spenders
            .into_iter()
            .map(|spender| spender.join().unwrap_or(0))
            .sum();
        (spent, back)
    });
    back?;
    granted += spent;
    // What the threads leased and left unspent, handed back too.
    leasing.hand_back()?;
    while exact.try_acquire("k").is_ok() {
        granted += 1;
    }
    assert_eq!(granted, limit);
    assert_eq!(counted(&mut redis, "sum", "k")?, u64::from(limit));
    Ok(())
}

/// Runs `script`'s "release" on a counter `stored` for a share leased in the window starting
/// at `leased_in`, handing back `back`: the reply and the counter after.
fn release_once(
    redis: &mut redis::Connection,
    script: &redis::Script,
    stored: &str,
    (leased_in, back): (u64, u32),
) -> Result<(Vec<i64>, Option<String>), Box<dyn std::error::Error>> {
    let (config, counter) = ("fixed-window:{rel}:config", "fixed-window:{rel}:k");
    redis::cmd("SET")
        .arg(counter)
        .arg(stored)
        .arg("PX")
        .arg(3_600_000)
        .exec(redis)?;
    let reply: Vec<i64> = script
        .key(config)
        .key(counter)
        .arg(LONG_PERIOD)
        .arg(10)
        .arg(1_000)
        .arg("release")
        .arg(1)
        .arg("")
        .arg("")
        .arg("")
        .arg(leased_in)
        .arg(back)
        .invoke(redis)?;
    let after: Option<String> = redis::cmd("GET").arg(counter).query(redis)?;
    Ok((reply, after))
}

/// Whether `script`'s "release" takes handed-back permits off only the window they were
/// leased in, by at most what the counter holds, keeping the rest of the counter's text.
fn release_keeps_the_bound(
    redis: &mut redis::Connection,
    script: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let script = redis::Script::new(script);
    // The counter stored, the window leased in and the permits handed back, and the permits
    // taken off with the counter after.
    let cases = [
        // The same window: 3 off 0x1c = 28.
        ("0:1c", (0, 3), (3, "0:19")),
        // A later window (start 0x100 = 256) holds other processes' count: nothing off.
        ("100:5", (0, 3), (0, "100:5")),
        // Never below 0 (the counter holds less than handed back).
        ("0:2", (0, 5), (2, "0:0")),
        // A cluster counter's settings stay as they were.
        ("40:9:1000:10:0/2", (64, 4), (4, "40:5:1000:10:0/2")),
    ];
    for (stored, args, (off, after)) in cases {
        let got = release_once(redis, &script, stored, args)?;
        let expected = (vec![5, off], Some(after.to_owned()));
        if got != expected {
            return Err(format!("{stored} {args:?}: {got:?}, expected {expected:?}").into());
        }
    }
    Ok(())
}

#[test]
fn a_hand_back_comes_off_only_its_window_and_never_below_zero() -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    release_keeps_the_bound(&mut redis, fixed_window_redis::SCRIPT)?;
    // The evidence that the comparison can fail: a release that ignores the window, or
    // takes off more than the counter holds, is caught.
    let planted = [
        (
            "any window",
            "tonumber(string.sub(held, 1, colon - 1), 16) ~= leased_in then",
            "false then",
        ),
        ("below zero", "back = math.min(back, used)", "back = back"),
    ];
    for (bug, from, to) in planted {
        assert!(
            fixed_window_redis::SCRIPT.contains(from),
            "the script no longer holds {from:?}"
        );
        let script = fixed_window_redis::SCRIPT.replace(from, to);
        match release_keeps_the_bound(&mut redis, &script) {
            Ok(()) => panic!("the comparison did not catch the planted bug: {bug}"),
            Err(caught) => eprintln!("{bug}: caught: {caught}"),
        }
    }
    Ok(())
}
