//! The shared limiter (`fixed-window-redis`) on a local Redis Cluster (three primaries, three
//! replicas, started by the bench) against envoy's ratelimit pattern on the same cluster, and
//! both on one local `redis-server` beside them, in one run:
//!
//! - `redis-cluster-permit/<pattern>/<server>/16-tasks-1000-keys`: a permitted attempt, wall
//!   time per attempt with 16 tokio tasks (a two-worker runtime) attempting together, over
//!   1,000 keys: task `t` cycles through keys `t`, `t + 16`, `t + 32`, … (its share);
//!   - `shared`: `SharedRateLimiter::try_acquire_async`, one `EVALSHA` of the script on the
//!     key's slot;
//!   - `shared-wait-1`: the same, configured `with_wait_for_replicas(1)`: `WAIT 1` pipelined
//!     with each `EVALSHA`, the permit granted once the slot's replica acknowledged the count
//!     (cluster only: the single node has no replica);
//!   - `leased`: the shared limiter under `Config::with_lease(Lease::new(64))`: one lease call
//!     per 64 permits of a key, the rest granted in the process;
//!   - `envoy`: envoy's pattern, `INCRBY` and `EXPIRE` pipelined in one round trip on
//!     `envoy:{<key>}:<window>` (the hash tag keeps the pipeline in one slot);
//!
//!   `server` is `cluster` (redis-rs's async cluster connection, one per pattern, shared by
//!   the tasks) or `node` (one `redis-server`, one `ConnectionManager`).
//!
//! Every key's window is an hour long and has begun before the timing starts (each key is
//! attempted once first), and the limit is `u32::MAX`: every attempt measured is a permit in a
//! window that has begun, as in a fleet's steady state.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, measurement::WallTime};
use fixed_window_redis::{Config, Lease, SharedRateLimiter};
use fixed_window_redis_test::{RedisCluster, RedisServer};
use fixed_window_redis_tests::connect_when_replicated;
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use tokio::runtime::Runtime;

/// Enough permits that no benchmark runs out: a window of an hour and `u32::MAX` permits.
const OPEN: u32 = u32::MAX;
const HOUR: Duration = Duration::from_secs(3600);

/// The keys the tasks share out.
const KEYS: usize = 1000;

/// The tasks attempting together.
const TASKS: usize = 16;

/// The benchmarks' parameter: [`TASKS`] tasks over [`KEYS`] keys.
const CALLERS: &str = "16-tasks-1000-keys";

/// One way of making a permitted attempt from a task.
#[derive(Clone)]
enum Pattern {
    Shared(Arc<SharedRateLimiter>),
    EnvoyNode(ConnectionManager),
    EnvoyCluster(ClusterConnection),
}

impl Pattern {
    async fn attempt(&mut self, key: &str) {
        match self {
            Pattern::Shared(limiter) => {
                black_box(limiter.try_acquire_async(key).await.expect("a permit"));
            }
            Pattern::EnvoyNode(connection) => envoy(connection, key).await,
            Pattern::EnvoyCluster(connection) => envoy(connection, key).await,
        }
    }
}

/// envoy's ratelimit pattern: `INCRBY` and `EXPIRE` of the key's counter for the current
/// window, pipelined. The key's hash tag puts both commands in one slot, as a cluster needs.
async fn envoy(connection: &mut impl ConnectionLike, key: &str) {
    let window = unix_seconds() / HOUR.as_secs();
    let key = format!("envoy:{{{key}}}:{window}");
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

fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Task `task`'s share of the keys: `key-<task>`, `key-<task + 16>`, …
fn share(task: usize) -> Vec<String> {
    (task..KEYS)
        .step_by(TASKS)
        .map(|key| format!("key-{key}"))
        .collect()
}

/// Attempts every key once, so that every window measured has begun.
fn begin_windows(runtime: &Runtime, pattern: &Pattern) {
    runtime.block_on(async {
        let mut pattern = pattern.clone();
        for task in 0..TASKS {
            for key in share(task) {
                pattern.attempt(&key).await;
            }
        }
    });
}

/// `iters` attempts spread over [`TASKS`] concurrent tasks, each cycling through its share of
/// the keys; the wall time of them all.
fn bench_keys(
    group: &mut BenchmarkGroup<'_, WallTime>,
    runtime: &Runtime,
    (function, server): (&str, &str),
    pattern: &Pattern,
) {
    begin_windows(runtime, pattern);
    let function = format!("{function}/{server}");
    group.bench_function(BenchmarkId::new(function, CALLERS), |b| {
        b.iter_custom(|iters| {
            let per_task = iters.div_ceil(TASKS as u64);
            runtime.block_on(async {
                let began = Instant::now();
                let handles: Vec<_> = (0..TASKS)
                    .map(|task| {
                        let mut pattern = pattern.clone();
                        let keys = share(task);
                        tokio::spawn(async move {
                            for key in keys.iter().cycle().take(capacity(per_task)) {
                                pattern.attempt(key).await;
                            }
                        })
                    })
                    .collect();
                for handle in handles {
                    handle.await.expect("a task");
                }
                scaled(began.elapsed(), iters, per_task * TASKS as u64)
            })
        });
    });
}

/// The time `iters` attempts take, from the time `done` (at least `iters`) took.
fn scaled(took: Duration, iters: u64, done: u64) -> Duration {
    let nanos = took.as_nanos() * u128::from(iters) / u128::from(done.max(1));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

fn capacity(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The configuration of the `leased` rows: shares of at most 64 permits.
fn leased_config() -> Config {
    Config::of("bench-leased", OPEN, HOUR)
        .expect("config")
        .with_lease(Lease::new(64).expect("a share"))
}

/// The patterns over a cluster: the shared limiter, the same waiting for a replica, envoy's,
/// and the shared limiter leasing.
async fn on_cluster(cluster: &RedisCluster) -> (Pattern, Pattern, Pattern, Pattern) {
    let client = cluster.client().expect("a cluster client");
    let config = Config::of("bench", OPEN, HOUR).expect("config");
    let limiter = SharedRateLimiter::connect(config, client.clone())
        .await
        .expect("connect to the cluster");
    let waiting = Config::of("bench-wait", OPEN, HOUR)
        .expect("config")
        .with_wait_for_replicas(1);
    let waiting = connect_when_replicated(&waiting, &client)
        .await
        .expect("connect to the cluster, waiting for a replica");
    let leased = SharedRateLimiter::connect(leased_config(), client.clone())
        .await
        .expect("connect to the cluster, leasing");
    let connection = client
        .get_async_connection()
        .await
        .expect("a cluster connection");
    (
        Pattern::Shared(Arc::new(limiter)),
        Pattern::Shared(Arc::new(waiting)),
        Pattern::EnvoyCluster(connection),
        Pattern::Shared(Arc::new(leased)),
    )
}

/// The two patterns over one node.
async fn on_node(server: &RedisServer) -> (Pattern, Pattern) {
    let client = server.client().expect("a client for the local server");
    let config = Config::of("bench", OPEN, HOUR).expect("config");
    let limiter = SharedRateLimiter::connect(config, client.clone())
        .await
        .expect("connect to the server");
    let manager = ConnectionManager::new(client).await.expect("connect");
    (
        Pattern::Shared(Arc::new(limiter)),
        Pattern::EnvoyNode(manager),
    )
}

fn bench_all(c: &mut Criterion) {
    let cluster =
        RedisCluster::start().expect("start a Redis Cluster (Debian package redis-server)");
    let server = RedisServer::start().expect("start redis-server (Debian package redis-server)");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (shared_cluster, waiting_cluster, envoy_cluster, leased_cluster) =
        runtime.block_on(on_cluster(&cluster));
    let (shared_node, envoy_node) = runtime.block_on(on_node(&server));

    let mut group = c.benchmark_group("redis-cluster-permit");
    bench_keys(&mut group, &runtime, ("shared", "cluster"), &shared_cluster);
    bench_keys(
        &mut group,
        &runtime,
        ("shared-wait-1", "cluster"),
        &waiting_cluster,
    );
    bench_keys(&mut group, &runtime, ("envoy", "cluster"), &envoy_cluster);
    bench_keys(&mut group, &runtime, ("leased", "cluster"), &leased_cluster);
    bench_keys(&mut group, &runtime, ("shared", "node"), &shared_node);
    bench_keys(&mut group, &runtime, ("envoy", "node"), &envoy_node);
    group.finish();
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
