//! The shared limiter (`fixed-window-redis`) against real `redis-server` processes: the tests are
//! in `tests/shared/` (one node, `cargo test -p fixed-window-redis-tests --test shared`) and
//! `tests/cluster/` (a 6-node Redis Cluster, `--test cluster`). The library holds what those
//! tests share with the shared limiter's benchmarks on a cluster (`benches/`):
//! [`connect_when_replicated`].

use core::time::Duration;

use fixed_window_redis::{Config, SharedError, SharedRateLimiter, UnavailableKind, redis};

/// How many times [`connect_when_replicated`] tries, and how long it pauses between two tries.
const TRIES: u32 = 100;
const PAUSE: Duration = Duration::from_millis(100);

/// Connects a limiter that waits for replicas (`Config::with_wait_for_replicas`) to a fresh
/// cluster: a replica may still be synchronising when the cluster first reports itself ok (and
/// slower still when several clusters start at once), and until it acknowledges, the
/// registration's `WAIT` counts none and `connect` fails `Unavailable` (`Unreplicated`). So a
/// connect refused that way is tried again, 100 ms apart, 100 times at most (about 10 s).
///
/// # Errors
///
/// The last `connect`'s error: any error but `Unreplicated` at once, `Unreplicated` after the
/// last try.
///
/// # Examples
///
/// ```no_run
/// use core::time::Duration;
/// use fixed_window_redis::Config;
/// use fixed_window_redis_test::RedisCluster;
///
/// let cluster = RedisCluster::start()?;
/// let config = Config::of("api", 10, Duration::from_secs(60))?.with_wait_for_replicas(1);
/// let runtime = tokio::runtime::Runtime::new()?;
/// let limiter = runtime.block_on(fixed_window_redis_tests::connect_when_replicated(&config, &cluster.client()?))?;
/// assert!(runtime.block_on(limiter.try_acquire_async("client-1")).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn connect_when_replicated(
    config: &Config,
    client: &redis::cluster::ClusterClient,
) -> Result<SharedRateLimiter, SharedError> {
    let mut tries = 0;
    loop {
        tries += 1;
        match SharedRateLimiter::connect(config.clone(), client.clone()).await {
            Err(SharedError::Unavailable { cause, .. })
                if cause.kind() == UnavailableKind::Unreplicated && tries < TRIES =>
            {
                tokio::time::sleep(PAUSE).await;
            }
            connected => return connected,
        }
    }
}
