//! `cargo xtask server-cost --candidates`: script shapes measured beside the shared limiter's
//! on the same server in the same run, to tell what stands between its exact permit and the
//! floor script. They are not the product: each is a plain script with its hot path alone,
//! its window begun before it is measured, and a reply checked as for every variant.
//!
//! - (a) `count-*`: the cluster's "count" layout on one node (no configuration read), as the
//!   shared limiter's script runs it today (`count-full`: its full path) and its hot path
//!   alone ([`COUNT_ON_ONE_NODE`]);
//! - (b) `server-count-*`: the configuration read, the count kept by the server's `HINCRBY`
//!   ([`COUNTED_BY_THE_SERVER`]), a rejection's count taken back by a second `HINCRBY` or
//!   (`-kept`) kept;
//! - (c) `bare-count-*`: both, `TIME` and one `HINCRBY` ([`COUNTED_WITHOUT_CONFIGURATION`]),
//!   a rejection as in (b);
//! - (d) `calls-alone`: the hot path's four calls with no Lua between them
//!   ([`CALLS_ALONE`]).

use fixed_window_redis::{Begin, Config, Protocol};

use super::{Load, PERIOD, UNREACHED_LIMIT, Variant, begin, evalsha, exact, load, owned};
use crate::cargo::Failure;

/// (a), its hot path alone.
const COUNT_ON_ONE_NODE: &str = include_str!("count_on_one_node.lua");
/// (b).
const COUNTED_BY_THE_SERVER: &str = include_str!("counted_by_the_server.lua");
/// (c).
const COUNTED_WITHOUT_CONFIGURATION: &str = include_str!("counted_without_configuration.lua");
/// (d).
const CALLS_ALONE: &str = include_str!("calls_alone.lua");

/// The candidates' variants, each key's window begun (and, for a rejection, full), `sha` the
/// shared limiter's script.
pub(super) fn variants(admin: &mut redis::Connection, sha: &str) -> Result<Vec<Variant>, Failure> {
    let count_sha = load(admin, COUNT_ON_ONE_NODE)?;
    let server_sha = load(admin, COUNTED_BY_THE_SERVER)?;
    let bare_sha = load(admin, COUNTED_WITHOUT_CONFIGURATION)?;
    let calls_sha = load(admin, CALLS_ALONE)?;
    let server_kept_sha = load(admin, &rejections_kept(COUNTED_BY_THE_SERVER)?)?;
    let bare_kept_sha = load(admin, &rejections_kept(COUNTED_WITHOUT_CONFIGURATION)?)?;
    let count_permit = counting(admin, sha, "cand-count-permit", UNREACHED_LIMIT, 1)?;
    let count_rejection = counting(admin, sha, "cand-count-rejection", 1, 0)?;
    let variant = |name, what, load| Variant {
        name,
        what,
        load,
        commands: &["evalsha"],
        per_call: 1,
    };
    Ok(vec![
        variant(
            "count-full",
            "(a) ours, the cluster's count mode on one node: a permit (full path)",
            count_permit.clone(),
        ),
        variant(
            "count-permit",
            "(a) count layout, hot path alone: TIME, GET counter, SET: a permit",
            with_sha(count_permit, &count_sha),
        ),
        variant(
            "count-rejection",
            "(a) count layout, hot path alone: TIME, GET counter: a rejection",
            with_sha(count_rejection, &count_sha),
        ),
        variant(
            "server-count-permit",
            "(b) TIME, GET configuration, HINCRBY: a permit",
            server_counted(admin, &server_sha, "cand-server-permit", UNREACHED_LIMIT, 1)?,
        ),
        variant(
            "server-count-rejection",
            "(b) TIME, GET configuration, HINCRBY, HINCRBY -1: a rejection",
            server_counted(admin, &server_sha, "cand-server-rejection", 1, 0)?,
        ),
        variant(
            "server-count-kept",
            "(b) TIME, GET configuration, HINCRBY: a rejection, its count kept",
            server_counted(admin, &server_kept_sha, "cand-server-kept", 1, 0)?,
        ),
        variant(
            "bare-count-permit",
            "(c) TIME, HINCRBY: a permit",
            bare_counted(admin, &bare_sha, "cand-bare-permit", UNREACHED_LIMIT, 1)?,
        ),
        variant(
            "bare-count-rejection",
            "(c) TIME, HINCRBY, HINCRBY -1: a rejection",
            bare_counted(admin, &bare_sha, "cand-bare-rejection", 1, 0)?,
        ),
        variant(
            "bare-count-kept",
            "(c) TIME, HINCRBY: a rejection, its count kept",
            bare_counted(admin, &bare_kept_sha, "cand-bare-kept", 1, 0)?,
        ),
        variant(
            "calls-alone",
            "(d) our hot path's four calls alone: TIME, GET, GET, SET",
            with_sha(
                exact(admin, sha, "cand-calls", UNREACHED_LIMIT, 1)?,
                &calls_sha,
            ),
        ),
    ])
}

/// Candidate `script` with a rejection's count kept (the floor script's rule: the counter
/// counts attempts) instead of taken back.
fn rejections_kept(script: &str) -> Result<String, Failure> {
    const UNDO: &str = "local undo = true";
    if !script.contains(UNDO) {
        return Err(format!("a candidate script has no `{UNDO}` line"));
    }
    Ok(script.replacen(UNDO, "local undo = false", 1))
}

/// The same keys and arguments sent to another script.
fn with_sha(load: Load, sha: &str) -> Load {
    match load {
        Load::Script {
            keys,
            args,
            expect,
            second,
            ..
        } => Load::Script {
            sha: sha.to_owned(),
            keys,
            args,
            expect,
            second,
        },
        pair @ Load::Pair { .. } => pair,
    }
}

/// The shared limiter's "count" call for one permit of key `hot` (the protocol of a process
/// on a cluster, registered on this one node), its window begun by one permit of the shared
/// limiter's script: full if `limit` is 1. Each measured reply starts with `expect`.
fn counting(
    admin: &mut redis::Connection,
    sha: &str,
    name: &'static str,
    limit: u32,
    expect: i64,
) -> Result<Load, Failure> {
    let config = Config::of(name, limit, PERIOD).map_err(|err| err.to_string())?;
    let protocol = Protocol::for_cluster(config);
    let register = protocol.register_call();
    let reply = evalsha(admin, sha, &owned(register.keys()), &owned(register.args()))?;
    protocol
        .registered(Ok(&reply))
        .map_err(|err| format!("{name}: registering: {err}"))?;
    let now = fixed_window::Instant::ZERO;
    let Ok(Begin::Call(call)) = protocol.begin("hot", now, now) else {
        return Err(format!("{name}: the protocol decided without the server"));
    };
    let (keys, args) = (owned(call.keys()), owned(call.args()));
    if args.get(3).map(String::as_str) != Some("count") {
        return Err(format!("{name}: not a count call: {args:?}"));
    }
    begin(admin, sha, name, &keys, &args)?;
    Ok(Load::Script {
        sha: sha.to_owned(),
        keys,
        args,
        expect,
        second: None,
    })
}

/// Candidate (b)'s call: the shared limiter's configuration, registered by its script, and a
/// counter of the candidate's own, its window begun by the candidate.
fn server_counted(
    admin: &mut redis::Connection,
    sha: &str,
    name: &'static str,
    limit: u32,
    expect: i64,
) -> Result<Load, Failure> {
    let product = load(admin, fixed_window_redis::SCRIPT)?;
    let config = Config::of(name, limit, PERIOD).map_err(|err| err.to_string())?;
    let register = Protocol::new(config).register_call();
    let keys = owned(register.keys());
    evalsha(admin, &product, &keys, &owned(register.args()))?;
    let keys = vec![keys[0].clone(), format!("{name}:hot")];
    let args = vec![
        PERIOD.as_micros().to_string(),
        limit.to_string(),
        fixed_window_redis::EXPIRY_MARGIN_MILLIS.to_string(),
    ];
    begin(admin, sha, name, &keys, &args)?;
    Ok(Load::Script {
        sha: sha.to_owned(),
        keys,
        args,
        expect,
        second: None,
    })
}

/// Candidate (c)'s call: the origin the server's time now, its window begun by the candidate.
fn bare_counted(
    admin: &mut redis::Connection,
    sha: &str,
    name: &'static str,
    limit: u32,
    expect: i64,
) -> Result<Load, Failure> {
    let (seconds, micros): (u64, u64) = redis::cmd("TIME")
        .query(admin)
        .map_err(|err| format!("TIME: {err}"))?;
    let origin = seconds * 1_000_000 + micros;
    let keys = vec![format!("{name}:hot")];
    let args = vec![
        PERIOD.as_micros().to_string(),
        limit.to_string(),
        fixed_window_redis::EXPIRY_MARGIN_MILLIS.to_string(),
        "count".to_owned(),
        "1".to_owned(),
        origin.to_string(),
    ];
    begin(admin, sha, name, &keys, &args)?;
    Ok(Load::Script {
        sha: sha.to_owned(),
        keys,
        args,
        expect,
        second: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_kept_rewrites_the_one_line_and_refuses_a_script_without_it() {
        for script in [COUNTED_BY_THE_SERVER, COUNTED_WITHOUT_CONFIGURATION] {
            let kept = rejections_kept(script).expect("the line is there");
            assert!(kept.contains("local undo = false") && !kept.contains("local undo = true"));
        }
        assert!(rejections_kept(CALLS_ALONE).is_err());
    }
}
