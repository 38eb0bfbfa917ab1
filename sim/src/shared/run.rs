//! The shared-limiter simulation's event loop: client processes, each driving its own
//! [`Protocol`] (the shared limiter's sans-IO client: its local memory of full windows, its
//! wait-or-reject choice, its fail policy), over FIFO connections with delay and jitter, to
//! one simulated [`Server`] running the limiter's script; and the faults.
//!
//! A call goes as the production limiter's `acquire` loop does: `begin` an attempt (decided
//! locally, or a script call to send); queue it in its lane of the process's connection (the
//! one lane on one node, its key's hash slot on a cluster), which, as the production
//! coalescer does, has one batch in flight at a time and sends everything queued in it when
//! that returns (up to [`MAX_BATCH`](fixed_window_redis::MAX_BATCH) attempts) as one script
//! call per group that can share one (those made under one version of the limit), the groups'
//! calls together, lanes independently of each other; send `EVALSHA`, and on
//! `NOSCRIPT` `SCRIPT LOAD` then `EVALSHA` again, as redis-rs's script invocation does, the
//! whole round trip bounded by the timeout; `finish` each attempt of the batch with its part
//! of the reply or the cause of its absence; `conclude` it into a result and event, or a
//! sleep through the process's clock followed by another attempt. An attempt told the limit
//! changed is made again at once under the limit adopted, at most three times in a row.
//!
//! Processes change the limit as the scenario says ([`set_limit`](Sim::set_limit)): a script
//! call of its own on the process's connection, bounded by the timeout, whose answer the
//! process adopts.
//!
//! Processes register (the limiter's `connect`) before their callers begin. A caller that
//! arrives during its process's first registration waits for it. A process whose
//! registration failed `Unavailable` (no reply in time, the connection refused or reset) has
//! no limiter until a later one succeeds: it answers each call at once by its fail policy
//! (`Unavailable` when it fails closed, a permit counted nowhere when it fails open), the
//! waiting callers first, as a service answers while its limiter cannot reach the server. A
//! process whose link is slower than its timeout is such a process for the whole run. A
//! refused process (its configuration conflicts) made with `connect` serves nothing: its
//! callers never begin. One made with `start` serves from the beginning (its registration runs
//! in the background, and its callers wait for the one in flight): once refused, it answers
//! every call `Conflict` at once, the waiting callers first, and registers no more.
//!
//! In the trace, a batch's request has one id per attempt (consecutive, from the request's
//! own): each is sent, executed (at the script's one instant, with its part of the reply),
//! lost or late as the batch is, so the oracle judges each attempt on its own.
//!
//! Everything random is drawn from one generator seeded by the scenario, and events are
//! ordered by virtual time, then order of scheduling, so a scenario always gives the same
//! trace.

use core::time::Duration;
use std::collections::HashMap;
use std::rc::Rc;

use fixed_window::{Instant, Origin};
use fixed_window_redis::{
    Config, Conflict, Decision, LocalShare, Protocol, ScriptCall, Unavailable,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::event_heap::EventHeap;
use crate::shared::cluster::nodes::{Cluster, Route};
use crate::shared::engine::{LiveText, Reply};
use crate::shared::planted::{EXPIRE_SCRIPT, SharedPlantedBug};
use crate::shared::record::{EventDigest, SharedOutcome, SharedRecord};
use crate::shared::replication::Replication;
use crate::shared::scenario::{SHARED_NAME, SharedScenario};
use crate::shared::server::{Command, Script, Server};

mod calls;
mod cluster;
mod credentials;
mod digest;
mod faults;
mod hand_back;
mod key_live;
mod lease;
mod limits;
mod local_share;
mod peek;
mod replies;
mod wait;
mod wire;

/// Events a run may process before it is cut short (a run that reaches it is reported).
pub const SHARED_EVENT_BUDGET: u64 = 400_000;

/// The key a scenario with [`SharedScenario::time_key`] reads the server's time from; the
/// simulated server keeps it equal to its clock, as the tests that set it do.
pub const TIME_KEY: &str = "sim:time";

/// A process whose configuration the server refuses tries this many times, then stays down.
const REFUSALS: u32 = 3;

/// An attempt that finds the limit changed is made again at most this many times in a row,
/// as the limiter's attempt loop does.
const CHANGE_RETRIES: u32 = 3;

/// The retries redis-rs's cluster client makes of one call (its default): redirections and
/// `TRYAGAIN`s; the next such answer ends the call with it.
const CLUSTER_RETRIES: u32 = 16;

/// The backoff between failed registrations of a process that cannot reach the server
/// doubles from the timeout until it reaches 1,024 timeouts or this, whichever is longer (one
/// whose link is slower than its timeout keeps failing while traffic lasts); a refused
/// process's stops at 1,024 timeouts.
const MOST_BACKOFF: Duration = Duration::from_secs(60);

/// What a run did, in numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SharedStats {
    /// Calls begun.
    pub calls: u64,
    /// Calls that got a counted permit.
    pub permits: u64,
    /// Calls that got a fail-open permit.
    pub failed_open: u64,
    /// Calls rejected.
    pub rejections: u64,
    /// Of those, rejected from the local memory.
    pub local_rejections: u64,
    /// Calls that failed `Unavailable`.
    pub unavailable: u64,
    /// Sleeps begun.
    pub waits: u64,
    /// Scripts the server ran.
    pub scripts: u64,
    /// Events processed.
    pub events: u64,
    /// Virtual time simulated, in nanoseconds.
    pub simulated_ns: u64,
}

/// A run: its trace and its numbers.
#[derive(Debug, Clone)]
pub struct SharedRun {
    /// The trace, in order.
    pub records: Vec<SharedRecord>,
    /// The numbers.
    pub stats: SharedStats,
    /// Whether the event budget ran out.
    pub out_of_budget: bool,
}

impl SharedRun {
    /// A hash of the whole trace: equal for equal traces (the determinism check).
    pub fn trace_hash(&self) -> u64 {
        use core::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        self.records.hash(&mut hasher);
        hasher.finish()
    }
}

/// Who a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// A caller's own request: only a planted client's second command.
    Call(u32),
    Register(u16),
    /// A process's background read of the configuration.
    Refresh(u16),
    /// A group of the batch in flight on a process's connection (its index in the batch).
    Batch(u16, u16),
    /// A change of the limit (its index in the scenario's).
    Limit(u32),
    /// A process's hand-back call (its index among the run's hand-back calls).
    HandBack(u16, u32),
}

#[derive(Debug, Clone, Copy)]
enum Event {
    Start(u16),
    Arrive(u32),
    AtServer(u32),
    AtClient(u32),
    Timeout(Owner, u32),
    Wake(u32, u32),
    Fault(u32),
    Resume,
    /// A process whose registration failed tries again (if it is still the same incarnation).
    Register(u16, u32),
    /// A process calls `set_limit` (the scenario's change of this index).
    SetLimit(u32),
    /// A fault of the cluster's slots or primaries.
    ClusterFault(u32),
    /// Step `1..=moves` of a migration (the cluster fault of this index): keys move, the last
    /// step changes the slots' owner.
    MigrationStep(u32, u8),
    /// An attempt answered `TRYAGAIN` sends its call again (if it is still this attempt).
    TryAgain(Owner, u32),
    /// The `WAIT` after a request's script call answers: its reply goes back.
    Acknowledged(u32),
    /// Every process is given the server's current password (`set_client`).
    GivePassword,
    /// A process calls `hand_back` (the scenario's hand-back of this index).
    HandBack(u32),
}

/// Where an attempt's round trip is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// A caller's attempt waits for the next batch.
    Queued,
    /// A caller's attempt is in the batch in flight.
    Batched,
    /// `EVALSHA` sent.
    Eval,
    /// `NOSCRIPT` came back; `SCRIPT LOAD` sent.
    Load,
    /// Loaded; `EVALSHA` sent again.
    EvalAgain,
    /// A planted client's second command sent, after this decision.
    Expire,
}

/// An attempt in flight.
#[derive(Debug, Clone)]
struct Attempt {
    number: u32,
    /// The local reading when it began (`now`, which the limiter also passes as `sent`).
    sent: Instant,
    call: Rc<ScriptCall>,
    stage: Stage,
    request: u32,
    /// A planted client's retry of a lost reply has been spent.
    retried: bool,
    /// For [`Stage::Expire`]: the decision of the count.
    decided: Option<(Decision, Instant, u32)>,
    /// On a cluster, the redirections and `TRYAGAIN`s its call followed, which redis-rs
    /// counts as retries (at most [`CLUSTER_RETRIES`]).
    hops: u32,
    /// On a cluster, the primary an `ASK` sent its call to: redis-rs sends it there again
    /// (after `ASKING`) until another redirection, a `TRYAGAIN`'s retry included.
    asked: Option<(u8, u32)>,
}

impl Attempt {
    /// Attempt `number`, begun at the reading `sent`, its `call` waiting in its process's
    /// queue.
    fn queued(number: u32, sent: Instant, call: ScriptCall) -> Attempt {
        Attempt {
            number,
            sent,
            call: Rc::new(call),
            stage: Stage::Queued,
            request: u32::MAX,
            retried: false,
            decided: None,
            hops: 0,
            asked: None,
        }
    }

    /// Whether it waits for a request of its own (not for a batch's).
    fn own_request(&self) -> bool {
        !matches!(self.stage, Stage::Queued | Stage::Batched)
    }
}

#[derive(Debug)]
struct CallState {
    process: u16,
    key: u16,
    deadline: Instant,
    now: Instant,
    /// The virtual time `now` was read at: its attempt's timeout runs from then.
    read_at: u64,
    slept_from: Option<Instant>,
    attempts: u32,
    attempt: Option<Attempt>,
    sleeps: u32,
    sleeping: Option<u32>,
    /// Attempts made again in a row because the limit had changed (at most
    /// [`CHANGE_RETRIES`]), since the call began or last woke.
    changes: u32,
    done: bool,
}

/// A process connects as it starts, before its registration's timeout: its first connection
/// (the default) needs no reconnect.
#[derive(Debug, Default)]
struct Connection {
    /// Bumped at every reset: requests of an older generation are gone.
    generation: u32,
    /// When the last request reached the server and the last reply the client: FIFO.
    last_to_server: u64,
    last_to_client: u64,
    /// The next request first reconnects (one more round trip).
    reconnect: bool,
    /// Waiting for replicas: per primary (0 off a cluster), when the replica acknowledges
    /// the last write of this connection, what its next `WAIT` waits for.
    last_write: Vec<(u8, u64)>,
    /// Waiting for replicas: per primary, until when a `WAIT` blocks the connection (the
    /// server reads nothing more of it meanwhile).
    blocked: Vec<(u8, u64)>,
    /// Bumped at every connection made (a reset's reconnection, a renewal): the server
    /// authenticates each by its first request.
    session: u32,
    /// The server's verdict on the last connection it authenticated: its session, and
    /// whether it accepted it.
    auth: Option<(u32, bool)>,
    /// The refusal of its authentication the connection keeps: every request on it is
    /// answered with it at once, until a renewal.
    kept: Option<&'static str>,
    /// The password its process had when it was made (see [`Process::credentials`]).
    credentials: u32,
    /// The session the server took without authentication while it required a password:
    /// each of its commands is answered `NOAUTH` while the requirement lasts.
    unauthenticated: Option<u32>,
    /// The session whose TLS handshake failed: the server refused it before reading any
    /// command (its refusal is the handshake's, not the user's).
    handshake_failed: Option<u32>,
}

#[derive(Debug)]
struct Process {
    protocol: Protocol,
    /// Its in-process limit while the server cannot decide (active under
    /// [`FailPolicy::Local`](fixed_window_redis::FailPolicy::Local)): the product's own,
    /// driven with the process's readings.
    share: LocalShare,
    up: bool,
    ready: bool,
    /// Bumped at every crash.
    generation: u32,
    connection: Connection,
    /// Callers that arrived before the process was ready.
    pending: Vec<u32>,
    registering: Option<Attempt>,
    /// Its background read of the configuration in flight, if any.
    refreshing: Option<Attempt>,
    /// Callers told of a newer version of the limit than it has read with its live limits:
    /// each attempts again once a read of the live limits is over.
    awaiting_limits: Vec<u32>,
    /// When it last began one, on its clock (at first, when it started): the limiter's
    /// `LIMIT_REFRESH` bookkeeping.
    refreshed: Instant,
    /// The server time its registration saw ([`SharedPlantedBug::OwnOrigin`]).
    own_origin: u64,
    /// A planted client's own memory of full windows ([`SharedPlantedBug::remembers_apart`]):
    /// keys it decides locally until the first local instant, whose windows it takes to open
    /// by the second and at the third.
    remembered_past_end: HashMap<u16, (Instant, Instant, Instant)>,
    /// Under the planted `ShareKeptAfterChange`, the share it holds per key, kept apart from
    /// the protocol's: what is left, its deadline, the version it was leased under.
    kept_shares: HashMap<u16, (u32, Instant, u32)>,
    /// Registrations that failed in a row.
    failed_registrations: u32,
    /// Why its last registration failed `Unavailable`, until one succeeds: meanwhile it
    /// answers each call by its fail policy.
    unregistered: Option<Unavailable>,
    /// The server refused its configuration, and no registration has succeeded since.
    refused: bool,
    /// Made with `start` and refused: the refusal it answers every call with, for good, as the
    /// limiter's registration stays refused.
    conflict: Option<Conflict>,
    /// Callers whose attempts wait for the next batch of their lane, in order.
    queued: Vec<u32>,
    /// The batches in flight: one script call per group of attempts that can share one (of
    /// one lane, made under one version of the limit), for the attempts of `members` of the
    /// same index; `None` once answered. A lane's next batch goes when every group of its
    /// lane is answered; numbered afresh when none is in flight.
    batch: Vec<Option<Attempt>>,
    /// Changes of the limit waiting for the process to have a limiter (registered), in order.
    pending_changes: Vec<u32>,
    /// The callers of each group of the batch in flight, in the order of its attempts.
    members: Vec<Vec<u32>>,
    /// Its connection layer's bookkeeping of refusals.
    renewing: credentials::Renewing,
    /// The password it connects with: the number of rotations of the server's password it
    /// has been given (`set_client`).
    credentials: u32,
}

#[derive(Debug)]
struct Request {
    owner: Owner,
    process: u16,
    connection: u32,
    generation: u32,
    /// What goes on the wire; `None` for the further ids of a batch's request.
    command: Option<Command>,
    /// Its ids in the trace, from its own: one per attempt of a batch, else one.
    ids: u32,
    reply: Option<Reply>,
    /// The connection was refused: the server was down.
    refused: bool,
    /// On a cluster, the primary it goes to.
    route: Route,
    /// On a cluster, the migration under way when a primary answered it.
    migration: Option<u32>,
    /// The replicas its `WAIT` counted, if one followed its script call.
    acknowledged: Option<u32>,
    /// The epoch of the server (or primary) that ran it.
    epoch: u32,
    /// The connection it went on (see [`Connection::session`]).
    session: u32,
    /// The refusal it was answered with: the server's access control, or the refusal its
    /// connection keeps.
    denied: Option<&'static str>,
}

struct Sim<'s> {
    scenario: &'s SharedScenario,
    planted: Option<SharedPlantedBug>,
    queue: EventHeap<Event>,
    /// Reuse the same scenario to get the same draws: losses and jitter.
    rng: ChaCha8Rng,
    /// The waits before a call answered `TRYAGAIN` is sent again, drawn apart so that the
    /// other draws stay as they were.
    waits: ChaCha8Rng,
    server: Server,
    /// The cluster's primaries, if the scenario runs on one.
    cluster: Option<Cluster>,
    paused_until: Option<u64>,
    down_until: u64,
    backlog: Vec<u32>,
    processes: Vec<Process>,
    calls: Vec<CallState>,
    requests: Vec<Request>,
    /// Each change's round trip, while it is under way: the changes of the limiter's limit,
    /// then the live changes of keys' limits (`SharedScenario::live_change`).
    limit_calls: Vec<Option<Attempt>>,
    /// The hand-back calls under way.
    handing: hand_back::Handing,
    /// The live limits' text of the reply being handed to its owner (a `limits` call's).
    live_text: LiveText,
    records: Vec<SharedRecord>,
    stats: SharedStats,
    script: Rc<Script>,
    expire_script: Rc<Script>,
    now: u64,
    /// The number of the next attempt (registrations included), unique in the run, so that
    /// a stale timeout never matches a later attempt.
    next_attempt: u32,
    out_of_budget: bool,
    /// Some process has registered: the configuration is stored.
    stored: bool,
    /// On a cluster, the primary the next request goes to after `ASKING`, instead of the one
    /// its process's map names: an `ASK` followed, answered during the migration of this
    /// index.
    asking: Option<(u8, u32)>,
    /// Processes configured apart, waiting for the configuration to be stored.
    deferred: Vec<u16>,
    /// The replication the processes wait for, if they do.
    replication: Option<Rc<Replication>>,
    /// Until when (virtual time) the limiter's user does not exist.
    user_missing_until: u64,
    /// Until when the limiter's user may not run its commands.
    no_perm_until: u64,
    /// The callers that peek before their call, and where each one's peek is.
    peeks: peek::Peeking,
    /// The server's password for the limiter's user: the number of rotations so far.
    password: u32,
    /// Until when the server requires a password its clients have not given.
    auth_required_until: u64,
    /// Until when every TLS handshake with the server fails.
    handshake_refused_until: u64,
}

/// Runs `scenario` with the real shared limiter, or with the planted bug `bug` in it.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::ScenarioId;
/// use fixed_window_sim::shared::{SharedScenario, check_shared, run_shared};
///
/// let scenario = SharedScenario::generate(&ScenarioId::seed(11));
/// let run = run_shared(&scenario, None);
/// assert!(run.stats.calls > 0);
/// assert!(check_shared(&scenario, &run).is_empty());
/// ```
pub fn run_shared(scenario: &SharedScenario, bug: Option<SharedPlantedBug>) -> SharedRun {
    let mut sim = Sim::new(scenario, bug);
    sim.run();
    sim.end()
}

/// The protocol of process `index` of `scenario`: on a cluster, [`Protocol::for_cluster`].
/// The planted [`SharedPlantedBug::ResolutionIgnored`] leaves its clock's resolution out.
pub(crate) fn protocol(
    scenario: &SharedScenario,
    index: usize,
    planted: Option<SharedPlantedBug>,
) -> Protocol {
    let config = config(scenario, index);
    let config = if planted == Some(SharedPlantedBug::ResolutionIgnored) {
        config.with_clock_resolution(Duration::ZERO)
    } else {
        config
    };
    if scenario.cluster.is_some() {
        Protocol::for_cluster(config)
    } else {
        Protocol::new(config)
    }
}

/// The configuration of process `index` of `scenario`.
pub(crate) fn config(scenario: &SharedScenario, index: usize) -> Config {
    let spec = &scenario.processes[index];
    let (limit, period_us) = scenario.configured(u16::try_from(index).unwrap_or(u16::MAX));
    let config = Config::of(SHARED_NAME, limit, Duration::from_micros(period_us))
        .and_then(|config| config.with_timeout(spec.timeout.max(Duration::from_nanos(1))))
        .and_then(|config| {
            if scenario.time_key {
                config.with_time_key(TIME_KEY)
            } else {
                Ok(config)
            }
        })
        .and_then(|config| match scenario.origin {
            None => Ok(config),
            Some(0) => config.with_origin(Origin::UnixEpoch),
            Some(micros) => config.with_origin(Origin::At(Instant::from_nanos(
                micros.saturating_mul(1_000),
            ))),
        })
        .unwrap_or_else(|error| panic!("scenarios are drawn valid: {error}"));
    let config = match spec.lease {
        Some(lease) => config.with_lease(lease),
        None => config,
    };
    let process = u16::try_from(index).unwrap_or(u16::MAX);
    let config = (0_u16..)
        .zip(&scenario.keys)
        .filter_map(|(key, name)| Some((name, scenario.key_limits.own(process, key)?)))
        .fold(config, |config, (name, limit)| {
            config
                .key_limit(name, limit)
                .unwrap_or_else(|error| panic!("key limits are drawn valid: {error}"))
        });
    // A process whose clock ticks coarsely says so, as a user of such a clock would.
    let config = config
        .with_clock_resolution(spec.clock.resolution())
        .with_max_wait(spec.max_wait)
        .with_fail_policy(spec.fail_policy)
        .with_local_memory(spec.local_memory);
    match &scenario.replication {
        Some(replication) => config.with_wait_for_replicas(replication.replicas),
        None => config,
    }
}

/// Each process of `scenario` as it is before it starts (with the planted `bug`, if any).
fn processes(scenario: &SharedScenario, bug: Option<SharedPlantedBug>) -> Vec<Process> {
    (0..scenario.processes.len())
        .map(|index| Process {
            protocol: protocol(scenario, index, bug),
            share: LocalShare::new(&config(scenario, index)),
            up: false,
            ready: false,
            generation: 0,
            connection: Connection::default(),
            pending: Vec::new(),
            registering: None,
            refreshing: None,
            awaiting_limits: Vec::new(),
            refreshed: Instant::ZERO,
            own_origin: 0,
            remembered_past_end: HashMap::new(),
            kept_shares: HashMap::new(),
            failed_registrations: 0,
            unregistered: None,
            refused: false,
            conflict: None,
            queued: Vec::new(),
            batch: Vec::new(),
            pending_changes: Vec::new(),
            members: Vec::new(),
            renewing: credentials::Renewing::default(),
            credentials: 0,
        })
        .collect()
}

/// The one server: with a replica whose delay is modelled if the processes wait for one.
fn server(replication: Option<&Rc<Replication>>) -> Server {
    replication.map_or_else(Server::default, |replication| {
        Server::replicated(Rc::clone(replication))
    })
}

impl<'s> Sim<'s> {
    fn new(scenario: &'s SharedScenario, bug: Option<SharedPlantedBug>) -> Sim<'s> {
        let processes = processes(scenario, bug);
        let calls = scenario
            .callers
            .iter()
            .map(|caller| CallState {
                process: caller.process,
                key: caller.key,
                deadline: Instant::ZERO,
                now: Instant::ZERO,
                read_at: 0,
                slept_from: None,
                attempts: 0,
                attempt: None,
                sleeps: 0,
                sleeping: None,
                changes: 0,
                done: false,
            })
            .collect();
        let mut queue = EventHeap::new();
        // Processes start, callers arrive and faults strike in the order planned.
        let mut planned: Vec<(u64, Event)> = Vec::new();
        for (index, spec) in (0_u16..).zip(&scenario.processes) {
            planned.push((spec.start, Event::Start(index)));
        }
        for (index, caller) in (0_u32..).zip(&scenario.callers) {
            planned.push((caller.arrival, Event::Arrive(index)));
        }
        for (index, &(t, _)) in (0_u32..).zip(&scenario.faults.planned) {
            planned.push((t, Event::Fault(index)));
        }
        for (index, change) in (0_u32..).zip(&scenario.limit_changes) {
            planned.push((change.at, Event::SetLimit(index)));
        }
        // Live changes of keys' limits take the same events, numbered after the changes of
        // the limiter's limit.
        for (index, change) in (scenario.first_live_change()..).zip(&scenario.key_live) {
            planned.push((change.at, Event::SetLimit(index)));
        }
        for (index, &(t, _)) in (0_u32..).zip(scenario.cluster.iter().flat_map(|c| &c.faults)) {
            planned.push((t, Event::ClusterFault(index)));
        }
        planned.sort_by_key(|&(t, _)| t);
        for (t, event) in planned {
            queue.push(t, event);
        }
        let replication = scenario.replication.clone().map(Rc::new);
        Sim {
            scenario,
            planted: bug,
            queue,
            rng: ChaCha8Rng::seed_from_u64(scenario.id.seed ^ 0x05EE_D50F_4A17),
            waits: ChaCha8Rng::seed_from_u64(scenario.id.seed ^ 0x7247_A1B0_0011),
            server: server(replication.as_ref()),
            cluster: scenario
                .cluster
                .as_ref()
                .map(|spec| Cluster::new(spec, scenario.processes.len(), replication.as_ref())),
            paused_until: None,
            down_until: 0,
            backlog: Vec::new(),
            processes,
            calls,
            requests: Vec::new(),
            limit_calls: vec![None; scenario.limit_changes.len() + scenario.key_live.len()],
            handing: hand_back::Handing::default(),
            live_text: None,
            records: Vec::with_capacity(scenario.callers.len() * 12),
            stats: SharedStats::default(),
            script: Rc::new(Script::new(
                bug.map_or(fixed_window_redis::SCRIPT, SharedPlantedBug::script),
            )),
            expire_script: Rc::new(Script::new(EXPIRE_SCRIPT)),
            now: 0,
            next_attempt: 0,
            out_of_budget: false,
            stored: false,
            asking: None,
            deferred: Vec::new(),
            replication,
            user_missing_until: 0,
            no_perm_until: 0,
            peeks: peek::Peeking::of(scenario),
            password: 0,
            auth_required_until: 0,
            handshake_refused_until: 0,
        }
    }

    /// The step loop: take the earliest event, move virtual time to it, act on it.
    fn run(&mut self) {
        self.plan_hand_backs();
        while let Some((t, event)) = self.queue.pop() {
            if self.stats.events >= SHARED_EVENT_BUDGET {
                self.out_of_budget = true;
                return;
            }
            self.stats.events += 1;
            self.now = t;
            match event {
                Event::Start(process) => self.start(process),
                Event::Arrive(caller) => self.arrive(caller),
                Event::AtServer(request) => self.at_server(request),
                Event::AtClient(request) => self.at_client(request),
                Event::Timeout(owner, number) => self.timeout(owner, number),
                Event::Wake(caller, sleep) => self.wake(caller, sleep),
                Event::Fault(index) => self.fault(index),
                Event::Resume => self.resume(),
                Event::SetLimit(change) => self.set_limit(change),
                Event::ClusterFault(index) => self.cluster_fault(index),
                Event::MigrationStep(index, step) => self.migration_step(index, step),
                Event::TryAgain(owner, number) => self.try_again(owner, number),
                Event::Acknowledged(request) => self.acknowledged(request),
                Event::GivePassword => self.give_password(),
                Event::HandBack(index) => self.hand_back(index),
                Event::Register(process, generation) => {
                    let p = &self.processes[process as usize];
                    if p.up && !p.ready && p.generation == generation {
                        self.register(process);
                    }
                }
            }
        }
    }

    fn end(mut self) -> SharedRun {
        let out_of_budget = self.out_of_budget;
        let t = self.now;
        for caller in 0..self.calls.len() {
            if !self.calls[caller].done && self.scenario_started(caller) {
                let caller = u32::try_from(caller).unwrap_or(u32::MAX);
                self.finish_call(caller, SharedOutcome::Unfinished, EventDigest::None);
            }
        }
        self.records.push(SharedRecord::Keyspace {
            t,
            server_us: self.server.now_us(t),
            keys: match &self.cluster {
                Some(cluster) => cluster.live_keys(t),
                None => self.server.live_keys(t),
            },
        });
        self.stats.simulated_ns = t;
        SharedRun {
            records: self.records,
            stats: self.stats,
            out_of_budget,
        }
    }

    fn scenario_started(&self, caller: usize) -> bool {
        self.calls[caller].attempts > 0 || self.calls[caller].sleeping.is_some()
    }

    /// What `process`'s limiter reads now: its clock, rounded down to its tick.
    fn local(&self, process: u16) -> Instant {
        let clock = self.scenario.processes[process as usize].clock;
        Instant::from_nanos(clock.reading(self.now))
    }

    /// What the timers `process` runs apart from its limiter's clock (its timeouts, its
    /// back-offs: tokio's and the standard library's) read now: its clock to the nanosecond.
    fn exact(&self, process: u16) -> Instant {
        let clock = self.scenario.processes[process as usize].clock;
        Instant::from_nanos(clock.exact(self.now))
    }

    /// The virtual time at which a timer of `process` set now for `wait` fires.
    fn after(&self, process: u16, wait: Duration) -> u64 {
        self.after_from(process, self.now, wait)
    }

    /// The virtual time at which a timer of `process` set at virtual time `from` (now or
    /// earlier) for `wait` fires: `wait` on its clock to the nanosecond, and not before now.
    fn after_from(&self, process: u16, from: u64, wait: Duration) -> u64 {
        let clock = self.scenario.processes[process as usize].clock;
        let target = Instant::from_nanos(clock.exact(from)).saturating_add(wait);
        clock.exact_virtual_at(target.as_nanos(), self.now)
    }

    /// The virtual time at which `process`'s clock reads `target`.
    fn virtual_at(&self, process: u16, target: Instant) -> u64 {
        let clock = self.scenario.processes[process as usize].clock;
        clock.virtual_at(target.as_nanos(), self.now)
    }
}

#[cfg(test)]
mod tests;
