//! The server's own time per decision: the shared limiter's script against envoy's
//! `INCRBY` + `EXPIRE`, as a fresh `redis-server` counts them.
//!
//! ```text
//! cargo run --release -p fixed-window-benches --example redis_server_time -- [decisions] [clients]
//! ```
//!
//! Defaults: 200,000 decisions of each kind, from 16 clients at once (each its own
//! connection, one request in flight). The kinds:
//!
//! - `shared/begun`: `EVALSHA` of [`fixed_window_redis::SCRIPT`] in the one-node layout
//!   (`KEYS` = `fixed-window:{server-time}`, `fixed-window:{server-time}:begun-<client>`;
//!   `ARGV` = `3600000000 4294967295 1000 acquire 1`), each client on its own key, whose
//!   window began before the count;
//! - `shared/fresh`: the same, each call on a key never used (`fresh-<client>-<i>`), so
//!   that each call begins a window;
//! - `envoy/begun` and `envoy/fresh`: envoy's `INCRBY <key> 1` and `EXPIRE <key> 3600`,
//!   pipelined, on `envoy:{<key>}:0` for the same keys.
//!
//! Before each kind `CONFIG RESETSTAT` clears the command statistics; after it, `INFO
//! commandstats` gives each command's `calls`, `usec` and `usec_per_call`, and `INFO cpu`
//! (read before and after) the server's CPU time (`used_cpu_user` + `used_cpu_sys`). Server
//! microseconds per decision are the `usec` of the kind's commands over the decisions; CPU
//! per million decisions is the CPU time over the decisions, times a million: it counts
//! what the command statistics do not (reading requests, writing replies, the event loop).
//! Everything goes to `target/redis-server-time.json`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use fixed_window_redis::SCRIPT;
use fixed_window_redis_test::RedisServer;
use redis::aio::MultiplexedConnection;
use serde_json::json;

/// The limiter's name in its keys.
const CONFIG_KEY: &str = "fixed-window:{server-time}";

/// The script's arguments for one attempt: an hour's period in microseconds, `u32::MAX`
/// permits, the expiry margin, the mode, one attempt.
const ACQUIRE: [&str; 5] = ["3600000000", "4294967295", "1000", "acquire", "1"];

/// A kind of decision: whose, and on which keys.
#[derive(Clone, Copy)]
enum Kind {
    ScriptBegun,
    ScriptFresh,
    EnvoyBegun,
    EnvoyFresh,
}

impl Kind {
    const ALL: [Kind; 4] = [
        Kind::ScriptBegun,
        Kind::ScriptFresh,
        Kind::EnvoyBegun,
        Kind::EnvoyFresh,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::ScriptBegun => "shared/begun",
            Kind::ScriptFresh => "shared/fresh",
            Kind::EnvoyBegun => "envoy/begun",
            Kind::EnvoyFresh => "envoy/fresh",
        }
    }

    /// The commands whose time is the decision's.
    fn commands(self) -> &'static [&'static str] {
        match self {
            Kind::ScriptBegun | Kind::ScriptFresh => &["evalsha"],
            Kind::EnvoyBegun | Kind::EnvoyFresh => &["incrby", "expire"],
        }
    }

    /// Client `client`'s key for its call number `call`.
    fn key(self, client: usize, call: u64) -> String {
        match self {
            Kind::ScriptBegun | Kind::EnvoyBegun => format!("begun-{client}"),
            Kind::ScriptFresh | Kind::EnvoyFresh => format!("fresh-{client}-{call}"),
        }
    }

    /// One decision on `key`.
    async fn decide(self, connection: &mut MultiplexedConnection, sha: &str, key: &str) {
        match self {
            Kind::ScriptBegun | Kind::ScriptFresh => {
                let reply: Vec<i64> = redis::cmd("EVALSHA")
                    .arg(sha)
                    .arg(2)
                    .arg(CONFIG_KEY)
                    .arg(format!("{CONFIG_KEY}:{key}"))
                    .arg(&ACQUIRE[..])
                    .query_async(connection)
                    .await
                    .expect("EVALSHA");
                assert_eq!(reply.first(), Some(&1), "a permit: {reply:?}");
            }
            Kind::EnvoyBegun | Kind::EnvoyFresh => {
                let key = format!("envoy:{{{key}}}:0");
                let (count, _): (i64, bool) = redis::pipe()
                    .cmd("INCRBY")
                    .arg(&key)
                    .arg(1)
                    .cmd("EXPIRE")
                    .arg(&key)
                    .arg(3600)
                    .query_async(connection)
                    .await
                    .expect("INCRBY and EXPIRE");
                assert!(count >= 1, "a count: {count}");
            }
        }
    }
}

/// `INFO <section>` as (field, value) pairs.
async fn info(connection: &mut MultiplexedConnection, section: &str) -> BTreeMap<String, String> {
    let text: String = redis::cmd("INFO")
        .arg(section)
        .query_async(connection)
        .await
        .expect("INFO");
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(field, value)| (field.to_owned(), value.trim().to_owned()))
        .collect()
}

/// The server's CPU time so far, in seconds.
async fn cpu_seconds(connection: &mut MultiplexedConnection) -> f64 {
    let cpu = info(connection, "cpu").await;
    let field = |name: &str| -> f64 {
        cpu.get(name)
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("INFO cpu without {name}"))
    };
    field("used_cpu_user") + field("used_cpu_sys")
}

/// One command's line of `INFO commandstats` (`calls=…,usec=…,usec_per_call=…,…`) as JSON.
fn command_stats(stats: &BTreeMap<String, String>, command: &str) -> serde_json::Value {
    let line = stats
        .get(&format!("cmdstat_{command}"))
        .unwrap_or_else(|| panic!("INFO commandstats without {command}"));
    let fields: BTreeMap<&str, f64> = line
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .filter_map(|(field, value)| Some((field, value.parse().ok()?)))
        .collect();
    json!({
        "calls": fields.get("calls"),
        "usec": fields.get("usec"),
        "usec_per_call": fields.get("usec_per_call"),
    })
}

/// `decisions` decisions of `kind` from `connections.len()` clients at once, measured as the
/// module's documentation says.
async fn measure(
    kind: Kind,
    admin: &mut MultiplexedConnection,
    connections: &[MultiplexedConnection],
    sha: &str,
    decisions: u64,
) -> serde_json::Value {
    let clients = connections.len();
    for (client, connection) in connections.iter().enumerate() {
        // Begins each begun key's window (a fresh key is never reused).
        kind.decide(&mut connection.clone(), sha, &kind.key(client, u64::MAX))
            .await;
    }
    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .exec_async(admin)
        .await
        .expect("CONFIG RESETSTAT");
    let cpu_before = cpu_seconds(admin).await;
    let began = Instant::now();
    let tasks: Vec<_> = connections
        .iter()
        .enumerate()
        .map(|(client, connection)| {
            let mut connection = connection.clone();
            let sha = sha.to_owned();
            let calls = decisions / clients as u64
                + u64::from((client as u64) < decisions % clients as u64);
            tokio::spawn(async move {
                for call in 0..calls {
                    kind.decide(&mut connection, &sha, &kind.key(client, call))
                        .await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a client");
    }
    let wall = began.elapsed().as_secs_f64();
    let stats = info(admin, "commandstats").await;
    let cpu = cpu_seconds(admin).await - cpu_before;
    let commands: serde_json::Map<String, serde_json::Value> = kind
        .commands()
        .iter()
        .map(|&command| ((*command).to_owned(), command_stats(&stats, command)))
        .collect();
    let usec: f64 = commands
        .values()
        .filter_map(|stats| stats["usec"].as_f64())
        .sum();
    // Decisions below 2^52: exact in f64.
    #[allow(clippy::cast_precision_loss)]
    let decisions = decisions as f64;
    json!({
        "commands": commands,
        "server_us_per_decision": usec / decisions,
        "cpu_s_per_million_decisions": cpu / decisions * 1e6,
        "wall_s": wall,
    })
}

/// `CARGO_TARGET_DIR`, or the workspace's `target/`.
fn target_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir))
}

/// The positional argument `n`, or `default`.
fn count_arg(n: usize, default: u64) -> u64 {
    std::env::args().nth(n).map_or(default, |arg| {
        arg.parse()
            .ok()
            .filter(|&count| count > 0)
            .unwrap_or_else(|| panic!("argument {n}: a positive count, not {arg:?}"))
    })
}

fn main() {
    let decisions = count_arg(1, 200_000);
    let clients = usize::try_from(count_arg(2, 16)).expect("a count of clients");
    let server = RedisServer::start().expect("start redis-server (Debian package redis-server)");
    let client = server.client().expect("a client for the local server");
    // One client thread: the server's `usec` is wall time inside each command, so a client
    // busy on every core would preempt the server mid-command and inflate it.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let out = runtime.block_on(async {
        let mut admin = client
            .get_multiplexed_async_connection()
            .await
            .expect("connect");
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(SCRIPT)
            .query_async(&mut admin)
            .await
            .expect("SCRIPT LOAD");
        let registered: Vec<i64> = redis::cmd("EVALSHA")
            .arg(&sha)
            .arg(1)
            .arg(CONFIG_KEY)
            .arg(&[ACQUIRE[0], ACQUIRE[1], ACQUIRE[2], "register", "0"][..])
            .query_async(&mut admin)
            .await
            .expect("register");
        assert_eq!(registered.first(), Some(&2), "registered: {registered:?}");
        let mut connections = Vec::with_capacity(clients);
        for _ in 0..clients {
            connections.push(
                client
                    .get_multiplexed_async_connection()
                    .await
                    .expect("connect"),
            );
        }
        let version = info(&mut admin, "server")
            .await
            .remove("redis_version")
            .unwrap_or_default();
        let mut kinds = serde_json::Map::new();
        for kind in Kind::ALL {
            let figures = measure(kind, &mut admin, &connections, &sha, decisions).await;
            eprintln!("redis_server_time: {}: {figures}", kind.name());
            kinds.insert(kind.name().to_owned(), figures);
        }
        json!({
            "decisions": decisions,
            "clients": clients,
            "redis_version": version,
            "kinds": kinds,
        })
    });
    let path = target_dir().join("redis-server-time.json");
    let text = serde_json::to_string_pretty(&out).expect("JSON");
    std::fs::write(&path, text + "\n")
        .unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
    eprintln!("redis_server_time: figures in {}", path.display());
}
