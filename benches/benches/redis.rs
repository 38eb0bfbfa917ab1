//! The shared limiter (`fixed-window-redis`) against a local `redis-server` the benchmark
//! starts (loopback, persistence off), beside the two patterns most deployments use and the
//! in-process limiter, in one run:
//!
//! - `redis-permit/<function>/<callers>`: a permitted attempt, wall time per attempt with
//!   `callers` concurrent (so its inverse is the throughput of them all together):
//!   - `shared`: `SharedRateLimiter::try_acquire_async` (tasks) or `try_acquire` (threads),
//!     one `EVALSHA` of the script;
//!   - `leased`: the same under `Config::with_lease(Lease::new(64))`: one lease call per
//!     share of 64 permits, the rest granted in-process (a limit no window reaches, so every
//!     share is the largest);
//!   - `leased-256`, `leased-1024`: the same with larger shares (`Lease::new(256)`,
//!     `Lease::new(1024)`, as a user may choose for a limit far above the traffic), at 16
//!     tasks on the hot key only: how the throughput scales with the share;
//!   - `envoy`: envoy's ratelimit pattern, `INCRBY` and `EXPIRE` pipelined in one round trip,
//!     the window's index (from the client's clock) in the key;
//!   - `naive`: `INCR`, then `EXPIRE` in a second round trip when the count is 1;
//!   - `in-process`: core's `RateLimiter::try_acquire`, no network at all.
//!
//!   `callers` is `1-task` or `16-tasks` (tokio tasks on a two-worker runtime, all over one
//!   `ConnectionManager`, all on one hot key), `16-tasks-16-keys` (the same, each task on a
//!   key of its own), or `4-threads` (blocking calls from four OS threads over one limiter).
//! - `redis-rejection/<function>/1-task`: an attempt on a full window, `local` (the window
//!   is remembered as full: no round trip) or `round-trip` (local memory off: the server says
//!   so every time).
//!
//! Latency percentiles: every attempt's own duration is recorded as it runs, and when the
//! run ends p50 and p99 per benchmark go to `target/redis-latency.json`
//! (`{"<group>/<function>/<callers>": {"p50_ns": …, "p99_ns": …, "samples": …}}`).
//!
//! Commands per attempt: after the timed benchmarks, a hundred more attempts of each measured
//! network benchmark run one at a time while a `MONITOR` connection watches the server; the
//! commands the clients sent (not those a script ran, which `MONITOR` marks `lua`) are counted
//! and added to the benchmark's entry (`"commands": …, "counted_attempts": 100`). A pipeline's
//! commands share one round trip, so commands per attempt bound round trips from above.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, measurement::WallTime};
use fixed_window::RateLimiter;
use fixed_window_redis::{Config, Lease, SharedRateLimiter};
use fixed_window_redis_test::RedisServer;
use redis::aio::ConnectionManager;
use tokio::runtime::Runtime;

/// The larger shares measured beside `Lease::new(64)`, at 16 tasks on the hot key.
const LARGER_SHARES: [u32; 2] = [256, 1024];

/// Enough permits that no benchmark runs out: a window of an hour and `u32::MAX` permits.
const OPEN: u32 = u32::MAX;
const HOUR: Duration = Duration::from_secs(3600);

/// The attempts' durations, per benchmark.
type Latencies = Arc<Mutex<BTreeMap<String, Vec<u64>>>>;

/// Attempts watched by `MONITOR` per benchmark.
const COUNTED_ATTEMPTS: u64 = 100;

/// What `ECHO`es the end of a count to the `MONITOR` connection.
const END_OF_COUNT: &str = "end-of-count";

struct Setup {
    _server: RedisServer,
    runtime: Runtime,
    client: redis::Client,
    latencies: Latencies,
}

fn setup() -> Setup {
    let server = RedisServer::start().expect("start redis-server (Debian package redis-server)");
    let client = server.client().expect("a client for the local server");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    Setup {
        _server: server,
        runtime,
        client,
        latencies: Latencies::default(),
    }
}

fn record(latencies: &Latencies, id: &str, samples: Vec<u64>) {
    latencies
        .lock()
        .expect("latencies")
        .entry(id.to_owned())
        .or_default()
        .extend(samples);
}

/// One way of making a permitted attempt from a task.
#[derive(Clone)]
enum Pattern {
    Shared(Arc<SharedRateLimiter>),
    Envoy(ConnectionManager),
    Naive(ConnectionManager),
}

impl Pattern {
    async fn attempt(&mut self, key: &str) {
        match self {
            Pattern::Shared(limiter) => {
                black_box(limiter.try_acquire_async(key).await.expect("a permit"));
            }
            Pattern::Envoy(connection) => {
                let window = unix_seconds() / HOUR.as_secs();
                let key = format!("envoy:{key}:{window}");
                let (count, _): (i64, bool) = redis::pipe()
                    .cmd("INCRBY")
                    .arg(&key)
                    .arg(1)
                    .cmd("EXPIRE")
                    .arg(&key)
                    .arg(HOUR.as_secs())
                    .query_async(connection)
                    .await
                    .expect("INCRBY and EXPIRE");
                black_box(count);
            }
            Pattern::Naive(connection) => {
                let window = unix_seconds() / HOUR.as_secs();
                let key = format!("naive:{key}:{window}");
                let count: i64 = redis::cmd("INCR")
                    .arg(&key)
                    .query_async(connection)
                    .await
                    .expect("INCR");
                if count == 1 {
                    redis::cmd("EXPIRE")
                        .arg(&key)
                        .arg(HOUR.as_secs())
                        .exec_async(connection)
                        .await
                        .expect("EXPIRE");
                }
                black_box(count);
            }
        }
    }
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// `iters` attempts spread over `tasks` concurrent tasks, on one hot key or (`keyed`) each
/// task on its own; the wall time of them all.
fn bench_tasks(
    group: &mut BenchmarkGroup<'_, WallTime>,
    setup: &Setup,
    function: &str,
    (tasks, keyed): (usize, bool),
    pattern: &Pattern,
) {
    let callers = match (tasks, keyed) {
        (1, _) => "1-task".to_owned(),
        (_, false) => format!("{tasks}-tasks"),
        (_, true) => format!("{tasks}-tasks-{tasks}-keys"),
    };
    let id = format!("{}/{function}/{callers}", "redis-permit");
    group.bench_function(BenchmarkId::new(function, &callers), |b| {
        b.iter_custom(|iters| {
            let per_task = iters.div_ceil(tasks as u64);
            setup.runtime.block_on(async {
                let began = Instant::now();
                let handles: Vec<_> = (0..tasks)
                    .map(|task| {
                        let mut pattern = pattern.clone();
                        let key = if keyed {
                            format!("key-{task}")
                        } else {
                            "hot".to_owned()
                        };
                        tokio::spawn(async move {
                            let mut samples = Vec::with_capacity(capacity(per_task));
                            for _ in 0..per_task {
                                let start = Instant::now();
                                pattern.attempt(&key).await;
                                samples.push(elapsed_nanos(start));
                            }
                            samples
                        })
                    })
                    .collect();
                for handle in handles {
                    record(&setup.latencies, &id, handle.await.expect("a task"));
                }
                scaled(began.elapsed(), iters, per_task * tasks as u64)
            })
        });
    });
}

/// `iters` blocking attempts spread over `threads` threads on one limiter.
fn bench_threads(
    group: &mut BenchmarkGroup<'_, WallTime>,
    setup: &Setup,
    limiter: &Arc<SharedRateLimiter>,
    threads: usize,
) {
    let callers = format!("{threads}-threads");
    let id = format!("redis-permit/shared/{callers}");
    group.bench_function(BenchmarkId::new("shared", &callers), |b| {
        b.iter_custom(|iters| {
            let per_thread = iters.div_ceil(threads as u64);
            let began = Instant::now();
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut samples = Vec::with_capacity(capacity(per_thread));
                            for _ in 0..per_thread {
                                let start = Instant::now();
                                black_box(limiter.try_acquire("hot").expect("a permit"));
                                samples.push(elapsed_nanos(start));
                            }
                            samples
                        })
                    })
                    .collect();
                for handle in handles {
                    record(&setup.latencies, &id, handle.join().expect("a thread"));
                }
            });
            scaled(began.elapsed(), iters, per_thread * threads as u64)
        });
    });
}

/// Single-threaded, blocking: `iters` attempts, each timed.
fn bench_sequential(
    group: &mut BenchmarkGroup<'_, WallTime>,
    latencies: &Latencies,
    id: (&str, &str),
    mut attempt: impl FnMut(),
) {
    let (group_name, function) = id;
    let id = format!("{group_name}/{function}/1-task");
    group.bench_function(BenchmarkId::new(function, "1-task"), |b| {
        b.iter_custom(|iters| {
            let mut samples = Vec::with_capacity(capacity(iters));
            let began = Instant::now();
            for _ in 0..iters {
                let start = Instant::now();
                attempt();
                samples.push(elapsed_nanos(start));
            }
            let total = began.elapsed();
            record(latencies, &id, samples);
            total
        });
    });
}

/// The time `iters` attempts take, from the time `done` (at least `iters`) took.
fn scaled(took: Duration, iters: u64, done: u64) -> Duration {
    let nanos = took.as_nanos() * u128::from(iters) / u128::from(done.max(1));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

fn capacity(n: u64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

fn elapsed_nanos(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The limiters and connections measured, all on the bench's server.
struct Subjects {
    /// The shared limiter, for tasks.
    shared: Arc<SharedRateLimiter>,
    /// The shared limiter leasing shares of 64, for tasks.
    leased: Arc<SharedRateLimiter>,
    /// The shared limiter leasing each of the [`LARGER_SHARES`], for tasks.
    leased_larger: Vec<(u32, Arc<SharedRateLimiter>)>,
    /// A connection for envoy's pattern and the naive one.
    manager: ConnectionManager,
    /// The shared limiter, for threads (blocking calls).
    blocking: Arc<SharedRateLimiter>,
    /// A limiter whose key `full` has no permit left, remembered locally.
    local: SharedRateLimiter,
    /// The same without local memory: every rejection is a round trip.
    remote: SharedRateLimiter,
}

fn connect(setup: &Setup) -> Subjects {
    let leasing = |name: &'static str, share: u32| async move {
        let config = Config::of(name, OPEN, HOUR)
            .expect("config")
            .with_lease(Lease::new(share).expect("a share"));
        let limiter = SharedRateLimiter::connect(config, setup.client.clone())
            .await
            .expect("connect");
        Arc::new(limiter)
    };
    let (shared, leased, leased_larger, manager) = setup.runtime.block_on(async {
        let config = Config::of("bench", OPEN, HOUR).expect("config");
        let limiter = SharedRateLimiter::connect(config, setup.client.clone())
            .await
            .expect("connect");
        let leased = leasing("bench-leased", 64).await;
        let mut leased_larger = Vec::new();
        for (share, name) in LARGER_SHARES
            .into_iter()
            .zip(["bench-leased-256", "bench-leased-1024"])
        {
            leased_larger.push((share, leasing(name, share).await));
        }
        let manager = ConnectionManager::new(setup.client.clone())
            .await
            .expect("connect");
        (Arc::new(limiter), leased, leased_larger, manager)
    });
    let blocking = Arc::new(
        SharedRateLimiter::connect_blocking(
            Config::of("bench-threads", OPEN, HOUR).expect("config"),
            setup.client.clone(),
        )
        .expect("connect"),
    );
    let full = |name: &'static str, memory: usize| {
        let config = Config::of(name, 1, HOUR)
            .expect("config")
            .with_local_memory(memory);
        let limiter =
            SharedRateLimiter::connect_blocking(config, setup.client.clone()).expect("connect");
        limiter.try_acquire("full").expect("the one permit");
        limiter
    };
    Subjects {
        shared,
        leased,
        leased_larger,
        manager,
        blocking,
        local: full("bench-local", 16),
        remote: full("bench-remote", 0),
    }
}

fn bench_all(c: &mut Criterion) {
    let setup = setup();
    let subjects = connect(&setup);

    let mut group = c.benchmark_group("redis-permit");
    for tasks in [1, 16] {
        // One task has one key either way; many tasks run on one hot key, then each on its own.
        for keyed in [false, true]
            .into_iter()
            .filter(|&keyed| !keyed || tasks > 1)
        {
            let callers = (tasks, keyed);
            bench_tasks(
                &mut group,
                &setup,
                "shared",
                callers,
                &Pattern::Shared(Arc::clone(&subjects.shared)),
            );
            bench_tasks(
                &mut group,
                &setup,
                "leased",
                callers,
                &Pattern::Shared(Arc::clone(&subjects.leased)),
            );
            // The larger shares at 16 tasks on the hot key only: where a share's lease call
            // weighs most, since every task waits for it.
            if tasks > 1 && !keyed {
                for (share, limiter) in &subjects.leased_larger {
                    bench_tasks(
                        &mut group,
                        &setup,
                        &format!("leased-{share}"),
                        callers,
                        &Pattern::Shared(Arc::clone(limiter)),
                    );
                }
            }
            bench_tasks(
                &mut group,
                &setup,
                "envoy",
                callers,
                &Pattern::Envoy(subjects.manager.clone()),
            );
            bench_tasks(
                &mut group,
                &setup,
                "naive",
                callers,
                &Pattern::Naive(subjects.manager.clone()),
            );
        }
    }
    bench_threads(&mut group, &setup, &subjects.blocking, 4);
    let in_process = RateLimiter::of("bench", OPEN, HOUR).expect("config");
    bench_sequential(
        &mut group,
        &setup.latencies,
        ("redis-permit", "in-process"),
        || {
            black_box(in_process.try_acquire().expect("a permit"));
        },
    );
    group.finish();

    let mut group = c.benchmark_group("redis-rejection");
    bench_sequential(
        &mut group,
        &setup.latencies,
        ("redis-rejection", "local"),
        || {
            black_box(
                subjects
                    .local
                    .try_acquire("full")
                    .expect_err("a full window"),
            );
        },
    );
    bench_sequential(
        &mut group,
        &setup.latencies,
        ("redis-rejection", "round-trip"),
        || {
            black_box(
                subjects
                    .remote
                    .try_acquire("full")
                    .expect_err("a full window"),
            );
        },
    );
    group.finish();

    let commands = count_commands(&setup, &subjects);
    write_percentiles(&setup.latencies, &commands);
}

/// Commands per attempt of every network benchmark that ran (see the module's
/// documentation), by benchmark id.
fn count_commands(setup: &Setup, subjects: &Subjects) -> BTreeMap<String, u64> {
    let measured = |id: &str| setup.latencies.lock().expect("latencies").contains_key(id);
    let mut commands = BTreeMap::new();
    for (function, pattern) in [
        ("shared", Pattern::Shared(Arc::clone(&subjects.shared))),
        ("leased", Pattern::Shared(Arc::clone(&subjects.leased))),
        ("envoy", Pattern::Envoy(subjects.manager.clone())),
        ("naive", Pattern::Naive(subjects.manager.clone())),
    ] {
        let id = format!("redis-permit/{function}/1-task");
        if measured(&id) {
            let mut pattern = pattern;
            let count = commands_sent(&setup.client, || {
                setup.runtime.block_on(pattern.attempt("hot"));
            });
            commands.insert(id, count);
        }
    }
    let counted: [(&str, &dyn Fn()); 3] = [
        ("redis-permit/shared/4-threads", &|| {
            black_box(subjects.blocking.try_acquire("hot").expect("a permit"));
        }),
        ("redis-rejection/local/1-task", &|| {
            black_box(
                subjects
                    .local
                    .try_acquire("full")
                    .expect_err("a full window"),
            );
        }),
        ("redis-rejection/round-trip/1-task", &|| {
            black_box(
                subjects
                    .remote
                    .try_acquire("full")
                    .expect_err("a full window"),
            );
        }),
    ];
    for (id, attempt) in counted {
        if measured(id) {
            commands.insert(id.to_owned(), commands_sent(&setup.client, attempt));
        }
    }
    commands
}

/// The commands the clients sent to the server during [`COUNTED_ATTEMPTS`] calls of
/// `attempt`, one at a time, as a `MONITOR` connection saw them: every command but those a
/// script ran (`MONITOR` tags them `[<db> lua]`).
fn commands_sent(client: &redis::Client, mut attempt: impl FnMut()) -> u64 {
    let mut monitor = client.get_connection().expect("a MONITOR connection");
    monitor
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    monitor
        .send_packed_command(&redis::cmd("MONITOR").get_packed_command())
        .expect("MONITOR");
    let ok: String = redis::from_redis_value(monitor.recv_response().expect("MONITOR's reply"))
        .expect("MONITOR's OK");
    assert_eq!(ok, "OK", "MONITOR's reply");
    for _ in 0..COUNTED_ATTEMPTS {
        attempt();
    }
    let mut marker = client.get_connection().expect("a connection");
    redis::cmd("ECHO")
        .arg(END_OF_COUNT)
        .exec(&mut marker)
        .expect("ECHO");
    let mut commands = 0;
    loop {
        let line: String = redis::from_redis_value(monitor.recv_response().expect("a command"))
            .expect("MONITOR's line");
        if line.contains(END_OF_COUNT) {
            return commands;
        }
        if !line.contains(" lua]") {
            commands += 1;
        }
    }
}

/// p50 and p99 per benchmark, and the commands counted for it, to
/// `target/redis-latency.json`.
fn write_percentiles(latencies: &Latencies, commands: &BTreeMap<String, u64>) {
    let latencies = latencies.lock().expect("latencies");
    let mut out = serde_json::Map::new();
    for (id, samples) in latencies.iter() {
        if samples.is_empty() {
            continue;
        }
        let mut sorted = samples.clone();
        sorted.sort_unstable();
        let at = |percent: usize| sorted[(sorted.len() - 1) * percent / 100];
        let mut entry =
            serde_json::json!({ "p50_ns": at(50), "p99_ns": at(99), "samples": sorted.len() });
        if let Some(count) = commands.get(id) {
            entry["commands"] = (*count).into();
            entry["counted_attempts"] = COUNTED_ATTEMPTS.into();
        }
        out.insert(id.clone(), entry);
    }
    let path = target_dir().join("redis-latency.json");
    let text = serde_json::to_string_pretty(&out).expect("JSON");
    std::fs::write(&path, text + "\n")
        .unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
    eprintln!("redis bench: latency percentiles in {}", path.display());
}

/// `CARGO_TARGET_DIR`, or the workspace's `target/`.
fn target_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir))
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_all
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
