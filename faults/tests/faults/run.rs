//! One run of a fault test: a real server (and, for a failover, its replica), the fault proxy
//! in front of it, several replicas of a limiter in this process, each with callers attempting
//! keys, every attempt recorded on the server's clock, and faults injected on the network and
//! on the server. Everything is bounded in count (attempts per caller) and in time (each wait
//! has a deadline); nothing is asserted about durations.

use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use fixed_window_models::shared::{Attempt, Loss, SharedHistory};
use fixed_window_redis::{Config, DEFAULT_LOCAL_MEMORY, FailPolicy, SharedRateLimiter};
use fixed_window_redis_test::RedisServer;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::clock::{Steady, server_now};
use crate::planted::{PlantedBug, PlantedClient, micros, offset};
use crate::proxy::{FaultProxy, Faults, Injected};
use crate::subject::{Observed, Replica};
use crate::time_key::{TIME_KEY, TimeKeeper};

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Permits per window per key.
pub const LIMIT: u32 = 3;
/// The window: long beside a loopback round trip (a fraction of a millisecond), short enough
/// that a run crosses dozens of boundaries.
pub const PERIOD: Duration = Duration::from_millis(25);
/// The clients' timeout: a request held longer is a lost reply. Long beside a round trip even
/// on a busy machine, so that a run without faults never times out.
pub const TIMEOUT: Duration = Duration::from_millis(250);
/// The longest any wait for progress or for the server may last before the run gives up.
const DEADLINE: Duration = Duration::from_secs(30);

/// What the server suffers during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerFault {
    None,
    /// Stopped in place (`SIGSTOP`) `times` times, each for `length`, then continued.
    Pause {
        times: usize,
        length: Duration,
    },
    /// Killed and started again without its data (no persistence).
    Restart,
    /// Replaced by a replica that stopped replicating a while before.
    Failover,
    /// Its script cache emptied (`SCRIPT FLUSH`) `times` times.
    Flush {
        times: usize,
    },
    /// Its clock (the script's time key) stepped forward a third of the way through, and back
    /// two thirds of the way.
    ClockSteps {
        forward: Duration,
        back: Duration,
    },
}

/// Who the replicas are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Limiter,
    Planted(PlantedBug),
}

/// A run's settings.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// The limiter's name.
    pub name: &'static str,
    pub subject: Subject,
    pub policy: FailPolicy,
    /// Whether the replicas remember full windows (then rejections may be local, and their
    /// `retry_after` is not the server's).
    pub local_memory: bool,
    /// The proxy's faults.
    pub faults: Faults,
    /// How often a caller dies right after its request (it never learns the outcome).
    pub crash: f64,
    pub server: ServerFault,
    pub replicas: usize,
    /// Callers per replica.
    pub callers: usize,
    /// Attempts per caller.
    pub attempts: usize,
    /// Keys: one hot key taking half the attempts, and `keys − 1` others.
    pub keys: usize,
    /// The server's clock read from the script's time key, written in whole grains of this
    /// length (see [`TimeKeeper`]), instead of `TIME`.
    pub time_key: Option<Duration>,
    pub seed: u64,
}

impl Plan {
    /// The production limiter, three replicas of four callers, 40 attempts each, four keys, no
    /// fault.
    pub fn new(name: &'static str, seed: u64) -> Plan {
        Plan {
            name,
            subject: Subject::Limiter,
            policy: FailPolicy::Closed,
            local_memory: false,
            faults: Faults::NONE,
            crash: 0.0,
            server: ServerFault::None,
            replicas: 3,
            callers: 4,
            attempts: 40,
            keys: 4,
            time_key: None,
            seed,
        }
    }

    fn key_names(&self) -> Vec<String> {
        let mut keys = vec!["hot".to_owned()];
        keys.extend((1..self.keys).map(|i| format!("k{i}")));
        keys
    }
}

/// What callers observed, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub permits: usize,
    pub rejections: usize,
    pub unavailable: usize,
    pub failed_open: usize,
    pub crashed: usize,
}

impl Tally {
    fn add(&mut self, observed: Observed) {
        match observed {
            Observed::Permitted { .. } => self.permits += 1,
            Observed::Rejected { .. } => self.rejections += 1,
            Observed::Unavailable { .. } => self.unavailable += 1,
            Observed::FailedOpen { .. } => self.failed_open += 1,
            Observed::Crashed => self.crashed += 1,
        }
    }
}

/// A finished run.
#[derive(Debug)]
pub struct Ran {
    pub plan: Plan,
    pub history: SharedHistory,
    pub injected: Injected,
    pub tally: Tally,
    /// Server faults carried out (pauses, restarts, failovers).
    pub server_faults: usize,
    /// Permits the primary had counted (in the keys' current windows) that the replica lacked
    /// when it took over.
    pub lag: u64,
    /// Counters left without an expiry at the end: keys that would live forever.
    pub immortal: Vec<String>,
    /// `NOSCRIPT` errors the server answered (from `INFO errorstats`).
    pub noscript: u64,
}

/// The servers of a run: the primary, and the replica a failover moves to.
struct Servers {
    primary: RedisServer,
    replica: Option<RedisServer>,
}

/// Runs `plan` to the end.
pub fn run(plan: Plan) -> Result<Ran, Box<dyn std::error::Error>> {
    run_to_end(plan).map_err(|err| err as Box<dyn std::error::Error>)
}

fn run_to_end(plan: Plan) -> Result<Ran, Error> {
    let steady = Steady::start();
    let primary = RedisServer::start()?;
    let replica = if plan.server == ServerFault::Failover {
        let replica = RedisServer::start()?;
        replicate(&replica, &primary)?;
        Some(replica)
    } else {
        None
    };
    let keeper = match plan.time_key {
        Some(grain) => Some(Arc::new(TimeKeeper::start(primary.port(), grain)?)),
        None => None,
    };
    let proxy = Arc::new(FaultProxy::start(primary.port(), plan.seed)?);
    let servers = Arc::new(Mutex::new(Servers { primary, replica }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let config = config_of(&plan)?;
    let replicas = runtime.block_on(connect(&plan, &config, &proxy))?;
    let origin = replicas
        .iter()
        .filter_map(Replica::origin)
        .min()
        .unwrap_or(0);

    proxy.set_faults(plan.faults);
    let progress = Arc::new(AtomicUsize::new(0));
    let total = plan.replicas * plan.callers * plan.attempts;
    let control_thread = {
        let (servers, proxy, progress, keeper) = (
            Arc::clone(&servers),
            Arc::clone(&proxy),
            Arc::clone(&progress),
            keeper.clone(),
        );
        let keys: Vec<String> = plan
            .key_names()
            .iter()
            .map(|k| config.counter_key(k))
            .collect();
        let config_key = config.config_key().to_owned();
        std::thread::spawn(move || {
            let on = On {
                servers: &servers,
                proxy: &proxy,
                keeper: keeper.as_deref(),
            };
            control(plan, &on, &progress, total, &config_key, &keys)
        })
    };
    let records = runtime.block_on(callers(&plan, replicas, &progress, keeper.clone()))?;
    let controlled = control_thread
        .join()
        .map_err(|_| "the fault controller panicked")??;
    proxy.set_faults(Faults::NONE);
    drop(runtime);

    let servers = servers.lock().unwrap_or_else(PoisonError::into_inner);
    let current = servers
        .replica
        .as_ref()
        .filter(|_| plan.server == ServerFault::Failover)
        .unwrap_or(&servers.primary);
    let mut connection = current.client()?.get_connection()?;
    let mut losses = controlled.losses;
    for loss in &mut losses {
        if loss.origin.is_some() {
            // The origin the first attempt after the restart fixed; if none ran, none matters.
            loss.origin = Some(stored_origin(&mut connection, &config)?.unwrap_or(loss.to));
        }
    }
    let immortal = immortal_counters(&mut connection, &plan, &config)?;
    let noscript = noscript_errors(&mut connection)?;
    let steps = match &keeper {
        Some(keeper) => keeper.finish()?,
        None => Vec::new(),
    };
    steady.check()?;
    let mut tally = Tally::default();
    let mut attempts = Vec::with_capacity(records.len());
    for (attempt, observed) in records {
        tally.add(observed);
        attempts.push(attempt);
    }
    Ok(Ran {
        plan,
        history: SharedHistory {
            origin,
            period: micros(PERIOD),
            limit: LIMIT,
            attempts,
            losses,
            steps,
        },
        injected: proxy.injected(),
        tally,
        server_faults: controlled.done,
        lag: controlled.lag,
        immortal,
        noscript,
    })
}

/// The replicas' configuration under `plan`.
fn config_of(plan: &Plan) -> Result<Config, Error> {
    let config = Config::of(plan.name, LIMIT, PERIOD)?
        .with_fail_policy(plan.policy)
        .with_timeout(TIMEOUT)?
        .with_local_memory(if plan.local_memory {
            DEFAULT_LOCAL_MEMORY
        } else {
            0
        });
    Ok(match plan.time_key {
        Some(_) => config.with_time_key(TIME_KEY)?,
        None => config,
    })
}

/// Connects the replicas through the proxy, a fraction of a period apart (so that a replica
/// that fixes its own origin fixes a different one).
async fn connect(plan: &Plan, config: &Config, proxy: &FaultProxy) -> Result<Vec<Replica>, Error> {
    let mut replicas = Vec::new();
    for replica in 0..plan.replicas {
        let start = server_now() + offset(1, micros(PERIOD));
        // No fault is on yet, but a busy machine may still miss a timeout: a few tries.
        let mut connected = Err(Error::from("never tried"));
        for _ in 0..5 {
            connected = match plan.subject {
                Subject::Limiter => SharedRateLimiter::connect(config.clone(), proxy.client()?)
                    .await
                    .map(Replica::Limiter)
                    .map_err(Error::from),
                Subject::Planted(bug) => {
                    PlantedClient::connect(bug, config.clone(), proxy.client()?, replica)
                        .await
                        .map(|planted| Replica::Planted(Box::new(planted)))
                }
            };
            if connected.is_ok() {
                break;
            }
        }
        replicas.push(connected?);
        while server_now() < start {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    Ok(replicas)
}

/// Every caller of every replica, to the end; each attempt with what its caller observed.
async fn callers(
    plan: &Plan,
    replicas: Vec<Replica>,
    progress: &Arc<AtomicUsize>,
    keeper: Option<Arc<TimeKeeper>>,
) -> Result<Vec<(Attempt, Observed)>, Error> {
    let keys = Arc::new(plan.key_names());
    let mut tasks = Vec::new();
    for (r, replica) in replicas.into_iter().enumerate() {
        let replica = Arc::new(replica);
        for c in 0..plan.callers {
            let (replica, keys, progress, keeper) = (
                Arc::clone(&replica),
                Arc::clone(&keys),
                Arc::clone(progress),
                keeper.clone(),
            );
            let plan = *plan;
            let caller = r * plan.callers + c;
            let seed =
                plan.seed ^ ((r as u64) << 32 | c as u64).wrapping_mul(0x2545_F491_4F6C_DD1D);
            tasks.push(tokio::spawn(async move {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut records = Vec::with_capacity(plan.attempts);
                for _ in 0..plan.attempts {
                    let key = if rng.random_bool(0.5) {
                        &keys[0]
                    } else {
                        &keys[rng.random_range(0..keys.len())]
                    };
                    let crash = rng.random_bool(plan.crash);
                    // The server's clock: the host's, or the time key the keeper writes.
                    let invoked = keeper.as_ref().map_or_else(server_now, |k| k.invoked());
                    let observed = replica.attempt(key, crash).await?;
                    let returned = keeper.as_ref().map_or_else(server_now, |k| k.returned());
                    let returned = (observed != Observed::Crashed).then_some(returned);
                    let reply = observed.reply(!plan.local_memory);
                    records.push((
                        Attempt::new(key.as_str(), invoked, returned, reply).by(caller),
                        observed,
                    ));
                    progress.fetch_add(1, Ordering::SeqCst);
                    let pause = rng.random_range(0..=2_000);
                    tokio::time::sleep(Duration::from_micros(pause)).await;
                }
                Ok::<_, String>(records)
            }));
        }
    }
    let mut records = Vec::new();
    for task in tasks {
        records.extend(task.await??);
    }
    Ok(records)
}

/// What the controller did.
struct Controlled {
    losses: Vec<Loss>,
    done: usize,
    /// Permits the primary had counted that the replica lacked at the failover.
    lag: u64,
}

/// What the controller acts on.
struct On<'a> {
    servers: &'a Mutex<Servers>,
    proxy: &'a FaultProxy,
    keeper: Option<&'a TimeKeeper>,
}

/// Carries out the server fault, each step when the callers have made enough progress.
fn control(
    plan: Plan,
    on: &On<'_>,
    progress: &AtomicUsize,
    total: usize,
    config_key: &str,
    counters: &[String],
) -> Result<Controlled, Error> {
    let (servers, proxy) = (on.servers, on.proxy);
    let reached = |fraction: usize, of: usize| wait_for(progress, total * fraction / of);
    let lock = || servers.lock().unwrap_or_else(PoisonError::into_inner);
    let mut controlled = Controlled {
        losses: Vec::new(),
        done: 0,
        lag: 0,
    };
    match plan.server {
        ServerFault::None => {}
        ServerFault::ClockSteps { forward, back } => {
            let keeper = on.keeper.ok_or("no time keeper")?;
            if reached(1, 3) {
                keeper.step(i64::try_from(micros(forward))?);
                controlled.done += 1;
            }
            if reached(2, 3) {
                keeper.step(-i64::try_from(micros(back))?);
                controlled.done += 1;
            }
        }
        ServerFault::Flush { times } => {
            for n in 0..times {
                if !reached(n + 1, times + 1) {
                    break;
                }
                let mut connection = lock().primary.client()?.get_connection()?;
                redis::cmd("SCRIPT").arg("FLUSH").exec(&mut connection)?;
                controlled.done += 1;
            }
        }
        ServerFault::Pause { times, length } => {
            for n in 0..times {
                if !reached(n + 1, times + 1) {
                    break;
                }
                lock().primary.pause()?;
                std::thread::sleep(length);
                lock().primary.resume()?;
                controlled.done += 1;
            }
        }
        ServerFault::Restart => {
            if reached(1, 3) {
                // The state is lost when the process dies; the restart that follows only makes
                // the server unavailable for a while.
                let from = server_now();
                lock().primary.stop()?;
                let to = server_now();
                lock().primary.restart()?;
                // The origin is read once the run is over: the first attempt after the restart
                // fixes it.
                controlled.losses.push(Loss::restart(from, to, 0));
                controlled.done += 1;
            }
        }
        ServerFault::Failover => {
            if reached(1, 4) {
                let servers = lock();
                let replica = servers.replica.as_ref().ok_or("no replica")?;
                // Everything written so far reaches the replica; then it stops replicating:
                // what the primary counts from now on, it lacks.
                caught_up(&servers.primary, replica)?;
                let mut connection = replica.client()?.get_connection()?;
                redis::cmd("REPLICAOF")
                    .arg("NO")
                    .arg("ONE")
                    .exec(&mut connection)?;
            }
            if reached(1, 2) {
                let mut servers = lock();
                let from = server_now();
                let replica = servers.replica.as_ref().ok_or("no replica")?;
                let counted = counters_of(&servers.primary, counters)?;
                let restored = counters_of(replica, counters)?;
                let configured: bool = redis::cmd("EXISTS")
                    .arg(config_key)
                    .query(&mut replica.client()?.get_connection()?)?;
                // What the replica lacks of the primary's current counts: its lag.
                controlled.lag = counted
                    .iter()
                    .map(|(key, &(start, used))| match restored.get(key) {
                        Some(&(same, kept)) if same == start => used.saturating_sub(kept),
                        _ => used,
                    })
                    .map(u64::from)
                    .sum();
                proxy.set_upstream(replica.port());
                proxy.sever();
                let to = server_now();
                servers.primary.stop()?;
                let mut loss = Loss::failover(from, to, restored);
                if !configured {
                    // The replica lacks the configuration too: the next attempt fixes a new
                    // origin, read once the run is over.
                    loss.origin = Some(0);
                }
                controlled.losses.push(loss);
                controlled.done += 1;
            }
        }
    }
    Ok(controlled)
}

/// Waits until `progress` reaches `target`, at most [`DEADLINE`]; whether it did.
fn wait_for(progress: &AtomicUsize, target: usize) -> bool {
    let started = std::time::Instant::now();
    while progress.load(Ordering::SeqCst) < target {
        if started.elapsed() > DEADLINE {
            return false;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    true
}

/// Makes `replica` replicate `primary`, and waits until writes on the primary reach it.
fn replicate(replica: &RedisServer, primary: &RedisServer) -> Result<(), Error> {
    // The primary would otherwise wait 5 s for more replicas before its first sync.
    let mut on_primary = primary.client()?.get_connection()?;
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("repl-diskless-sync-delay")
        .arg(0)
        .exec(&mut on_primary)?;
    let mut connection = replica.client()?.get_connection()?;
    redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(primary.port())
        .exec(&mut connection)?;
    // Twice: the first time the replica may have caught up by loading the synchronised data;
    // the second marker, written after that, can only reach it by the stream.
    caught_up(primary, replica)?;
    caught_up(primary, replica)
}

/// Waits until `replica` has applied everything `primary` wrote so far. A link reported up
/// may not carry the stream yet (after a diskless sync the primary streams to the replica only
/// once it acknowledges, within a second), and `WAIT` can be satisfied by that first
/// acknowledgement of the synchronised data; the offset of the stream the replica applied
/// cannot.
fn caught_up(primary: &RedisServer, replica: &RedisServer) -> Result<(), Error> {
    let mut on_primary = primary.client()?.get_connection()?;
    let mut on_replica = replica.client()?.get_connection()?;
    let started = std::time::Instant::now();
    loop {
        redis::cmd("INCR")
            .arg("test:replicated")
            .exec(&mut on_primary)?;
        let written = replication_offset(&mut on_primary, "master_repl_offset")?;
        std::thread::sleep(Duration::from_millis(1));
        if replication_offset(&mut on_replica, "slave_repl_offset")? >= written {
            return Ok(());
        }
        if started.elapsed() > DEADLINE {
            return Err("the replica did not catch up with the primary".into());
        }
    }
}

/// A replication offset from `INFO replication`.
fn replication_offset(connection: &mut redis::Connection, field: &str) -> Result<u64, Error> {
    let info: String = redis::cmd("INFO").arg("replication").query(connection)?;
    let value = info
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .ok_or_else(|| format!("no {field} in INFO replication"))?;
    Ok(value.trim().parse()?)
}

/// The counters a server holds for `counters`: per limiter key (the counter key's last part),
/// the window start and the used permits (both stored in hexadecimal).
fn counters_of(
    server: &RedisServer,
    counters: &[String],
) -> Result<BTreeMap<String, (u64, u32)>, Error> {
    let mut connection = server.client()?.get_connection()?;
    let mut restored = BTreeMap::new();
    for counter in counters {
        let value: Option<String> = redis::cmd("GET").arg(counter).query(&mut connection)?;
        let Some(value) = value else { continue };
        let (start, used) = value.split_once(':').ok_or("a malformed counter")?;
        let key = counter
            .rsplit(':')
            .next()
            .ok_or("a malformed counter key")?;
        restored.insert(
            key.to_owned(),
            (
                u64::from_str_radix(start, 16)?,
                u32::from_str_radix(used, 16)?,
            ),
        );
    }
    Ok(restored)
}

/// The counters of the run's keys that the server holds without an expiry.
fn immortal_counters(
    connection: &mut redis::Connection,
    plan: &Plan,
    config: &Config,
) -> Result<Vec<String>, Error> {
    let mut immortal = Vec::new();
    for key in plan.key_names() {
        let counter = config.counter_key(&key);
        let ttl: i64 = redis::cmd("PTTL").arg(&counter).query(connection)?;
        if ttl == -1 {
            immortal.push(counter);
        }
    }
    Ok(immortal)
}

/// `NOSCRIPT` errors the server has answered since it started.
fn noscript_errors(connection: &mut redis::Connection) -> Result<u64, Error> {
    let info: String = redis::cmd("INFO").arg("errorstats").query(connection)?;
    let count = info
        .lines()
        .find_map(|line| line.strip_prefix("errorstat_NOSCRIPT:count="))
        .map_or(Ok(0), |count| count.trim().parse())?;
    Ok(count)
}

/// The origin the server stores for the limiter, if any.
fn stored_origin(
    connection: &mut redis::Connection,
    config: &Config,
) -> Result<Option<u64>, Error> {
    let stored: Option<String> = redis::cmd("GET")
        .arg(config.config_key())
        .query(connection)?;
    match stored {
        None => Ok(None),
        Some(stored) => Ok(Some(
            stored
                .split(':')
                .next()
                .ok_or("a malformed configuration")?
                .parse()?,
        )),
    }
}
