//! Several OS processes sharing one limit through the fault proxy, one of them killed mid-run
//! and the server paused once: this test binary runs itself again as each child process (the
//! same test, told by an environment variable that it is a child). Each child writes a line
//! before each attempt and one after; an attempt with no line after is one whose process died.

use core::time::Duration;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use fixed_window_models::shared::{Attempt, Reply, SharedHistory};
use fixed_window_redis::{Config, SharedRateLimiter};
use fixed_window_redis_test::RedisServer;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::TestResult;
use crate::clock::server_now;
use crate::planted::{PlantedBug, PlantedClient, micros, offset};
use crate::proxy::{FaultProxy, Faults};
use crate::run::{LIMIT, PERIOD, TIMEOUT};
use crate::subject::Replica;
use crate::verdict::Verdict;

/// Set in a child: its proxy URL, seed, attempts per thread, log path and what it runs
/// (`limiter`, or `own-origin` for the planted bug).
const CHILD: &str = "FIXED_WINDOW_FAULTS_CHILD";
const NAME: &str = "faults-processes";
const KEYS: [&str; 3] = ["hot", "k1", "k2"];
const CHILDREN: usize = 3;
const THREADS: usize = 2;
const ATTEMPTS: usize = 60;
/// The longest the parent waits for a child's progress or exit.
const DEADLINE: Duration = Duration::from_secs(60);

fn config() -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Config::of(NAME, LIMIT, PERIOD)?
        .with_timeout(TIMEOUT)?
        .with_local_memory(0))
}

#[test]
fn several_processes_share_one_limit_through_faults() -> TestResult {
    if let Ok(spec) = std::env::var(CHILD) {
        return child(&spec);
    }
    let verdict = parent(
        "processes::several_processes_share_one_limit_through_faults",
        "limiter",
    )?;
    assert!(!verdict.caught(), "{verdict:?}");
    Ok(())
}

#[test]
fn processes_each_aligning_their_own_origin_are_caught() -> TestResult {
    if let Ok(spec) = std::env::var(CHILD) {
        return child(&spec);
    }
    let verdict = parent(
        "processes::processes_each_aligning_their_own_origin_are_caught",
        "own-origin",
    )?;
    assert!(verdict.linearizable.is_err(), "{verdict:?}");
    Ok(())
}

/// Runs the children of `test` (its full name, for running it alone in a child), each running
/// `subject`, and judges their history.
fn parent(test: &str, subject: &str) -> Result<Verdict, Box<dyn std::error::Error>> {
    let server = RedisServer::start()?;
    // This process fixes the shared origin; the children adopt it.
    let origin = SharedRateLimiter::connect_blocking(config()?, server.client()?)?
        .origin()
        .ok_or("a connected limiter has registered")?;
    let proxy = FaultProxy::start(server.port(), 11)?;
    proxy.set_faults(Faults {
        delay: 0.2,
        delay_max: Duration::from_millis(2),
        lose_reply: 0.02,
        reset: 0.02,
        ..Faults::NONE
    });
    let logs: Vec<PathBuf> = (0..CHILDREN)
        .map(|n| {
            std::env::temp_dir().join(format!(
                "fixed-window-faults-{}-{subject}-{n}.log",
                std::process::id()
            ))
        })
        .collect();
    let mut children = Vec::new();
    for (n, log) in logs.iter().enumerate() {
        let spec = format!(
            "{} {} {ATTEMPTS} {} {subject}",
            proxy.url(),
            100 + n,
            log.display()
        );
        // Children start a fraction of a period apart, so that each one fixing its own origin
        // fixes a different one.
        std::thread::sleep(Duration::from_micros(offset(1, micros(PERIOD))));
        children.push(
            Command::new(std::env::current_exe()?)
                .args([test, "--exact", "--test-threads=1", "--quiet"])
                .env(CHILD, spec)
                // A failing child's test harness says why on its standard output.
                .stdout(File::create(log.with_extension("out"))?)
                .stderr(Stdio::null())
                .spawn()?,
        );
    }
    let outcome = drive(&server, &logs, &mut children);
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    let attempts = outcome.and_then(|statuses| {
        let attempts = read_logs(&logs)?;
        Ok((statuses, attempts))
    });
    let outputs: Vec<String> = logs
        .iter()
        .map(|log| std::fs::read_to_string(log.with_extension("out")).unwrap_or_default())
        .collect();
    for log in &logs {
        let _ = std::fs::remove_file(log);
        let _ = std::fs::remove_file(log.with_extension("out"));
    }
    let (statuses, attempts) = attempts?;
    for (n, ok) in statuses.iter().enumerate().skip(1) {
        assert!(ok, "child {n} failed:\n{}", outputs[n]);
    }

    let mut history = SharedHistory::new(origin, micros(PERIOD), LIMIT);
    history.attempts = attempts;
    let mut connection = server.client()?.get_connection()?;
    let mut immortal = Vec::new();
    for key in KEYS {
        let counter = config()?.counter_key(key);
        let ttl: i64 = redis::cmd("PTTL").arg(&counter).query(&mut connection)?;
        if ttl == -1 {
            immortal.push(counter);
        }
    }
    let verdict = Verdict {
        linearizable: fixed_window_models::shared::check(&history),
        ledger: fixed_window_models::shared::ledger::check(&history),
        immortal,
    };
    let crashed = history
        .attempts
        .iter()
        .filter(|a| a.returned.is_none())
        .count();
    eprintln!(
        "figures {NAME} ({subject}): {CHILDREN} processes, {} attempts ({crashed} cut off by the killed process), {verdict:?}, proxy {:?}",
        history.attempts.len(),
        proxy.injected()
    );
    Ok(verdict)
}

/// Kills the first child once it is under way, pauses the server once the second is, and
/// waits for the others to finish; whether each child exited successfully (the first, killed,
/// never does).
fn drive(
    server: &RedisServer,
    logs: &[PathBuf],
    children: &mut [Child],
) -> Result<Vec<bool>, Box<dyn std::error::Error>> {
    wait_for_lines(logs.first().ok_or("no child")?, ATTEMPTS / 2)?;
    children[0].kill()?;
    children[0].wait()?;
    wait_for_lines(logs.get(1).ok_or("no second child")?, ATTEMPTS)?;
    server.pause()?;
    std::thread::sleep(TIMEOUT * 2);
    server.resume()?;
    let started = std::time::Instant::now();
    let mut statuses = vec![false; children.len()];
    for (n, child) in children.iter_mut().enumerate().skip(1) {
        loop {
            if let Some(status) = child.try_wait()? {
                statuses[n] = status.success();
                break;
            }
            if started.elapsed() > DEADLINE {
                return Err(format!("child {n} did not finish").into());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok(statuses)
}

/// Waits until the log at `path` holds `lines` lines, at most [`DEADLINE`].
fn wait_for_lines(path: &Path, lines: usize) -> TestResult {
    let started = std::time::Instant::now();
    while std::fs::read_to_string(path).map_or(0, |log| log.lines().count()) < lines {
        if started.elapsed() > DEADLINE {
            return Err(format!("{} did not reach {lines} lines", path.display()).into());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// Every attempt the children logged; one begun but never finished has no return.
fn read_logs(logs: &[PathBuf]) -> Result<Vec<Attempt>, Box<dyn std::error::Error>> {
    let mut attempts = Vec::new();
    for log in logs {
        let mut begun: BTreeMap<u64, Attempt> = BTreeMap::new();
        for line in std::fs::read_to_string(log)?.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields[..] {
                ["I", id, key, invoked] => {
                    begun.insert(
                        id.parse()?,
                        Attempt::new(key, invoked.parse()?, None, Reply::Lost),
                    );
                }
                ["R", id, returned, ref reply @ ..] => {
                    let attempt = begun
                        .get_mut(&id.parse()?)
                        .ok_or("a reply with no attempt")?;
                    attempt.returned = Some(returned.parse()?);
                    attempt.reply = match reply {
                        ["P", remaining] => Reply::Permitted {
                            remaining: remaining.parse()?,
                        },
                        ["J", retry_after] => Reply::Rejected {
                            retry_after: Some(retry_after.parse()?),
                        },
                        ["L"] => Reply::Lost,
                        ["N"] => Reply::NotCounted,
                        _ => return Err(format!("a malformed reply: {line:?}").into()),
                    };
                }
                // A line cut short by the kill.
                _ => {}
            }
        }
        attempts.extend(begun.into_values());
    }
    Ok(attempts)
}

/// A child: one replica through the proxy, two threads attempting keys, each attempt logged
/// before and after.
fn child(spec: &str) -> TestResult {
    let [url, seed, attempts, log, subject] = spec.split(' ').collect::<Vec<_>>()[..] else {
        return Err(format!("a malformed child spec: {spec:?}").into());
    };
    let (seed, attempts): (u64, usize) = (seed.parse()?, attempts.parse()?);
    let client = redis::Client::open(url)?;
    let runtime = tokio::runtime::Runtime::new()?;
    // The proxy's faults may cut the first connection: a few tries.
    let mut replica = Err("never tried".into());
    for _ in 0..10 {
        replica = runtime.block_on(connect(subject, client.clone()));
        if replica.is_ok() {
            break;
        }
    }
    let replica = Arc::new(replica.map_err(|err| err as Box<dyn std::error::Error>)?);
    let runtime = Arc::new(runtime);
    let log = Arc::new(Mutex::new(File::create(log)?));
    let threads: Vec<_> = (0..THREADS as u64)
        .map(|thread| {
            let (replica, log, runtime) =
                (Arc::clone(&replica), Arc::clone(&log), Arc::clone(&runtime));
            std::thread::spawn(move || -> Result<(), String> {
                let mut rng = ChaCha8Rng::seed_from_u64(seed << 8 | thread);
                for n in 0..attempts as u64 {
                    let id = thread << 32 | n;
                    let key = KEYS[rng.random_range(0..KEYS.len())];
                    let write = |line: String| {
                        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
                        log.write_all(line.as_bytes())
                            .map_err(|err| err.to_string())
                    };
                    write(format!("I {id} {key} {}\n", server_now()))?;
                    let observed = runtime.block_on(replica.attempt(key, false))?;
                    let returned = server_now();
                    let reply = match observed.reply(true) {
                        Reply::Permitted { remaining } => format!("P {remaining}"),
                        Reply::Rejected { retry_after } => {
                            format!("J {}", retry_after.unwrap_or(0))
                        }
                        Reply::Lost => "L".to_owned(),
                        Reply::NotCounted => "N".to_owned(),
                    };
                    write(format!("R {id} {returned} {reply}\n"))?;
                    std::thread::sleep(Duration::from_micros(rng.random_range(0..=1_500)));
                }
                Ok(())
            })
        })
        .collect();
    for thread in threads {
        thread.join().map_err(|_| "a child's thread panicked")??;
    }
    Ok(())
}

/// The replica a child runs.
async fn connect(
    subject: &str,
    client: redis::Client,
) -> Result<Replica, Box<dyn std::error::Error + Send + Sync>> {
    let config = Config::of(NAME, LIMIT, PERIOD)?
        .with_timeout(TIMEOUT)?
        .with_local_memory(0);
    Ok(match subject {
        "limiter" => Replica::Limiter(SharedRateLimiter::connect(config, client).await?),
        "own-origin" => Replica::Planted(Box::new(
            PlantedClient::connect(
                PlantedBug::OwnOrigin,
                config,
                client,
                std::process::id() as usize,
            )
            .await?,
        )),
        _ => return Err(format!("no such subject: {subject:?}").into()),
    })
}
