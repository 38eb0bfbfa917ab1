//! Changing the shared limit (`set_limit`): the new limit takes effect at once, for the current
//! window too, and reaches every process through the server; a process still holding the old
//! limit is told the new one instead of counting by the old one.
//!
//! Two kinds of tests. The limiter's own (`SharedRateLimiter`, one node) run the production
//! driver: its retry under the new limit, its atomics, its local memory. The scenario tests
//! drive the same sans-IO [`Protocol`] the limiter does (begin, the script, finish, and a
//! [`Decision::LimitChanged`] made again, as the limiter makes it) with the script's text as a
//! parameter, so that each also runs on planted broken scripts, each of which it must catch:
//! the evidence that the test can fail.

use core::time::Duration;

use fixed_window::Instant;
use fixed_window_redis::{
    Begin, Config, Decision, Protocol, SCRIPT, ScriptCall, ScriptReply, SharedError,
};

use crate::support::{HOUR, TestResult, connect, on_time_key, raw, run_script, server, set_time};

const T0: u64 = 5_000_000;
const PERIOD: u64 = 1_000_000;

/// An attempt that finds the limit changed is made again, at most this many times (as the
/// limiter does).
const CHANGE_RETRIES: u32 = 3;

/// One process of a scenario: its protocol, and the script it runs (the production one or a
/// planted variant).
struct Process {
    protocol: Protocol,
    script: redis::Script,
}

impl Process {
    /// A process of the limiter `name` with `limit` per [`PERIOD`] on the time key, one node or
    /// (`cluster`) counting as on a cluster, registered.
    fn registered(
        redis: &mut redis::Connection,
        script: &str,
        name: &'static str,
        limit: u32,
        cluster: bool,
    ) -> Result<Process, Box<dyn std::error::Error>> {
        let config = on_time_key(name, limit, Duration::from_micros(PERIOD))?;
        let protocol = if cluster {
            Protocol::for_cluster(config)
        } else {
            Protocol::new(config)
        };
        let process = Process {
            protocol,
            script: redis::Script::new(script),
        };
        let reply = process.run(redis, &process.protocol.register_call())?;
        process.protocol.registered(Ok(&reply))?;
        Ok(process)
    }

    fn run(
        &self,
        redis: &mut redis::Connection,
        call: &ScriptCall,
    ) -> redis::RedisResult<Vec<i64>> {
        run_script(redis, &self.script, call.keys(), call.args())
    }

    fn set_limit(
        &self,
        redis: &mut redis::Connection,
        limit: u32,
    ) -> Result<u32, Box<dyn std::error::Error>> {
        let reply = self.run(redis, &self.protocol.set_limit_call(limit)?)?;
        Ok(self.protocol.limit_set(Ok(&reply))?)
    }

    /// An attempt for `n` permits of `key` (`None`: a drain), made again under the new limit
    /// while the server says it changed.
    fn attempt(
        &self,
        redis: &mut redis::Connection,
        key: &str,
        n: Option<u32>,
    ) -> Result<Decision, Box<dyn std::error::Error>> {
        let t = Instant::ZERO;
        for _ in 0..=CHANGE_RETRIES {
            let begun = match n {
                Some(n) => self.protocol.begin_n(key, n, t, t)?,
                None => self.protocol.begin_drain(key, t)?,
            };
            let call = match begun {
                Begin::Decided(decision) => return Ok(decision),
                Begin::Call(call) => call,
            };
            let reply = self.run(redis, &call)?;
            let decision = self
                .protocol
                .finish_n(key, n.unwrap_or(1), (t, t, t), Ok(&reply));
            if !matches!(decision, Decision::LimitChanged { .. }) {
                return Ok(decision);
            }
        }
        Err("the limit kept changing".into())
    }

    /// The permits left after a permit for `n` of `key`, or an error saying what was decided
    /// instead.
    fn permitted(
        &self,
        redis: &mut redis::Connection,
        key: &str,
        n: u32,
    ) -> Result<u32, Box<dyn std::error::Error>> {
        match self.attempt(redis, key, Some(n))? {
            Decision::Permitted { remaining, .. } => Ok(remaining),
            other => Err(format!("{key}: no permit for {n}: {other:?}").into()),
        }
    }

    /// An attempt for one permit of `key`, which must be rejected (a full window); `why`
    /// says what a permit (or any other decision) would mean.
    fn rejected(&self, redis: &mut redis::Connection, key: &str, why: &str) -> TestResult {
        match self.attempt(redis, key, Some(1))? {
            Decision::Rejected { .. } => Ok(()),
            other => Err(format!("{why}: {key}: {other:?}").into()),
        }
    }
}

fn get(redis: &mut redis::Connection, key: &str) -> redis::RedisResult<String> {
    redis::cmd("GET").arg(key).query(redis)
}

/// `script` with `from` replaced by `to` (a planted bug); `from` must be in it.
fn planted(from: &str, to: &str) -> String {
    assert!(SCRIPT.contains(from), "the script no longer holds {from:?}");
    SCRIPT.replace(from, to)
}

/// Runs `scenario` on the production script, which must pass, and on each planted variant,
/// each of which it must catch.
fn passes_and_catches(scenario: fn(&str) -> TestResult, planted: &[(&str, String)]) -> TestResult {
    scenario(SCRIPT)?;
    for (bug, script) in planted {
        match scenario(script) {
            Ok(()) => panic!("the scenario did not catch the planted bug: {bug}"),
            // Shown with --nocapture: what caught it.
            Err(caught) => eprintln!("{bug}: caught: {caught}"),
        }
    }
    Ok(())
}

/// The stored-newer check of one node removed: a process with an older version of the limit
/// counts by it.
fn version_check_removed() -> String {
    planted(
        "  if v > known then\n    -- The limit was changed since this process learnt it: it adopts the stored one and\n    -- tries again.\n    return { 3, l, v, o }\n  end\n",
        "",
    )
}

/// A counter's newer-version check removed (counting on a cluster): a process with an older
/// version counts by it on a counter the new limit wrote.
fn counter_version_check_removed() -> String {
    planted(
        "      if v > known then\n        -- Written under a newer limit",
        "      if false then\n        -- Written under a newer limit",
    )
}

/// Lowered mid-window, one node: the count stays, and the window is full under the new limit
/// at once (a zero weight is still permitted, a drain takes nothing); a new key gets the new
/// limit; raised, the window has the room the higher limit leaves.
///
/// Caught (run below): the drain's clamp removed (`limit - used` goes negative: the script
/// refuses it), the remaining's clamp removed (a negative `remaining`, which no reply may
/// carry), and a zero weight refused over the limit.
fn lowered_then_raised(script: &str) -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let a = Process::registered(&mut redis, script, "lowered", 5, false)?;
    set_time(&mut redis, T0 + 10)?;
    for left in [4, 3, 2] {
        assert_eq!(a.permitted(&mut redis, "k", 1)?, left);
    }
    assert_eq!(a.set_limit(&mut redis, 2)?, 2);
    assert_eq!((a.protocol.limit(), a.protocol.limit_version()), (2, 1));
    // 3 used of 2.
    a.rejected(
        &mut redis,
        "k",
        "a window over the lowered limit granted a permit",
    )?;
    assert_eq!(a.permitted(&mut redis, "k", 0)?, 0);
    if !matches!(
        a.attempt(&mut redis, "k", None)?,
        Decision::Permitted { remaining: 0, .. }
    ) {
        return Err("a drain over the lowered limit did not leave the window full".into());
    }
    assert_eq!(a.permitted(&mut redis, "fresh", 1)?, 1);
    assert_eq!(
        get(&mut redis, "fixed-window:{lowered}")?,
        format!("{T0}:{PERIOD}:2/1")
    );

    // Raised: 3 used of 6.
    assert_eq!(a.set_limit(&mut redis, 6)?, 6);
    for left in [2, 1, 0] {
        assert_eq!(a.permitted(&mut redis, "k", 1)?, left);
    }
    a.rejected(
        &mut redis,
        "k",
        "a window full under the raised limit granted a permit",
    )?;
    Ok(())
}

#[test]
fn lowering_the_limit_keeps_the_count_and_raising_it_frees_room() -> TestResult {
    passes_and_catches(
        lowered_then_raised,
        &[
            (
                "drain clamp removed",
                planted(
                    "weight = math.max(key_limit - used, 0)",
                    "weight = key_limit - used",
                ),
            ),
            (
                "remaining clamp removed",
                planted(
                    "used < key_limit and key_limit - used or 0",
                    "key_limit - used",
                ),
            ),
            (
                "zero weight refused over the limit",
                planted(
                    "if weight > 0 and used + weight > key_limit then",
                    "if used + weight > key_limit then",
                ),
            ),
        ],
    )
}

/// Two processes on one node: one lowers the limit mid-window; the other, still holding the
/// old one, is told the new limit by the server on its next attempt, adopts it and decides
/// under it: no permit beyond the new limit. Raised again, the other learns that too. A
/// process that registers afterwards starts with the stored limit.
///
/// Caught (run below): the stored-newer check removed (the old process counts by the old
/// limit: a 4th permit under a limit of 3), and the change stored without a new version (the
/// old process's next attempt is a conflict, not the new limit).
fn old_process_is_told(script: &str) -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let a = Process::registered(&mut redis, script, "told", 5, false)?;
    let b = Process::registered(&mut redis, script, "told", 5, false)?;
    set_time(&mut redis, T0 + 10)?;
    assert_eq!(a.permitted(&mut redis, "k", 1)?, 4);
    assert_eq!(a.permitted(&mut redis, "k", 1)?, 3);
    assert_eq!(b.permitted(&mut redis, "k", 1)?, 2);

    a.set_limit(&mut redis, 3)?;
    assert_eq!(b.protocol.limit(), 5); // not told yet
    b.rejected(
        &mut redis,
        "k",
        "the process with the old limit was not held to the new one",
    )?;
    assert_eq!((b.protocol.limit(), b.protocol.limit_version()), (3, 1));
    assert_eq!(b.permitted(&mut redis, "other", 1)?, 2);

    a.set_limit(&mut redis, 4)?;
    assert_eq!(b.permitted(&mut redis, "k", 1)?, 0);
    assert_eq!(b.protocol.limit(), 4);
    a.rejected(
        &mut redis,
        "k",
        "a window full under the raised limit granted a permit",
    )?;
    assert_eq!(
        get(&mut redis, "fixed-window:{told}:k")?,
        format!("{T0:x}:4")
    );

    let late = Process::registered(&mut redis, script, "told", 5, false)?;
    assert_eq!(
        (late.protocol.limit(), late.protocol.limit_version()),
        (4, 2)
    );
    Ok(())
}

#[test]
fn a_process_holding_the_old_limit_is_told_the_new_one_and_never_counts_past_it() -> TestResult {
    passes_and_catches(
        old_process_is_told,
        &[
            ("stored-newer check removed", version_check_removed()),
            (
                "change stored without a new version",
                planted(
                    "string.format('%.0f:%.0f:%.0f/%.0f', o, period, limit, v + 1)",
                    "string.format('%.0f:%.0f:%.0f', o, period, limit)",
                ),
            ),
        ],
    )
}

/// Counting as on a cluster ("count": no configuration read, each counter records the
/// settings and version that wrote it), on one server with the time key. A process of the
/// new limit rewrites a counter an older one wrote, keeping its count; a process of the old
/// limit meeting that counter is told the new limit and decides under it. In a batch, only
/// the attempts on that counter are told; the others count.
///
/// Caught (run below): the counter's newer-version check removed (the old process counts by
/// the old limit on the counter the new one wrote), and a counter of an older version counted
/// afresh instead of kept.
fn counters_tell_the_old_process(script: &str) -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let a = Process::registered(&mut redis, script, "counting", 5, true)?;
    let b = Process::registered(&mut redis, script, "counting", 5, true)?;
    let old = Process::registered(&mut redis, script, "counting", 5, true)?;
    set_time(&mut redis, T0 + 10)?;
    assert_eq!(a.permitted(&mut redis, "k", 2)?, 3);
    assert_eq!(b.permitted(&mut redis, "k", 1)?, 2);
    let counter = "fixed-window:counting:{k}";
    assert_eq!(
        get(&mut redis, counter)?,
        format!("{T0:x}:3:{PERIOD}:5:{T0}")
    );

    a.set_limit(&mut redis, 3)?;
    // A's version is newer than the counter's: it rewrites it, count kept, and is refused.
    a.rejected(
        &mut redis,
        "k",
        "the new limit did not count the permits already taken",
    )?;
    assert_eq!(
        get(&mut redis, counter)?,
        format!("{T0:x}:3:{PERIOD}:3:{T0}/1")
    );
    // B still holds the old limit: the counter tells it.
    b.rejected(
        &mut redis,
        "k",
        "the process with the old limit was not held to the new one",
    )?;
    assert_eq!((b.protocol.limit(), b.protocol.limit_version()), (3, 1));

    // A batch of the old limit: "k" and "k1967" share a slot. Only "k"'s attempt is told.
    let begin = |key| match old.protocol.begin(key, Instant::ZERO, Instant::ZERO) {
        Ok(Begin::Call(call)) => Ok(call),
        other => Err(format!("not a call: {other:?}")),
    };
    let mut batch = begin("k")?;
    batch.join(begin("k1967")?).map_err(|_| "refused")?;
    let reply = old.run(&mut redis, &batch)?;
    let parts: Vec<Option<ScriptReply>> = (0..2)
        .map(|i| ScriptReply::parse(batch.reply_for(&reply, i)))
        .collect();
    assert_eq!(
        parts[0],
        Some(ScriptReply::Changed {
            limit: 3,
            version: 1,
            origin: T0
        })
    );
    assert!(matches!(
        parts[1],
        Some(ScriptReply::Permitted { remaining: 4, .. })
    ));

    // Raised: A rewrites the counter again (count kept), B learns it from there.
    a.set_limit(&mut redis, 6)?;
    assert_eq!(a.permitted(&mut redis, "k", 1)?, 2);
    assert_eq!(
        get(&mut redis, counter)?,
        format!("{T0:x}:4:{PERIOD}:6:{T0}/2")
    );
    assert_eq!(b.permitted(&mut redis, "k", 1)?, 1);
    assert_eq!(b.protocol.limit(), 6);
    Ok(())
}

#[test]
fn on_a_cluster_the_counters_tell_a_process_holding_the_old_limit() -> TestResult {
    passes_and_catches(
        counters_tell_the_old_process,
        &[
            (
                "counter newer-version check removed",
                counter_version_check_removed(),
            ),
            (
                "an older counter counted afresh",
                planted(
                    "        stale = true\n",
                    "        stale = true\n        used = 0\n",
                ),
            ),
        ],
    )
}

/// The limiter itself, lowering then raising the limit as in
/// [`lowered_then_raised`]: the count stays, the window is full at once; the local memory of
/// the window full under the lowered limit is forgotten when the limit is raised (this
/// limiter remembers full windows).
///
/// With the stored-newer check removed from `script.lua` (as `version_check_removed`
/// plants it) this test still passes: one process adopts its own change, and its script's
/// failing evidence is the scenario's above, run on planted scripts. Run by hand with
/// `self.memory.clear()` removed from `Protocol::adopt` (the client's part), it fails after
/// the raise: `remembered()` is 1, not 0 (the window full under the lowered limit is still
/// remembered, and would be rejected locally).
#[test]
fn the_limiter_lowers_and_raises_its_limit_at_once() -> TestResult {
    let server = server()?;
    let config = Config::of("limiter", 5, HOUR)?;
    let limiter = connect(&server, config)?;
    for left in [4, 3, 2] {
        assert_eq!(limiter.try_acquire("k")?.remaining(), Some(left));
    }
    limiter.set_limit(3)?;
    assert_eq!((limiter.limit(), limiter.config().limit()), (3, 5));
    let rejected = limiter.try_acquire("k").unwrap_err();
    assert!(matches!(
        rejected,
        SharedError::Limited(fixed_window::RateLimiterError::Rejected { limit: 3, .. })
    ));
    assert_eq!(limiter.protocol().remembered(), 1); // full: remembered
    assert!(matches!(
        limiter.try_acquire_n("k", 4).unwrap_err(),
        SharedError::Limited(fixed_window::RateLimiterError::TooMany { limit: 3, .. })
    ));

    limiter.set_limit(5)?;
    assert_eq!(limiter.protocol().remembered(), 0);
    assert_eq!(limiter.try_acquire("k")?.remaining(), Some(1));
    assert_eq!(limiter.try_acquire_n("k", 1)?.remaining(), Some(0));
    assert!(limiter.try_acquire("k").is_err());

    assert!(matches!(
        limiter.set_limit(0),
        Err(SharedError::Config {
            name: "limiter",
            ..
        })
    ));
    assert_eq!(limiter.limit(), 5);
    Ok(())
}

/// Two limiters, as two processes, on one node: one lowers the limit; the other, holding the
/// old limit and remembering nothing, gets no permit past the new limit and then reports it;
/// each one's raise reaches the other. A third connecting afterwards starts at the stored
/// limit. The async form changes it too.
///
/// Run by hand with the stored-newer check removed from `script.lua` (the lines
/// `version_check_removed` plants away), it fails at the first assertion after the change:
/// `b.try_acquire("k")` is granted, `Ok(SharedPermit { remaining: Some(1), .. })`: the 4th
/// permit, counted by the old limit of 5 under a limit of 3.
#[test]
fn another_limiter_holding_the_old_limit_gets_no_permit_past_the_new_one() -> TestResult {
    let server = server()?;
    let config = Config::of("two", 5, HOUR)?;
    let a = connect(&server, config.clone())?;
    let b = connect(&server, config.clone())?;
    a.try_acquire("k")?;
    a.try_acquire("k")?;
    b.try_acquire("k")?;

    a.set_limit(3)?;
    assert_eq!(b.limit(), 5);
    let refused = b.try_acquire("k");
    assert!(
        matches!(
            refused,
            Err(SharedError::Limited(
                fixed_window::RateLimiterError::Rejected { limit: 3, .. }
            ))
        ),
        "{refused:?}"
    );
    assert_eq!(b.limit(), 3);
    assert_eq!(b.try_acquire("other")?.remaining(), Some(2));

    futures::executor::block_on(b.set_limit_async(4))?;
    assert_eq!(a.limit(), 3);
    assert_eq!(a.try_acquire("k")?.remaining(), Some(0));
    assert_eq!(a.limit(), 4);
    assert!(b.try_acquire("k").is_err());

    let c = connect(&server, config)?;
    assert_eq!(c.limit(), 4);
    assert_eq!(c.try_acquire("other")?.remaining(), Some(2));
    Ok(())
}

/// A call for more permits than a lowering made by another process leaves is refused as too
/// many once its attempt learns the new limit, naming it: neither counted nor waited for,
/// whatever its wait allows. Before calls met the lowering this way, the attempt made again
/// under the new limit was rejected as if the window would never open (`Rejected` with a
/// `retry_after` of `Duration::MAX`).
#[test]
fn a_weight_a_lowering_by_another_process_passes_is_refused_as_too_many() -> TestResult {
    let server = server()?;
    let config = Config::of("weights", 5, HOUR)?.with_max_wait(HOUR);
    let a = connect(&server, config.clone())?;
    let b = connect(&server, config)?;
    assert_eq!(a.try_acquire_n("k", 1)?.remaining(), Some(4));
    b.set_limit(2)?;
    assert_eq!(a.limit(), 5);
    let refused = a.acquire_n("k", 3);
    assert!(
        matches!(
            refused,
            Err(SharedError::Limited(
                fixed_window::RateLimiterError::TooMany {
                    limit: 2,
                    requested: 3,
                    ..
                }
            ))
        ),
        "{refused:?}"
    );
    assert_eq!(a.limit(), 2);
    assert_eq!(a.try_acquire_n("k", 1)?.remaining(), Some(0));
    Ok(())
}

/// A process that remembers a key's window full rejects it without a round trip, so it does
/// not hear of a raise made by another process from that key: it keeps rejecting it locally
/// (never a permit past a limit) until any attempt of its own reaches the server, which tells
/// it the new limit, and it forgets the windows it remembered full. (Its clock here stands
/// still, so its background read of the configuration never falls due: see the next test.)
#[test]
fn a_window_remembered_full_is_forgotten_once_the_raise_is_learnt() -> TestResult {
    let server = server()?;
    let config = Config::of("remembered", 2, HOUR)?;
    let a = connect(&server, config.clone())?.with_clock(fixed_window::ManualClock::new());
    let b = connect(&server, config)?;
    a.try_acquire("k")?;
    assert_eq!(a.try_acquire("k")?.remaining(), Some(0));
    assert_eq!(a.protocol().remembered(), 1);

    b.set_limit(3)?;
    assert!(a.try_acquire("k").is_err()); // remembered full: not asked
    assert_eq!(a.limit(), 2);
    assert_eq!(a.try_acquire("other")?.remaining(), Some(2)); // told on the way
    assert_eq!((a.limit(), a.protocol().remembered()), (3, 0));
    assert_eq!(a.try_acquire("k")?.remaining(), Some(0));
    Ok(())
}

/// A process that remembers a key's window full and only ever asks for that key still learns
/// a raise made by another process: while it remembers windows full it reads the
/// configuration again in the background, at most every `LIMIT_REFRESH` (1 s), and
/// the key then gets the room the raise left (bounded at 10 s of attempts, 50 ms apart).
///
/// Run by hand with the calls of `refresh_limit` removed from the limiter's attempts, it
/// fails: after 10 s the key is still rejected locally, the limit still 2.
#[test]
fn a_process_rejecting_a_remembered_window_reads_a_raise_on_its_own() -> TestResult {
    let server = server()?;
    let config = Config::of("reread", 2, HOUR)?;
    let a = connect(&server, config.clone())?;
    let b = connect(&server, config)?;
    a.try_acquire("k")?;
    assert_eq!(a.try_acquire("k")?.remaining(), Some(0));
    b.set_limit(3)?;
    let started = std::time::Instant::now();
    let mut permit = a.try_acquire("k");
    while permit.is_err() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        permit = a.try_acquire("k");
    }
    assert_eq!(permit?.remaining(), Some(0), "limit {}", a.limit());
    assert_eq!(a.limit(), 3);
    Ok(())
}
