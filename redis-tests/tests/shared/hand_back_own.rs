//! Handing back a share of a key with a limit of its own ([`Config::key_limit`]): the server's
//! counter of such a key ends its count with the key's limit (`start:used=limit`), and the
//! permits handed back come off that count, are granted to another process in the same
//! window, and never let the key pass its own limit, nor a key of the limiter's limit beside
//! it pass that one.
//!
//! The scenario drives the sans-IO [`Protocol`] the limiter runs (begin, the script, finish,
//! the hand-back calls) with the script's text as a parameter, so that it also runs on planted
//! broken scripts, each of which it must catch.

use fixed_window::Instant;
use fixed_window_redis::{Begin, Decision, Lease, Protocol, SCRIPT, ScriptCall};

use crate::support::{HOUR, TestResult, on_time_key, raw, run_script, server, set_time};

const T0: u64 = 7_000_000_000;

/// The limiter's limit, and the limit of [`OWN`] of its own.
const LIMIT: u32 = 16;
const OWN_LIMIT: u32 = 40;

/// The key with a limit of its own, and one with the limiter's.
const OWN: &str = "paid";
const PLAIN: &str = "free";

/// One process: its protocol and the script it runs.
struct Process {
    protocol: Protocol,
    script: redis::Script,
}

impl Process {
    /// A process of limiter "back-own" on the time key, leasing shares of at most 8 if
    /// `leasing`, registered.
    fn registered(
        redis: &mut redis::Connection,
        script: &str,
        leasing: bool,
    ) -> Result<Process, Box<dyn std::error::Error>> {
        let config = on_time_key("back-own", LIMIT, HOUR)?.key_limit(OWN, OWN_LIMIT)?;
        let config = if leasing {
            config.with_lease(Lease::new(8)?)
        } else {
            config
        };
        let process = Process {
            protocol: Protocol::new(config),
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

    /// An attempt for one permit of `key`, at the local instant 0 (the shares' deadlines are
    /// an hour ahead): granted from a share held, by a lease call, or counted exactly.
    fn attempt(
        &self,
        redis: &mut redis::Connection,
        key: &str,
    ) -> Result<Decision, Box<dyn std::error::Error>> {
        let t = Instant::ZERO;
        let call = match self.protocol.begin(key, t, t)? {
            Begin::Decided(decision) => return Ok(decision),
            Begin::Call(call) => call,
        };
        let reply = self.run(redis, &call)?;
        let version = call.limit_version();
        Ok(if call.is_lease() {
            self.protocol
                .finish_lease(key, 1, version, (t, t, t), Ok(&reply))
        } else {
            self.protocol
                .finish_at(key, 1, version, (t, t, t), Ok(&reply))
        })
    }

    /// Permits of `key` until the first refusal (at most 100): how many. Any decision but a
    /// permit or a refusal is an error.
    fn fill(
        &self,
        redis: &mut redis::Connection,
        key: &str,
    ) -> Result<u32, Box<dyn std::error::Error>> {
        for granted in 0..100 {
            match self.attempt(redis, key)? {
                Decision::Permitted { .. } => {}
                Decision::Rejected { .. } => return Ok(granted),
                other => return Err(format!("{key}: after {granted} permits: {other:?}").into()),
            }
        }
        Err(format!("{key}: never refused").into())
    }

    /// Hands back every share's rest: the permits the server took off, by key.
    fn hand_back(
        &self,
        redis: &mut redis::Connection,
    ) -> Result<Vec<(String, u32)>, Box<dyn std::error::Error>> {
        let mut back = Vec::new();
        for call in self.protocol.hand_back_calls() {
            let key = call.counter_key(0).unwrap_or_default().to_owned();
            let reply = self.run(redis, &call)?;
            back.push((key, self.protocol.finish_hand_back(Ok(&reply))?));
        }
        back.sort();
        Ok(back)
    }
}

/// The counter's text for `key`.
fn counter(redis: &mut redis::Connection, key: &str) -> redis::RedisResult<Option<String>> {
    redis::cmd("GET")
        .arg(format!("fixed-window:{{back-own}}:{key}"))
        .query(redis)
}

/// A leasing process takes a share of each key and stops; an exact process fills both keys;
/// the leasing one hands its rests back; the exact one is granted exactly those, and each key
/// ends at its own limit: never over it, whichever process asks.
fn handed_back_within_the_keys_limit(script: &str) -> TestResult {
    let server = server()?;
    let mut redis = raw(&server)?;
    set_time(&mut redis, T0)?;
    let leasing = Process::registered(&mut redis, script, true)?;
    let exact = Process::registered(&mut redis, script, false)?;
    // Shares of min(limit / 4, 8): 8 of the key's own 40, 4 of the limiter's 16.
    for (key, share) in [(OWN, 8), (PLAIN, 4)] {
        match leasing.attempt(&mut redis, key)? {
            Decision::Permitted { remaining, .. } if remaining == share - 1 => {}
            other => return Err(format!("{key}: the leasing process got {other:?}").into()),
        }
    }
    let filled = (exact.fill(&mut redis, OWN)?, exact.fill(&mut redis, PLAIN)?);
    if filled != (OWN_LIMIT - 8, LIMIT - 4) {
        return Err(format!("before the hand-back the exact process got {filled:?}").into());
    }
    let start = format!("{T0:x}");
    assert_eq!(
        counter(&mut redis, OWN)?,
        Some(format!("{start}:{OWN_LIMIT:x}={OWN_LIMIT}"))
    );

    let back = leasing.hand_back(&mut redis)?;
    let expected = [
        ("fixed-window:{back-own}:free".to_owned(), 3),
        ("fixed-window:{back-own}:paid".to_owned(), 7),
    ];
    if back != expected {
        return Err(format!("handed back {back:?}, expected {expected:?}").into());
    }
    // The exact process is granted the rests, and no more: each key at its own limit.
    let refilled = (exact.fill(&mut redis, OWN)?, exact.fill(&mut redis, PLAIN)?);
    if refilled != (7, 3) {
        return Err(format!("after the hand-back the exact process got {refilled:?}").into());
    }
    // The count went back to the key's own limit less the rest, still marked with the key's
    // limit, and up again to that limit.
    let own = counter(&mut redis, OWN)?;
    if own != Some(format!("{start}:{OWN_LIMIT:x}={OWN_LIMIT}")) {
        return Err(format!("after the refill the counter of {OWN} reads {own:?}").into());
    }
    // The leasing process, holding nothing now, is refused by the server on both.
    for key in [OWN, PLAIN] {
        let decision = leasing.attempt(&mut redis, key)?;
        if !matches!(decision, Decision::Rejected { local: false, .. }) {
            return Err(
                format!("{key}: a full window gave the leasing process {decision:?}").into(),
            );
        }
    }
    // Nothing left to hand back.
    assert_eq!(leasing.hand_back(&mut redis)?, []);
    Ok(())
}

/// `SCRIPT` with `from` replaced by `to`; `from` must be in it.
fn planted(from: &str, to: &str) -> String {
    assert!(SCRIPT.contains(from), "the script no longer holds {from:?}");
    SCRIPT.replace(from, to)
}

#[test]
fn permits_handed_back_on_a_key_of_its_own_limit_are_granted_once_never_over_it() -> TestResult {
    handed_back_within_the_keys_limit(SCRIPT)?;
    let broken = [
        // The count read up to the next ':' only: "used=limit" is no number, and the hand-back
        // of a key of its own limit fails.
        (
            "own limit mis-parsed",
            planted(
                "local second = string.find(held, '[:=]', colon + 1)",
                "local second = string.find(held, ':', colon + 1)",
            ),
        ),
        // The count written back without what followed it: the key's own limit is lost, and
        // the counter reads as the limiter's limit.
        (
            "own limit dropped",
            planted(
                ".. (second and string.sub(held, second) or ''), 'KEEPTTL')",
                ", 'KEEPTTL')",
            ),
        ),
        // The count read as a decimal number: 0x28 = 40 read as 28, so 7 handed back leave
        // 21 (0x15) where 33 were counted, and the window grants more than its limit.
        (
            "count read in decimal",
            planted(
                "local used = tonumber(string.sub(held, colon + 1, (second or 0) - 1), 16)",
                "local used = tonumber(string.sub(held, colon + 1, (second or 0) - 1))",
            ),
        ),
    ];
    for (bug, script) in broken {
        match handed_back_within_the_keys_limit(&script) {
            Ok(()) => panic!("the scenario did not catch the planted bug: {bug}"),
            // Shown with --nocapture: what caught it.
            Err(caught) => eprintln!("{bug}: caught: {caught}"),
        }
    }
    Ok(())
}
