//! The exact limit per key on a cluster: eight threads in two processes, across window
//! boundaries.

use core::time::Duration;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use fixed_window_redis::redis::cluster::ClusterClient;
use fixed_window_redis::{Config, SharedRateLimiter};
use fixed_window_redis_test::RedisCluster;

use crate::support::{Granted, TestResult, hammer, origin, over, per_window};

/// Set in a child: the cluster's node URLs, comma-separated.
const CHILD: &str = "FIXED_WINDOW_CLUSTER_CHILD";
const LIMIT: u32 = 4;
const PERIOD: Duration = Duration::from_millis(200);
const KEYS: [&str; 6] = ["alice", "bob", "carol", "dave", "erin", "frank"];
/// How long each child's threads try.
const RUN: Duration = Duration::from_millis(1_600);
/// Attempts per thread at most, whatever the clock says.
const MOST_ATTEMPTS: usize = 50_000;
/// The longest the parent waits for a child.
const DEADLINE: Duration = Duration::from_secs(60);

fn config() -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of("exact", LIMIT, PERIOD)?.with_timeout(Duration::from_secs(2))?)
}

/// Children that are killed when the test ends, however it ends.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn eight_threads_in_two_processes_never_pass_the_limit_of_a_window() -> TestResult {
    if let Ok(urls) = std::env::var(CHILD) {
        return run_as_child(&urls);
    }
    let cluster = RedisCluster::start()?;
    let limiter = SharedRateLimiter::connect_blocking(config()?, cluster.client()?)?;
    let origin = origin(&limiter)?;

    let mut children = Children(Vec::new());
    let (sender, lines) = mpsc::channel();
    for _ in 0..2 {
        let mut child = Command::new(std::env::current_exe()?)
            .args([
                "exact::eight_threads_in_two_processes_never_pass_the_limit_of_a_window",
                "--exact",
                "--test-threads=1",
                "--nocapture",
                "--quiet",
            ])
            .env(CHILD, cluster.urls().join(","))
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no child stdout")?;
        children.0.push(child);
        let sender = sender.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
    }
    drop(sender);

    let started = Instant::now();
    let mut granted = Vec::new();
    let mut finished = 0;
    while let Ok(line) = lines.recv_timeout(DEADLINE.saturating_sub(started.elapsed())) {
        if let Some(permit) = Granted::parse(&line) {
            granted.push(permit);
        } else if let Some(unavailable) = line.strip_prefix("done unavailable=") {
            assert_eq!(unavailable, "0", "a healthy cluster answered every call");
            finished += 1;
        }
    }
    assert_eq!(finished, 2, "both children finished");

    let windows = per_window(&granted, origin, PERIOD)?;
    assert_eq!(over(&windows, LIMIT), [], "windows over the limit");
    // Across boundaries, and the limit reached, not only kept under: each key saw several
    // windows, and several of them gave exactly the limit.
    let mut seen: BTreeMap<&str, (BTreeSet<u64>, usize)> = BTreeMap::new();
    for ((key, window), &count) in &windows {
        let entry = seen.entry(key.as_str()).or_default();
        entry.0.insert(*window);
        entry.1 += usize::from(count == LIMIT);
    }
    assert_eq!(seen.len(), KEYS.len(), "{seen:?}");
    for (key, (windows, full)) in &seen {
        assert!(windows.len() >= 4, "{key}: {windows:?}");
        assert!(*full >= 3, "{key}: {full} full windows of {windows:?}");
    }
    Ok(())
}

/// A child: four threads on one limiter, each trying every key in turn for [`RUN`]; prints its
/// permits, then how many calls were `Unavailable`.
fn run_as_child(urls: &str) -> TestResult {
    let client = ClusterClient::new(urls.split(','))?;
    let limiter = SharedRateLimiter::connect_blocking(config()?, client)?;
    let stop = AtomicBool::new(false);
    let (granted, unavailable) = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(RUN);
            stop.store(true, Ordering::Relaxed);
        });
        hammer(&limiter, &KEYS, 4, MOST_ATTEMPTS, &stop)
    });
    for permit in granted {
        println!("{}", permit.line());
    }
    let unavailable = unavailable.len();
    println!("done unavailable={unavailable}");
    Ok(())
}
