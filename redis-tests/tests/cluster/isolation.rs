//! A primary in trouble costs only its own keys: with one limiter and several tasks on keys
//! spread over the primaries, a stalled replica (under `with_wait_for_replicas(1)`), a stalled
//! primary or a killed primary leaves the keys of the other primaries deciding as before, none
//! of them `Unavailable`, while the troubled primary's keys may time out.
//!
//! Each test measures, per group of keys (on the troubled primary, on the others), the attempts
//! made, those `Unavailable` and the median and slowest latency, before the fault (those that
//! ended before it) and during it (those in flight at any moment of it), and prints them. The
//! latency bound asserted is generous (a round trip on loopback is well under a millisecond; a
//! call held behind the troubled primary waits its timeout).

use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use fixed_window_redis::{Config, SharedError, UnavailableKind};
use fixed_window_redis_test::RedisCluster;
use fixed_window_redis_tests::connect_when_replicated;

use crate::support::{Stopped, TestResult};

/// How many keys the tasks attempt, spread over the primaries by their slots.
const KEYS: usize = 20;
/// Tasks per key, each attempting its key in a loop.
const TASKS_PER_KEY: usize = 2;
/// Each call's bound: what a call held behind the troubled primary waits at most.
const TIMEOUT: Duration = Duration::from_millis(500);
/// How long the attempts run before the fault.
const BEFORE: Duration = Duration::from_secs(1);
/// The median latency the healthy primaries' keys must keep under the fault: a hundred times
/// a loopback round trip, a tenth of the timeout.
const HEALTHY_MEDIAN: Duration = Duration::from_millis(50);
/// The most attempts a task makes, so that the loop is bounded in count as well as in time.
const MOST_ATTEMPTS: usize = 200_000;

/// One attempt as a task saw it: when it started, how long it took, and its answer.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    on_troubled: bool,
    started: Instant,
    took: Duration,
    /// `None` for a decision (a permit or a rejection), the kind of `Unavailable` otherwise.
    unavailable: Option<UnavailableKind>,
}

/// The attempts of one group of keys over one span of time.
#[derive(Debug, Default)]
struct Figures {
    attempts: usize,
    unavailable: usize,
    median: Duration,
    slowest: Duration,
}

impl Figures {
    fn of<'a>(attempts: impl Iterator<Item = &'a Attempt>) -> Figures {
        let mut took = Vec::new();
        let mut unavailable = 0;
        for attempt in attempts {
            took.push(attempt.took);
            unavailable += usize::from(attempt.unavailable.is_some());
        }
        took.sort_unstable();
        Figures {
            attempts: took.len(),
            unavailable,
            median: took.get(took.len() / 2).copied().unwrap_or_default(),
            slowest: took.last().copied().unwrap_or_default(),
        }
    }
}

/// The figures of the healthy and the troubled primaries' keys before and during a fault.
#[derive(Debug)]
struct Measured {
    healthy_before: Figures,
    healthy_during: Figures,
    troubled_before: Figures,
    troubled_during: Figures,
    /// The kinds of `Unavailable` the healthy keys met during the fault.
    healthy_kinds: Vec<UnavailableKind>,
}

impl Measured {
    /// Prints the figures of `fault`, then requires the healthy keys isolated from it and
    /// the troubled primary's keys to have gone `Unavailable`: the fault was real.
    fn judge(&self, fault: &str, during: Duration) {
        self.print(fault, during);
        self.assert_isolated();
        assert!(
            self.troubled_during.unavailable > 0,
            "{:?}",
            self.troubled_during
        );
    }

    fn print(&self, fault: &str, during: Duration) {
        let per_second = |figures: &Figures, span: Duration| {
            u64::try_from(figures.attempts).unwrap_or(u64::MAX) * 1_000
                / u64::try_from(span.as_millis().max(1)).unwrap_or(u64::MAX)
        };
        for (group, span, figures) in [
            ("healthy before", BEFORE, &self.healthy_before),
            ("healthy during", during, &self.healthy_during),
            ("troubled before", BEFORE, &self.troubled_before),
            ("troubled during", during, &self.troubled_during),
        ] {
            eprintln!(
                "{fault}: {group}: {} attempts ({}/s), {} unavailable, median {:?}, slowest {:?}",
                figures.attempts,
                per_second(figures, span),
                figures.unavailable,
                figures.median,
                figures.slowest,
            );
        }
    }

    /// The healthy primaries' keys kept deciding, none `Unavailable`, at a bounded median
    /// latency; the troubled primary's keys were attempted at all during the fault.
    fn assert_isolated(&self) {
        assert!(
            self.healthy_before.attempts > 0 && self.healthy_during.attempts > 0,
            "the healthy keys were not attempted: {self:?}"
        );
        assert_eq!(
            self.healthy_during.unavailable, 0,
            "keys on healthy primaries went unavailable: {:?}",
            self.healthy_kinds
        );
        assert!(
            self.healthy_during.median < HEALTHY_MEDIAN,
            "keys on healthy primaries slowed to a median of {:?}",
            self.healthy_during.median
        );
    }
}

/// Keys, each with whether it lives on the troubled primary.
type Keys = Vec<(String, bool)>;

/// The troubled primary's port (the primary of the first key) and [`KEYS`] keys, each with
/// whether it lives there; every primary has two keys at least.
fn spread_keys(
    cluster: &RedisCluster,
    config: &Config,
) -> Result<(u16, Keys), Box<dyn std::error::Error>> {
    let mut keys = Vec::new();
    for candidate in 0..KEYS {
        let key = format!("client-{candidate}");
        let master = cluster.master_of(cluster.slot_of(&config.cluster_counter_key(&key))?)?;
        keys.push((key, master));
    }
    let troubled = keys.first().ok_or("no keys")?.1;
    let on = |port: u16| keys.iter().filter(|(_, master)| *master == port).count();
    for master in cluster.masters()? {
        assert!(
            on(master.port) >= 2,
            "too few keys on {}: {keys:?}",
            master.port
        );
    }
    Ok((
        troubled,
        keys.into_iter()
            .map(|(key, master)| (key, master == troubled))
            .collect(),
    ))
}

/// Runs `TASKS_PER_KEY` tasks per key on one limiter for [`BEFORE`], then calls `fault` (which
/// returns once the fault is on), measures for `during`, then calls `end` and stops the tasks.
fn measure(
    cluster: &mut RedisCluster,
    config: &Config,
    keys: &[(String, bool)],
    during: Duration,
    fault: impl FnOnce(&mut RedisCluster) -> Result<Option<Stopped>, Box<dyn std::error::Error>>,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let client = cluster.client()?;
    let limiter = Arc::new(runtime.block_on(connect_when_replicated(config, &client))?);
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = keys
        .iter()
        .flat_map(|key| std::iter::repeat_n(key.clone(), TASKS_PER_KEY))
        .map(|(key, on_troubled)| {
            let limiter = Arc::clone(&limiter);
            let stop = Arc::clone(&stop);
            runtime.spawn(async move {
                let mut seen = Vec::new();
                for _ in 0..MOST_ATTEMPTS {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let started = Instant::now();
                    let answer = limiter.try_acquire_async(&key).await;
                    let unavailable = match answer {
                        Err(SharedError::Unavailable { cause, .. }) => Some(cause.kind()),
                        _ => None,
                    };
                    seen.push(Attempt {
                        on_troubled,
                        started,
                        took: started.elapsed(),
                        unavailable,
                    });
                }
                seen
            })
        })
        .collect();
    let began = Instant::now();
    std::thread::sleep(BEFORE);
    let faulted = Instant::now();
    let held = fault(cluster);
    std::thread::sleep(during);
    let ended = Instant::now();
    stop.store(true, Ordering::Relaxed);
    drop(held?);
    let mut attempts = Vec::new();
    for task in tasks {
        attempts.extend(runtime.block_on(task)?);
    }
    // Before: the attempts that ended before the fault began. During: those in flight at any
    // moment from its start to the end of the measure, those it caught in flight included.
    let before = |troubled: bool| {
        attempts
            .iter()
            .filter(move |a| a.on_troubled == troubled && a.started + a.took < faulted)
    };
    let during = |troubled: bool| {
        attempts.iter().filter(move |a| {
            a.on_troubled == troubled && a.started < ended && a.started + a.took >= faulted
        })
    };
    assert!(began <= faulted);
    Ok(Measured {
        healthy_before: Figures::of(before(false)),
        healthy_during: Figures::of(during(false)),
        troubled_before: Figures::of(before(true)),
        troubled_during: Figures::of(during(true)),
        healthy_kinds: during(false).filter_map(|a| a.unavailable).collect(),
    })
}

/// A configuration that every attempt takes to the server: a limit no test reaches.
fn config(name: &'static str) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of(name, 1_000_000_000, Duration::from_secs(3600))?
        .with_local_memory(0)
        .with_timeout(TIMEOUT)?)
}

#[test]
fn a_stalled_replica_slows_only_its_primarys_keys() -> TestResult {
    let mut cluster = RedisCluster::start()?;
    let config = config("isolated-replica")?.with_wait_for_replicas(1);
    let (troubled, keys) = spread_keys(&cluster, &config)?;
    let master_id = cluster
        .masters()?
        .into_iter()
        .find(|node| node.port == troubled)
        .ok_or("the troubled primary is not listed")?
        .id;
    let replica = cluster
        .replicas()?
        .into_iter()
        .find(|node| node.master_id.as_ref() == Some(&master_id))
        .ok_or("the primary has no replica")?
        .port;
    // A replica's absence does not fail the cluster: the fault may last.
    let during = Duration::from_secs(2);
    let measured = measure(&mut cluster, &config, &keys, during, |cluster| {
        Ok(Some(Stopped::node(cluster, replica)?))
    })?;
    measured.judge("stalled replica", during);
    Ok(())
}

#[test]
fn a_stalled_primary_slows_only_its_own_keys() -> TestResult {
    let mut cluster = RedisCluster::start()?;
    let config = config("isolated-stall")?;
    let (troubled, keys) = spread_keys(&cluster, &config)?;
    // Continued within the cluster's node timeout (1 s), so that no failover starts and no
    // node declares the cluster down meanwhile.
    let during = Duration::from_millis(800);
    let measured = measure(&mut cluster, &config, &keys, during, |cluster| {
        Ok(Some(Stopped::node(cluster, troubled)?))
    })?;
    measured.judge("stalled primary", during);
    Ok(())
}

#[test]
fn a_killed_primary_slows_only_its_own_keys() -> TestResult {
    let mut cluster = RedisCluster::start()?;
    let config = config("isolated-kill")?;
    let (troubled, keys) = spread_keys(&cluster, &config)?;
    // Measured within the cluster's node timeout (1 s): once the primary is marked failed
    // until its replica takes over, every node answers `CLUSTERDOWN`, the server's doing.
    let during = Duration::from_millis(800);
    let measured = measure(&mut cluster, &config, &keys, during, |cluster| {
        cluster.kill_master(troubled)?;
        Ok(None)
    })?;
    measured.judge("killed primary", during);
    Ok(())
}
