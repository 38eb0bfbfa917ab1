//! `cargo xtask server-cost`: what one decision costs the Redis server, for envoy's pair of
//! commands, the least script that decides on the server's clock, and the shared limiter's
//! script (a permit on a begun window, a rejection on a full one, and a leased share of a
//! begun window, per permit granted and per script call).
//!
//! It starts its own `redis-server` (no persistence, loopback), and for each variant drives
//! the server from concurrent clients for a few seconds, bounded in calls too. Between
//! variants it resets the server's statistics (`CONFIG RESETSTAT`), and after each reads:
//!
//! - `INFO commandstats`: the microseconds the server spent in the variant's commands (for a
//!   script, the `cmdstat_evalsha` line: the script's whole run, its `redis.call`s included),
//!   divided by the decisions;
//! - `INFO cpu`: the main thread's CPU time (`used_cpu_sys_main_thread` plus
//!   `used_cpu_user_main_thread`), its change over the variant divided by the decisions,
//!   which adds reading, parsing and answering the requests.
//!
//! Every reply is checked (a permit where one is expected, a rejection where one is), so a
//! variant that measured something else fails the command. The variants run in turns, `runs`
//! times, so that the machine's noise spreads over all of them; the table gives each figure's
//! median with its lowest and highest, and `target/server-cost.json` the same in µs, named by
//! variant. With `--candidates`, script shapes that are not the product's are measured beside
//! them (see [`candidates`]).

mod candidates;

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fixed_window_redis::{Begin, Config, Lease, Protocol, SCRIPT};
use fixed_window_redis_test::RedisServer;

use crate::cargo::Failure;
use crate::report::target_dir;

/// Flags of `cargo xtask server-cost`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Concurrent clients (each a connection and a thread).
    #[arg(long, default_value_t = 16)]
    pub clients: usize,
    /// Seconds each variant is driven, per run.
    #[arg(long, default_value_t = 3)]
    pub seconds: u64,
    /// Runs: every variant once per run, in turns.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// A script file measured in place of the shared limiter's in the `exact-*` rows (called
    /// with the same `KEYS` and `ARGV`): to compare a variant of it, or an earlier version.
    #[arg(long)]
    pub script: Option<std::path::PathBuf>,
    /// Also measure candidate script shapes (not the product's) beside the shared limiter's:
    /// the cluster's count layout on one node, a count kept by `HINCRBY`, both, and the hot
    /// path's calls alone.
    #[arg(long)]
    pub candidates: bool,
}

/// The least script that decides on the server's clock: the time, one count, and the
/// counter's expiry set on its first count. What any script that decides on the server's
/// clock costs at least.
const FLOOR_SCRIPT: &str = "\
local time = redis.call('TIME')
local now = time[1] * 1000000 + time[2]
local used = redis.call('INCRBY', KEYS[1], 1)
if used == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return { used <= tonumber(ARGV[2]) and 1 or 0, now }
";

/// Calls one client makes at most in one variant's run, whatever the time: a bound that the
/// time ends long before.
const MAX_CALLS_PER_CLIENT: u64 = 10_000_000;

/// The period of every variant's window: longer than any run, so that the windows measured
/// are begun ones.
const PERIOD: Duration = Duration::from_secs(3_600);

/// A limit no window of a run reaches.
const UNREACHED_LIMIT: u32 = 1_000_000_000;

/// The largest share of the leased rows: with a limit no window reaches, every lease call is
/// granted this many permits.
const LEASED_SHARE: u32 = 64;

/// What one variant sends, and the reply's first element it expects.
#[derive(Clone)]
enum Load {
    /// Envoy ratelimit's pair, pipelined: `INCRBY key 1`, `EXPIRE key period`.
    Pair { key: String },
    /// `EVALSHA sha keys args`, each reply starting with `expect` (and, if given, its second
    /// element `second`: a lease's share).
    Script {
        sha: String,
        keys: Vec<String>,
        args: Vec<String>,
        expect: i64,
        second: Option<i64>,
    },
}

/// One variant: its name (the JSON's key), what it measures, and its load.
struct Variant {
    name: &'static str,
    what: &'static str,
    load: Load,
    /// The `INFO commandstats` lines its commands are counted under; decisions are the
    /// first's calls times `per_call`.
    commands: &'static [&'static str],
    /// Decisions per call of the first command: 1, or a leased share's permits for the
    /// `leased-permit` row.
    per_call: u64,
}

/// One variant's figures from one run.
#[derive(Clone, Copy)]
struct Figures {
    decisions: u64,
    /// Commandstats µs per call of its commands.
    usec_per_call: f64,
    /// Commandstats µs per decision (all its commands).
    usec_per_decision: f64,
    /// Main-thread CPU µs per decision.
    cpu_per_decision: f64,
}

/// Starts a server, measures every variant `args.runs` times, prints the table and writes
/// `target/server-cost.json`.
///
/// # Errors
///
/// If the flags are out of range, the server cannot be started or read, or a reply is not
/// the one the variant expects.
pub fn run(args: &Args) -> Result<(), Failure> {
    if args.clients == 0 || args.clients > 256 {
        return Err(format!(
            "--clients must be from 1 to 256, not {}",
            args.clients
        ));
    }
    if args.seconds == 0 || args.seconds > 60 {
        return Err(format!(
            "--seconds must be from 1 to 60, not {}",
            args.seconds
        ));
    }
    if args.runs == 0 || args.runs > 20 {
        return Err(format!("--runs must be from 1 to 20, not {}", args.runs));
    }
    // The server runs until the command returns.
    let (_server, client, mut admin) = start_server()?;
    let script = match &args.script {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|err| format!("reading {}: {err}", path.display()))?,
        None => SCRIPT.to_owned(),
    };
    let mut variants = variants(&mut admin, &script)?;
    if args.candidates {
        // The candidates beside the shared limiter's own script, whatever `--script` says.
        let sha = load(&mut admin, SCRIPT)?;
        variants.extend(candidates::variants(&mut admin, &sha)?);
    }
    let mut figures: Vec<Vec<Figures>> = vec![Vec::new(); variants.len()];
    for run in 1..=args.runs {
        for (variant, figures) in variants.iter().zip(&mut figures) {
            let measured = measure(&client, &mut admin, variant, args)?;
            eprintln!(
                "xtask: server-cost: run {run}: {}: {} decisions, {:.2} µs per call, {:.2} µs CPU per decision",
                variant.name, measured.decisions, measured.usec_per_call, measured.cpu_per_decision
            );
            figures.push(measured);
        }
    }
    let version = server_version(&mut admin)?;
    let table = table(&variants, &figures, args, &version);
    print!("{table}");
    let path = target_dir().join("server-cost.json");
    std::fs::write(&path, json(&variants, &figures, args, &version))
        .map_err(|err| format!("writing {}: {err}", path.display()))?;
    eprintln!("xtask: server-cost: wrote {}", path.display());
    Ok(())
}

/// The variants, their scripts loaded and their keys in the state each measures: a begun
/// window (one decision made before), full for the rejection.
fn variants(admin: &mut redis::Connection, script: &str) -> Result<Vec<Variant>, Failure> {
    let floor_sha = load(admin, FLOOR_SCRIPT)?;
    let sha = load(admin, script)?;
    let period_ms = PERIOD.as_millis().to_string();
    let permit = exact(admin, &sha, "cost-permit", UNREACHED_LIMIT, 1)?;
    let rejection = exact(admin, &sha, "cost-rejection", 1, 0)?;
    let leased = leased(admin, &sha)?;
    Ok(vec![
        Variant {
            name: "envoy",
            what: "envoy's INCRBY + EXPIRE, pipelined",
            load: Load::Pair {
                key: "cost-envoy".into(),
            },
            commands: &["incrby", "expire"],
            per_call: 1,
        },
        Variant {
            name: "floor",
            what: "floor script: TIME, INCRBY (PEXPIRE on the first)",
            load: Load::Script {
                sha: floor_sha,
                keys: vec!["cost-floor".into()],
                args: vec![period_ms, UNREACHED_LIMIT.to_string()],
                expect: 1,
                second: None,
            },
            commands: &["evalsha"],
            per_call: 1,
        },
        Variant {
            name: "exact-permit",
            what: "ours, exact: a permit on a begun window",
            load: permit,
            commands: &["evalsha"],
            per_call: 1,
        },
        Variant {
            name: "exact-rejection",
            what: "ours, exact: a rejection on a full window",
            load: rejection,
            commands: &["evalsha"],
            per_call: 1,
        },
        Variant {
            name: "leased-permit",
            what: "ours, leased: per permit of a share of 64 on a begun window",
            load: leased.clone(),
            commands: &["evalsha"],
            per_call: u64::from(LEASED_SHARE),
        },
        Variant {
            name: "leased-call",
            what: "ours, leased: per script call leasing a share of 64",
            load: leased,
            commands: &["evalsha"],
            per_call: 1,
        },
    ])
}

/// The shared limiter's lease call for key `hot` (largest share [`LEASED_SHARE`], a limit no
/// window reaches), registered, its window begun by one lease: each call is granted the
/// largest share.
fn leased(admin: &mut redis::Connection, sha: &str) -> Result<Load, Failure> {
    let lease = Lease::new(LEASED_SHARE).map_err(|err| err.to_string())?;
    let config = Config::of("cost-leased", UNREACHED_LIMIT, PERIOD)
        .map_err(|err| err.to_string())?
        .with_lease(lease);
    let protocol = Protocol::new(config);
    let register = protocol.register_call();
    evalsha(admin, sha, &owned(register.keys()), &owned(register.args()))?;
    let now = fixed_window::Instant::ZERO;
    let Ok(Begin::Call(call)) = protocol.begin("hot", now, now) else {
        return Err("the protocol decided a lease without the server".into());
    };
    if !call.is_lease() {
        return Err("the protocol made no lease call".into());
    }
    let (keys, args) = (owned(call.keys()), owned(call.args()));
    let share = i64::from(LEASED_SHARE);
    let first = evalsha(admin, sha, &keys, &args)?;
    if first.get(..2) != Some(&[4, share][..]) {
        return Err(format!(
            "cost-leased: the first lease was not granted {share}: {first:?}"
        ));
    }
    Ok(Load::Script {
        sha: sha.to_owned(),
        keys,
        args,
        expect: 4,
        second: Some(share),
    })
}

/// The shared limiter's call for one permit of key `hot` under a configuration named `name`,
/// registered, its window begun by one permit: full if `limit` is 1.
fn exact(
    admin: &mut redis::Connection,
    sha: &str,
    name: &'static str,
    limit: u32,
    expect: i64,
) -> Result<Load, Failure> {
    let config = Config::of(name, limit, PERIOD).map_err(|err| err.to_string())?;
    let protocol = Protocol::new(config);
    let register = protocol.register_call();
    evalsha(admin, sha, &owned(register.keys()), &owned(register.args()))?;
    let now = fixed_window::Instant::ZERO;
    let Ok(Begin::Call(call)) = protocol.begin("hot", now, now) else {
        return Err("the protocol decided an attempt without the server".into());
    };
    let (keys, args) = (owned(call.keys()), owned(call.args()));
    // The window begins here: the measured calls find it begun (and, with a limit of one,
    // full).
    begin(admin, sha, name, &keys, &args)?;
    Ok(Load::Script {
        sha: sha.to_owned(),
        keys,
        args,
        expect,
        second: None,
    })
}

/// One call that begins the window: a permit.
fn begin(
    admin: &mut redis::Connection,
    sha: &str,
    name: &str,
    keys: &[String],
    args: &[String],
) -> Result<(), Failure> {
    let first = evalsha(admin, sha, keys, args)?;
    if first.first() == Some(&1) {
        Ok(())
    } else {
        Err(format!(
            "{name}: the first attempt was not permitted: {first:?}"
        ))
    }
}

fn owned<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<String> {
    texts.map(str::to_owned).collect()
}

fn load(admin: &mut redis::Connection, script: &str) -> Result<String, Failure> {
    redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(script)
        .query(admin)
        .map_err(|err| format!("SCRIPT LOAD: {err}"))
}

fn evalsha(
    connection: &mut redis::Connection,
    sha: &str,
    keys: &[String],
    args: &[String],
) -> Result<Vec<i64>, Failure> {
    let mut command = redis::cmd("EVALSHA");
    command.arg(sha).arg(keys.len()).arg(keys).arg(args);
    command
        .query(connection)
        .map_err(|err| format!("EVALSHA: {err}"))
}

/// One run of `variant`: statistics reset, `args.clients` clients for `args.seconds`, then
/// the server's figures read.
fn measure(
    client: &redis::Client,
    admin: &mut redis::Connection,
    variant: &Variant,
    args: &Args,
) -> Result<Figures, Failure> {
    let mut connections = Vec::with_capacity(args.clients);
    for _ in 0..args.clients {
        connections.push(
            client
                .get_connection()
                .map_err(|err| format!("connecting: {err}"))?,
        );
    }
    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .exec(admin)
        .map_err(|err| format!("CONFIG RESETSTAT: {err}"))?;
    let cpu_before = main_thread_cpu(admin)?;
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let workers: Vec<_> = connections
        .into_iter()
        .map(|mut connection| {
            let load = variant.load.clone();
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || drive(&mut connection, &load, &stop, deadline))
        })
        .collect();
    let mut failure = None;
    for worker in workers {
        let outcome = worker
            .join()
            .unwrap_or_else(|_| Err("a client thread panicked".into()));
        if let Err(err) = outcome {
            stop.store(true, Ordering::Relaxed);
            failure.get_or_insert(err);
        }
    }
    if let Some(err) = failure {
        return Err(format!("{}: {err}", variant.name));
    }
    let cpu_after = main_thread_cpu(admin)?;
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(admin)
        .map_err(|err| format!("INFO commandstats: {err}"))?;
    let mut decisions = 0;
    let (mut calls, mut usec) = (0, 0);
    for (index, command) in variant.commands.iter().enumerate() {
        let (c, u) = command_stats(&stats, command)
            .ok_or_else(|| format!("{}: no cmdstat_{command} line in INFO", variant.name))?;
        if index == 0 {
            decisions = c * variant.per_call;
        }
        calls += c;
        usec += u;
    }
    if decisions == 0 {
        return Err(format!("{}: no decision was made", variant.name));
    }
    #[allow(clippy::cast_precision_loss)]
    let (decisions_f, calls_f, usec_f) = (decisions as f64, calls as f64, usec as f64);
    Ok(Figures {
        decisions,
        usec_per_call: usec_f / calls_f,
        usec_per_decision: usec_f / decisions_f,
        cpu_per_decision: (cpu_after - cpu_before) * 1e6 / decisions_f,
    })
}

/// One client's loop: calls until the deadline, the stop flag or the bound on calls, each
/// reply checked.
fn drive(
    connection: &mut redis::Connection,
    load: &Load,
    stop: &AtomicBool,
    deadline: Instant,
) -> Result<(), Failure> {
    let mut calls = 0;
    while calls < MAX_CALLS_PER_CLIENT && !stop.load(Ordering::Relaxed) {
        // The clock is read once every 64 calls: reading it costs more than a call's share.
        if calls % 64 == 0 && Instant::now() >= deadline {
            break;
        }
        match load {
            Load::Pair { key } => {
                let (used, _set): (i64, i64) = redis::pipe()
                    .cmd("INCRBY")
                    .arg(key)
                    .arg(1)
                    .cmd("EXPIRE")
                    .arg(key)
                    .arg(PERIOD.as_secs())
                    .query(connection)
                    .map_err(|err| format!("INCRBY + EXPIRE: {err}"))?;
                if used < 1 {
                    return Err(format!("INCRBY answered {used}"));
                }
            }
            Load::Script {
                sha,
                keys,
                args,
                expect,
                second,
            } => {
                let reply = evalsha(connection, sha, keys, args)?;
                if reply.first() != Some(expect)
                    || second.is_some_and(|second| reply.get(1) != Some(&second))
                {
                    return Err(format!(
                        "expected a reply starting {expect}, {second:?}, got {reply:?}"
                    ));
                }
            }
        }
        calls += 1;
    }
    Ok(())
}

/// A `redis-server` of this command's own, a client of it and the connection that reads its
/// statistics.
///
/// # Errors
///
/// If the server cannot be started or connected to.
pub(crate) fn start_server() -> Result<(RedisServer, redis::Client, redis::Connection), Failure> {
    let server = RedisServer::start().map_err(|err| format!("redis-server: {err}"))?;
    let client = server
        .client()
        .map_err(|err| format!("redis client: {err}"))?;
    let admin = client
        .get_connection()
        .map_err(|err| format!("connecting: {err}"))?;
    Ok((server, client, admin))
}

/// `used_cpu_sys_main_thread + used_cpu_user_main_thread`, in seconds.
pub(crate) fn main_thread_cpu(admin: &mut redis::Connection) -> Result<f64, Failure> {
    let info: String = redis::cmd("INFO")
        .arg("cpu")
        .query(admin)
        .map_err(|err| format!("INFO cpu: {err}"))?;
    let field = |name: &str| -> Result<f64, Failure> {
        info.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|value| value.trim().parse().ok())
            .ok_or_else(|| format!("INFO cpu has no {name} (Redis 7 or newer reports it)"))
    };
    Ok(field("used_cpu_sys_main_thread")? + field("used_cpu_user_main_thread")?)
}

/// The calls and microseconds of `command` in an `INFO commandstats` text.
pub(crate) fn command_stats(stats: &str, command: &str) -> Option<(u64, u64)> {
    let line = stats
        .lines()
        .find_map(|line| line.strip_prefix(&format!("cmdstat_{command}:")))?;
    let field = |name: &str| {
        line.split(',')
            .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
            .and_then(|value| value.trim().parse::<u64>().ok())
    };
    Some((field("calls")?, field("usec")?))
}

pub(crate) fn server_version(admin: &mut redis::Connection) -> Result<String, Failure> {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(admin)
        .map_err(|err| format!("INFO server: {err}"))?;
    Ok(info
        .lines()
        .find_map(|line| line.strip_prefix("redis_version:"))
        .unwrap_or("unknown")
        .trim()
        .to_owned())
}

/// The median, lowest and highest of `values` (not empty).
fn spread(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        f64::midpoint(values[n / 2 - 1], values[n / 2])
    };
    (median, values[0], values[n - 1])
}

/// The medians of one variant: commandstats per call, per decision, CPU per decision.
fn medians(figures: &[Figures]) -> [(f64, f64, f64); 3] {
    [
        spread(figures.iter().map(|f| f.usec_per_call).collect()),
        spread(figures.iter().map(|f| f.usec_per_decision).collect()),
        spread(figures.iter().map(|f| f.cpu_per_decision).collect()),
    ]
}

fn table(variants: &[Variant], figures: &[Vec<Figures>], args: &Args, version: &str) -> String {
    let all: Vec<[(f64, f64, f64); 3]> = figures.iter().map(|f| medians(f)).collect();
    let index = |name: &str| variants.iter().position(|v| v.name == name);
    let (envoy, floor) = (index("envoy"), index("floor"));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "server cost per decision: redis-server {version}, {} clients, {} s per variant, {} runs (median, lowest–highest)",
        args.clients, args.seconds, args.runs
    );
    if let Some(path) = &args.script {
        let _ = writeln!(out, "exact-*: the script in {}", path.display());
    }
    let _ = writeln!(
        out,
        "| variant | what the server runs | commandstats µs per call | commandstats µs per decision | main-thread CPU µs per decision | against the floor (call · CPU) | against envoy (decision · CPU) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for (variant, m) in variants.iter().zip(&all) {
        let ratio = |base: Option<usize>, what: usize| {
            base.map_or(f64::NAN, |base| m[what].0 / all[base][what].0)
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} ({:.2}–{:.2}) | {:.2} ({:.2}–{:.2}) | {:.2} ({:.2}–{:.2}) | {:.2}× · {:.2}× | {:.2}× · {:.2}× |",
            variant.name,
            variant.what,
            m[0].0,
            m[0].1,
            m[0].2,
            m[1].0,
            m[1].1,
            m[1].2,
            m[2].0,
            m[2].1,
            m[2].2,
            ratio(floor, 1),
            ratio(floor, 2),
            ratio(envoy, 1),
            ratio(envoy, 2),
        );
    }
    out
}

fn json(variants: &[Variant], figures: &[Vec<Figures>], args: &Args, version: &str) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{{\n  \"redis_version\": \"{version}\",\n  \"clients\": {},\n  \"seconds\": {},\n  \"runs\": {}",
        args.clients, args.seconds, args.runs
    );
    // A path's text in JSON's quotes: Rust's escapes of `"` and `\` are JSON's.
    let script = args.script.as_ref().map_or_else(
        || "the shared limiter's".to_owned(),
        |p| p.display().to_string(),
    );
    let _ = write!(out, ",\n  \"script\": {script:?}");
    for (variant, figures) in variants.iter().zip(figures) {
        let m = medians(figures);
        let list = |values: Vec<String>| values.join(", ");
        let _ = write!(
            out,
            ",\n  \"{}\": {{\n    \"usec_per_call\": {:.3},\n    \"usec_per_decision\": {:.3},\n    \"cpu_usec_per_decision\": {:.3},\n    \"decisions\": [{}],\n    \"usec_per_decision_runs\": [{}],\n    \"cpu_usec_per_decision_runs\": [{}]\n  }}",
            variant.name,
            m[0].0,
            m[1].0,
            m[2].0,
            list(figures.iter().map(|f| f.decisions.to_string()).collect()),
            list(
                figures
                    .iter()
                    .map(|f| format!("{:.3}", f.usec_per_decision))
                    .collect()
            ),
            list(
                figures
                    .iter()
                    .map(|f| format!("{:.3}", f.cpu_per_decision))
                    .collect()
            ),
        );
    }
    out.push_str("\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_stats_reads_calls_and_usec_of_the_named_command_only() {
        let stats = "# Commandstats\r\ncmdstat_evalsha:calls=12,usec=345,usec_per_call=28.75,rejected_calls=0,failed_calls=1\r\ncmdstat_incrby:calls=3,usec=4,usec_per_call=1.33,rejected_calls=0,failed_calls=0\r\n";
        assert_eq!(command_stats(stats, "evalsha"), Some((12, 345)));
        assert_eq!(command_stats(stats, "incrby"), Some((3, 4)));
        assert_eq!(command_stats(stats, "expire"), None);
    }

    #[test]
    fn spread_is_the_median_and_the_extremes() {
        assert_eq!(spread(vec![3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(spread(vec![4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
    }
}
