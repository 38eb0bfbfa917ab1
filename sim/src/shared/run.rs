//! The shared-limiter simulation's event loop: client processes, each driving its own
//! [`Protocol`] (the shared limiter's sans-IO client: its local memory of full windows, its
//! wait-or-reject choice, its fail policy), over FIFO connections with delay and jitter, to
//! one simulated [`Server`] running the limiter's script; and the faults.
//!
//! A call goes as the production limiter's `acquire` loop does: `begin` an attempt (decided
//! locally, or a script call to send); queue it on the process's connection, which, as the
//! production client does, has one script call in flight at a time and sends everything
//! queued when it returns (up to [`MAX_BATCH`](fixed_window_redis::MAX_BATCH) attempts) as one call; send `EVALSHA`, and on
//! `NOSCRIPT` `SCRIPT LOAD` then `EVALSHA` again, as redis-rs's script invocation does, the
//! whole round trip bounded by the timeout; `finish` each attempt of the batch with its part
//! of the reply or the cause of its absence; `conclude` it into a result and event, or a
//! sleep through the process's clock followed by another attempt.
//!
//! Processes register (the limiter's `connect`) before their callers begin. A caller that
//! arrives during its process's first registration waits for it. A process whose
//! registration failed `Unavailable` (no reply in time, the connection refused or reset) has
//! no limiter until a later one succeeds: it answers each call at once by its fail policy
//! (`Unavailable` when it fails closed, a permit counted nowhere when it fails open), the
//! waiting callers first, as a service answers while its limiter cannot reach the server. A
//! process whose link is slower than its timeout is such a process for the whole run. A
//! refused process (its configuration conflicts) serves nothing: its callers never begin.
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
use fixed_window::{RateLimiterError, RateLimiterEvent};
use fixed_window_redis::{
    Begin, Conclusion, Config, Decision, Protocol, ScriptCall, ScriptReply, SharedError,
    SharedEvent, Unavailable, UnavailableKind,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::event_heap::EventHeap;
use crate::shared::engine::Reply;
use crate::shared::faults::Fault;
use crate::shared::planted::{EXPIRE_SCRIPT, SharedPlantedBug};
use crate::shared::record::{
    DecisionDigest, EventDigest, FaultRecord, Loss, Purpose, ReplyDigest, SharedOutcome,
    SharedRecord,
};
use crate::shared::scenario::{SHARED_NAME, SharedScenario, Weight};
use crate::shared::server::{Command, Script, Server};

/// Events a run may process before it is cut short (a run that reaches it is reported).
pub const SHARED_EVENT_BUDGET: u64 = 400_000;

/// The key a scenario with [`SharedScenario::time_key`] reads the server's time from; the
/// simulated server keeps it equal to its clock, as the tests that set it do.
pub const TIME_KEY: &str = "sim:time";

/// A process whose configuration the server refuses tries this many times, then stays down.
const REFUSALS: u32 = 3;

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
    /// The batch in flight on a process's connection.
    Batch(u16),
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
}

#[derive(Debug)]
struct CallState {
    process: u16,
    key: u16,
    deadline: Instant,
    now: Instant,
    slept_from: Option<Instant>,
    attempts: u32,
    attempt: Option<Attempt>,
    sleeps: u32,
    sleeping: Option<u32>,
    done: bool,
}

#[derive(Debug)]
struct Connection {
    /// Bumped at every reset: requests of an older generation are gone.
    generation: u32,
    /// When the last request reached the server and the last reply the client: FIFO.
    last_to_server: u64,
    last_to_client: u64,
    /// The next request first reconnects (one more round trip).
    reconnect: bool,
}

#[derive(Debug)]
struct Process {
    protocol: Protocol,
    up: bool,
    ready: bool,
    /// Bumped at every crash.
    generation: u32,
    connection: Connection,
    /// Callers that arrived before the process was ready.
    pending: Vec<u32>,
    registering: Option<Attempt>,
    /// The server time its registration saw ([`SharedPlantedBug::OwnOrigin`]).
    own_origin: u64,
    /// [`SharedPlantedBug::MemoryPastEnd`]: keys known full until these local instants.
    remembered_past_end: HashMap<u16, Instant>,
    /// Registrations that failed in a row.
    failed_registrations: u32,
    /// Why its last registration failed `Unavailable`, until one succeeds: meanwhile it
    /// answers each call by its fail policy.
    unregistered: Option<Unavailable>,
    /// The server refused its configuration, and no registration has succeeded since.
    refused: bool,
    /// Callers whose attempts wait for the next batch, in order.
    queued: Vec<u32>,
    /// The batch in flight: one script call for the attempts of `members`.
    batch: Option<Attempt>,
    /// The callers of the batch in flight, in the order of its attempts.
    members: Vec<u32>,
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
}

struct Sim<'s> {
    scenario: &'s SharedScenario,
    planted: Option<SharedPlantedBug>,
    queue: EventHeap<Event>,
    /// Reuse the same scenario to get the same draws: losses and jitter.
    rng: ChaCha8Rng,
    server: Server,
    paused_until: Option<u64>,
    down_until: u64,
    backlog: Vec<u32>,
    processes: Vec<Process>,
    calls: Vec<CallState>,
    requests: Vec<Request>,
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
    /// Processes configured apart, waiting for the configuration to be stored.
    deferred: Vec<u16>,
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
    config
        .with_max_wait(spec.max_wait)
        .with_fail_policy(spec.fail_policy)
        .with_local_memory(spec.local_memory)
}

impl<'s> Sim<'s> {
    fn new(scenario: &'s SharedScenario, bug: Option<SharedPlantedBug>) -> Sim<'s> {
        let processes = (0..scenario.processes.len())
            .map(|index| Process {
                protocol: Protocol::new(config(scenario, index)),
                up: false,
                ready: false,
                generation: 0,
                connection: Connection {
                    generation: 0,
                    last_to_server: 0,
                    last_to_client: 0,
                    // A process connects as it starts, before its registration's timeout.
                    reconnect: false,
                },
                pending: Vec::new(),
                registering: None,
                own_origin: 0,
                remembered_past_end: HashMap::new(),
                failed_registrations: 0,
                unregistered: None,
                refused: false,
                queued: Vec::new(),
                batch: None,
                members: Vec::new(),
            })
            .collect();
        let calls = scenario
            .callers
            .iter()
            .map(|caller| CallState {
                process: caller.process,
                key: caller.key,
                deadline: Instant::ZERO,
                now: Instant::ZERO,
                slept_from: None,
                attempts: 0,
                attempt: None,
                sleeps: 0,
                sleeping: None,
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
        planned.sort_by_key(|&(t, _)| t);
        for (t, event) in planned {
            queue.push(t, event);
        }
        Sim {
            scenario,
            planted: bug,
            queue,
            rng: ChaCha8Rng::seed_from_u64(scenario.id.seed ^ 0x05EE_D50F_4A17),
            server: Server::default(),
            paused_until: None,
            down_until: 0,
            backlog: Vec::new(),
            processes,
            calls,
            requests: Vec::new(),
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
            deferred: Vec::new(),
        }
    }

    /// The step loop: take the earliest event, move virtual time to it, act on it.
    fn run(&mut self) {
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
            keys: self.server.live_keys(t),
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

    fn local(&self, process: u16) -> Instant {
        let clock = self.scenario.processes[process as usize].clock;
        Instant::from_nanos(clock.reading(self.now))
    }

    /// The virtual time at which `process`'s clock reads `target`.
    fn virtual_at(&self, process: u16, target: Instant) -> u64 {
        let clock = self.scenario.processes[process as usize].clock;
        clock.virtual_at(target.as_nanos(), self.now)
    }

    fn start(&mut self, process: u16) {
        if self.scenario.is_misconfigured(process) && !self.stored {
            // Rolled out after the others: it starts once the shared configuration is stored.
            self.deferred.push(process);
            return;
        }
        let p = &mut self.processes[process as usize];
        if p.up {
            return;
        }
        p.up = true;
        self.register(process);
    }

    fn register(&mut self, process: u16) {
        let now = self.local(process);
        let p = &self.processes[process as usize];
        let call = Rc::new(p.protocol.register_call());
        let number = self.next_attempt;
        self.next_attempt += 1;
        let attempt = self.eval(process, Owner::Register(process), call, number, now);
        self.processes[process as usize].registering = Some(attempt);
        self.arm_timeout(process, Owner::Register(process), number, now);
    }

    fn arrive(&mut self, caller: u32) {
        let spec = self.scenario.callers[caller as usize];
        let process = spec.process;
        if let Weight::Units(n) = spec.weight
            && n > self.scenario.configured(process).0
        {
            // Refused before anything else, as `try_acquire_n` and `acquire_n` refuse it.
            self.start_call(caller);
            self.finish_call(caller, SharedOutcome::TooMany, EventDigest::None);
            return;
        }
        let p = &mut self.processes[process as usize];
        if p.up && p.ready {
            self.begin_call(caller);
        } else if let Some(cause) = p.unregistered.clone().filter(|_| p.up) {
            self.answer_unregistered(caller, cause);
        } else {
            p.pending.push(caller);
        }
    }

    fn begin_call(&mut self, caller: u32) {
        self.start_call(caller);
        self.attempt(caller);
    }

    /// Answers `caller`, whose process has no limiter (its registration failed for `cause`),
    /// by the process's fail policy, without a round trip.
    fn answer_unregistered(&mut self, caller: u32, cause: Unavailable) {
        self.start_call(caller);
        let call = &mut self.calls[caller as usize];
        call.attempts += 1;
        let (process, key, now, deadline) = (call.process, call.key, call.now, call.deadline);
        let name = &self.scenario.keys[key as usize];
        let decision = if self.planted == Some(SharedPlantedBug::OpenBeforeRegistration) {
            Decision::FailedOpen(cause)
        } else {
            let protocol = &self.processes[process as usize].protocol;
            protocol.finish(name, now, now, deadline, Err(cause))
        };
        self.decided(caller, now, None, &decision);
        self.conclude(caller, &decision, now);
    }

    /// Records `caller`'s start at its process's reading, which fixes its deadline.
    fn start_call(&mut self, caller: u32) {
        let spec = self.scenario.callers[caller as usize];
        let now = self.local(spec.process);
        let max_wait = if spec.waits {
            self.scenario.processes[spec.process as usize].max_wait
        } else {
            Duration::ZERO
        };
        let deadline = now.saturating_add(max_wait);
        self.stats.calls += 1;
        self.records.push(SharedRecord::Start {
            t: self.now,
            caller,
            local: now.as_nanos(),
            deadline: deadline.as_nanos(),
        });
        let call = &mut self.calls[caller as usize];
        call.deadline = deadline;
        call.now = now;
    }

    /// One attempt of a call at its `now`.
    fn attempt(&mut self, caller: u32) {
        let number = self.next_attempt;
        self.next_attempt += 1;
        let call = &mut self.calls[caller as usize];
        call.attempts += 1;
        let (process, key, now, deadline) = (call.process, call.key, call.now, call.deadline);
        if self.planted == Some(SharedPlantedBug::MemoryPastEnd)
            && let Some(&until) = self.processes[process as usize]
                .remembered_past_end
                .get(&key)
            && now < until
        {
            let decision = Decision::Rejected {
                retry_after: until.saturating_duration_since(now),
                local: true,
            };
            self.decided(caller, now, None, &decision);
            self.conclude(caller, &decision, now);
            return;
        }
        let name = &self.scenario.keys[key as usize];
        let protocol = &self.processes[process as usize].protocol;
        let begun = match self.scenario.callers[caller as usize].weight.permits() {
            Some(n) => protocol.begin_n(name, n, now, deadline),
            None => protocol.begin_drain(name, now),
        };
        match begun {
            Ok(Begin::Decided(decision)) => {
                self.decided(caller, now, None, &decision);
                self.conclude(caller, &decision, now);
            }
            Ok(Begin::Call(call)) => {
                self.calls[caller as usize].attempt = Some(Attempt {
                    number,
                    sent: now,
                    call: Rc::new(call),
                    stage: Stage::Queued,
                    request: u32::MAX,
                    retried: false,
                    decided: None,
                });
                self.processes[process as usize].queued.push(caller);
                // The caller's own bound, as the production caller's: from its attempt's
                // start, whether it waits in the queue or in the batch.
                self.arm_timeout(process, Owner::Call(caller), number, now);
                self.pump(process);
            }
            Err(_) => {
                self.finish_call(caller, SharedOutcome::OtherError, EventDigest::None);
            }
        }
    }

    /// Sends the next batch on `process`'s connection if none is in flight: every attempt
    /// queued (up to [`MAX_BATCH`](fixed_window_redis::MAX_BATCH)) in one script call, as the
    /// production client does.
    fn pump(&mut self, process: u16) {
        let p = &mut self.processes[process as usize];
        if p.batch.is_some() || !p.up || !p.ready || p.queued.is_empty() {
            return;
        }
        let queued = std::mem::take(&mut p.queued);
        let mut batch: Option<ScriptCall> = None;
        let mut members = Vec::new();
        let mut rest = Vec::new();
        for caller in queued {
            let Some(attempt) = self.calls[caller as usize]
                .attempt
                .as_mut()
                .filter(|a| a.stage == Stage::Queued)
            else {
                // Ended meanwhile: nothing to send.
                continue;
            };
            let call = (*attempt.call).clone();
            let joined = match &mut batch {
                None => {
                    batch = Some(call);
                    true
                }
                Some(batch) => batch.join(call).is_ok(),
            };
            if joined {
                attempt.stage = Stage::Batched;
                members.push(caller);
            } else {
                rest.push(caller);
            }
        }
        let p = &mut self.processes[process as usize];
        p.queued = rest;
        let Some(batch) = batch else {
            return;
        };
        p.members = members;
        let number = self.next_attempt;
        self.next_attempt += 1;
        let now = self.local(process);
        let attempt = self.eval(process, Owner::Batch(process), Rc::new(batch), number, now);
        self.number_members(process, attempt.request);
        self.processes[process as usize].batch = Some(attempt);
        self.arm_timeout(process, Owner::Batch(process), number, now);
    }

    /// Gives each waiting member of `process`'s batch its id in the batch's `request`.
    fn number_members(&mut self, process: u16, request: u32) {
        for (id, &caller) in (request..).zip(&self.processes[process as usize].members) {
            if let Some(attempt) = self.calls[caller as usize]
                .attempt
                .as_mut()
                .filter(|a| a.stage == Stage::Batched)
            {
                attempt.request = id;
            }
        }
    }

    /// Whether `caller` still waits for its part of its batch's `id`.
    fn member_waits(&self, caller: u32, id: u32) -> bool {
        self.calls[caller as usize]
            .attempt
            .as_ref()
            .is_some_and(|a| a.stage == Stage::Batched && a.request == id)
    }

    /// Sends attempt `number`'s script call for `owner` (a process registering, or a batch
    /// of attempts) and returns the attempt, waiting for its reply.
    fn eval(
        &mut self,
        process: u16,
        owner: Owner,
        call: Rc<ScriptCall>,
        number: u32,
        now: Instant,
    ) -> Attempt {
        let registering = matches!(owner, Owner::Register(_));
        let extra = self.extra_args(process, now, registering);
        let purpose = if registering {
            Purpose::Register
        } else {
            Purpose::Acquire
        };
        let command = Command::EvalSha {
            script: Rc::clone(&self.script),
            call: Rc::clone(&call),
            extra,
        };
        let request = self.send(process, owner, command, purpose);
        Attempt {
            number,
            sent: now,
            call,
            stage: Stage::Eval,
            request,
            retried: false,
            decided: None,
        }
    }

    fn extra_args(&self, process: u16, now: Instant, registering: bool) -> Vec<String> {
        match self.planted {
            Some(SharedPlantedBug::ClientClock) => vec![(now.as_nanos() / 1_000).to_string()],
            Some(SharedPlantedBug::OwnOrigin) if !registering => {
                vec![self.processes[process as usize].own_origin.to_string()]
            }
            _ => Vec::new(),
        }
    }

    fn arm_timeout(&mut self, process: u16, owner: Owner, number: u32, sent: Instant) {
        let timeout = self.processes[process as usize].protocol.config().timeout();
        let at = self.virtual_at(process, sent.saturating_add(timeout));
        self.queue.push(at, Event::Timeout(owner, number));
    }

    /// Sends `command` on `process`'s connection; its request id (the first of its ids: a
    /// batch's script call has one per attempt).
    fn send(&mut self, process: u16, owner: Owner, command: Command, purpose: Purpose) -> u32 {
        let request = u32::try_from(self.requests.len()).unwrap_or(u32::MAX);
        let link = self.scenario.processes[process as usize].link;
        let callers: Vec<Option<u32>> = match (owner, purpose) {
            (Owner::Batch(_), Purpose::Acquire) => self.processes[process as usize]
                .members
                .iter()
                .copied()
                .map(Some)
                .collect(),
            (Owner::Call(caller), _) => vec![Some(caller)],
            _ => vec![None],
        };
        let ids = u32::try_from(callers.len()).unwrap_or(1);
        let p = &mut self.processes[process as usize];
        let (connection, generation) = (p.connection.generation, p.generation);
        let mut command = Some(command);
        for (id, caller) in (request..).zip(callers) {
            self.requests.push(Request {
                owner,
                process,
                connection,
                generation,
                command: command.take(),
                ids,
                reply: None,
                refused: false,
            });
            self.records.push(SharedRecord::Sent {
                t: self.now,
                request: id,
                caller,
                process,
                purpose,
            });
        }
        let mut delay = link.delay_ns + self.rng.random_range(0..=link.jitter_ns);
        if std::mem::take(&mut p.connection.reconnect) {
            delay += 2 * link.delay_ns;
        }
        if self.lost(self.scenario.faults.request_loss_ppm) {
            self.lose(request, Loss::Request);
            return request;
        }
        let p = &mut self.processes[process as usize];
        let arrival = (self.now + delay).max(p.connection.last_to_server);
        p.connection.last_to_server = arrival;
        self.queue.push(arrival, Event::AtServer(request));
        request
    }

    /// The ids of `request` in the trace.
    fn ids(&self, request: u32) -> core::ops::Range<u32> {
        request..request + self.requests[request as usize].ids
    }

    /// Records every id of `request` lost.
    fn lose(&mut self, request: u32, loss: Loss) {
        let t = self.now;
        for id in self.ids(request) {
            self.records.push(SharedRecord::Lost {
                t,
                request: id,
                loss,
            });
        }
    }

    fn lost(&mut self, ppm: u32) -> bool {
        ppm > 0 && self.rng.random_range(0..1_000_000) < ppm
    }

    fn at_server(&mut self, request: u32) {
        let r = &self.requests[request as usize];
        let p = &self.processes[r.process as usize];
        if r.connection != p.connection.generation {
            // Its connection was reset while it was on its way.
            self.lose(request, Loss::Reset);
            return;
        }
        if self.now < self.down_until {
            self.lose(request, Loss::Down);
            self.requests[request as usize].refused = true;
            self.reply(request);
            return;
        }
        if self.paused_until.is_some() {
            for id in self.ids(request) {
                self.records.push(SharedRecord::Held {
                    t: self.now,
                    request: id,
                });
            }
            self.backlog.push(request);
            return;
        }
        self.execute(request);
    }

    fn execute(&mut self, request: u32) {
        let t = self.now;
        let r = &self.requests[request as usize];
        let Some(command) = &r.command else {
            return;
        };
        let (reply, effects) = self.server.execute(request, command, t);
        if effects.ran_script {
            self.stats.scripts += 1;
        }
        for expired in effects.expired {
            self.records.push(SharedRecord::Expired {
                t,
                key: expired.key,
                expires_at_ms: expired.expires_at_ms,
            });
        }
        if let Some(what) = effects.refused {
            self.records.push(SharedRecord::Refused {
                t,
                request,
                what: what.into(),
            });
        }
        // Each attempt of a batch with its own part of the reply, in order: the oracle counts
        // them one after the other at the script's one instant.
        let values = reply.integers().ok();
        for (index, id) in (0_usize..).zip(self.ids(request)) {
            let reply = match (&values, command) {
                (Some(values), Command::EvalSha { call, .. }) => {
                    digest_values(call.reply_for(values, index))
                }
                _ => digest(&reply),
            };
            self.records.push(SharedRecord::Executed {
                t,
                request: id,
                server_us: effects.server_us,
                ran_script: effects.ran_script,
                reply,
            });
        }
        self.requests[request as usize].reply = Some(reply);
        if self.lost(self.scenario.faults.reply_loss_ppm) {
            self.lose(request, Loss::Reply);
            return;
        }
        self.reply(request);
    }

    /// Sends the reply (or the refusal) of `request` back on its connection.
    fn reply(&mut self, request: u32) {
        let process = self.requests[request as usize].process;
        let link = self.scenario.processes[process as usize].link;
        let delay = link.delay_ns + self.rng.random_range(0..=link.jitter_ns);
        let connection = &mut self.processes[process as usize].connection;
        let arrival = (self.now + delay).max(connection.last_to_client);
        connection.last_to_client = arrival;
        self.queue.push(arrival, Event::AtClient(request));
    }

    fn resume(&mut self) {
        if self.paused_until.is_some_and(|until| until <= self.now) {
            self.paused_until = None;
            for request in std::mem::take(&mut self.backlog) {
                // A request whose connection was reset meanwhile went with it.
                let r = &self.requests[request as usize];
                if r.connection == self.processes[r.process as usize].connection.generation {
                    self.execute(request);
                } else {
                    self.lose(request, Loss::Reset);
                }
            }
        }
    }

    /// The attempt `request` belongs to, if it is still waiting for it.
    fn waiting_attempt(&mut self, request: u32) -> Option<&mut Attempt> {
        let r = &self.requests[request as usize];
        let attempt = match r.owner {
            Owner::Call(caller) => self.calls[caller as usize].attempt.as_mut()?,
            Owner::Register(process) => self.processes[process as usize].registering.as_mut()?,
            Owner::Batch(process) => self.processes[process as usize].batch.as_mut()?,
        };
        (attempt.request == request).then_some(attempt)
    }

    fn at_client(&mut self, request: u32) {
        let r = &self.requests[request as usize];
        let p = &self.processes[r.process as usize];
        if r.connection != p.connection.generation || r.generation != p.generation {
            // Reset or crashed meanwhile: the reply has nowhere to go.
            let loss = if r.generation == p.generation {
                Loss::Reset
            } else {
                Loss::Crash
            };
            self.lose(request, loss);
            return;
        }
        if self.waiting_attempt(request).is_none() {
            for id in self.ids(request) {
                self.records.push(SharedRecord::Late {
                    t: self.now,
                    request: id,
                });
            }
            return;
        }
        let r = &self.requests[request as usize];
        let owner = r.owner;
        if r.refused {
            self.failed(owner, UnavailableKind::Connection, "connection refused");
            return;
        }
        let reply = self.requests[request as usize]
            .reply
            .take()
            .unwrap_or(Reply::Nil);
        let Some(attempt) = self.waiting_attempt(request) else {
            return;
        };
        let stage = attempt.stage;
        match (stage, &reply) {
            (Stage::Eval, Reply::Error(message)) if message.starts_with("NOSCRIPT") => {
                self.resend(owner, Stage::Load);
            }
            (Stage::Load, Reply::Bulk(_)) => self.resend(owner, Stage::EvalAgain),
            (Stage::Expire, _) => self.expired_done(owner),
            // A caller's queued or batched attempt has no request of its own.
            (Stage::Queued | Stage::Batched, _) => {}
            (_, Reply::Error(message)) => {
                let message = message.to_string();
                self.failed(owner, UnavailableKind::Server, &message);
            }
            (Stage::Load, _) => {
                self.failed(owner, UnavailableKind::Reply, "SCRIPT LOAD answered no SHA");
            }
            (Stage::Eval | Stage::EvalAgain, reply) => match reply.integers() {
                Ok(values) => self.replied(owner, &Ok(values), Some(request)),
                Err(other) => {
                    let message = format!("the script answered {other:?}");
                    self.failed(owner, UnavailableKind::Reply, &message);
                }
            },
        }
    }

    /// Sends the next command of the owner's attempt.
    fn resend(&mut self, owner: Owner, stage: Stage) {
        let (process, purpose) = match owner {
            Owner::Call(caller) => (self.calls[caller as usize].process, Purpose::Acquire),
            Owner::Register(process) => (process, Purpose::Register),
            Owner::Batch(process) => (process, Purpose::Acquire),
        };
        let Some(attempt) = self.attempt_of(owner) else {
            return;
        };
        let call = Rc::clone(&attempt.call);
        let now = attempt.sent;
        let (command, purpose) = if stage == Stage::Load {
            (Command::ScriptLoad(Rc::clone(&self.script)), Purpose::Load)
        } else {
            let extra = self.extra_args(process, now, matches!(owner, Owner::Register(_)));
            (
                Command::EvalSha {
                    script: Rc::clone(&self.script),
                    call,
                    extra,
                },
                purpose,
            )
        };
        let request = self.send(process, owner, command, purpose);
        if let Some(attempt) = self.attempt_of(owner) {
            attempt.request = request;
            attempt.stage = stage;
        }
        if let (Owner::Batch(process), Stage::EvalAgain) = (owner, stage) {
            self.number_members(process, request);
        }
    }

    fn attempt_of(&mut self, owner: Owner) -> Option<&mut Attempt> {
        match owner {
            Owner::Call(caller) => self.calls[caller as usize].attempt.as_mut(),
            Owner::Register(process) => self.processes[process as usize].registering.as_mut(),
            Owner::Batch(process) => self.processes[process as usize].batch.as_mut(),
        }
    }

    fn timeout(&mut self, owner: Owner, number: u32) {
        let current = self.attempt_of(owner).is_some_and(|a| a.number == number);
        if !current {
            return;
        }
        let callers: Vec<Option<u32>> = match owner {
            Owner::Call(caller) => vec![Some(caller)],
            Owner::Register(_) => vec![None],
            Owner::Batch(process) => self.processes[process as usize]
                .members
                .iter()
                .copied()
                .map(Some)
                .collect(),
        };
        for caller in callers {
            self.records.push(SharedRecord::TimedOut {
                t: self.now,
                caller,
            });
        }
        self.failed(
            owner,
            UnavailableKind::Timeout,
            "no reply within the timeout",
        );
    }

    fn failed(&mut self, owner: Owner, kind: UnavailableKind, message: &str) {
        if let Owner::Batch(process) = owner {
            // Whatever ends the batch's call without its reply is each waiting attempt's.
            let first = self.attempt_of(owner).map_or(u32::MAX, |a| a.request);
            let members = self.end_batch(process);
            for (caller, id) in members.into_iter().zip(first..) {
                if self.member_waits(caller, id) {
                    self.failed(Owner::Call(caller), kind, message);
                }
            }
            self.pump(process);
            return;
        }
        let in_expire = self
            .attempt_of(owner)
            .is_some_and(|a| a.stage == Stage::Expire);
        if in_expire {
            // The planted second command failed; the count's decision stands.
            self.expired_done(owner);
            return;
        }
        let retry = self.planted == Some(SharedPlantedBug::RetryLostReply)
            && kind.may_have_counted()
            && matches!(owner, Owner::Call(_))
            && self.attempt_of(owner).is_some_and(|a| !a.retried);
        if retry && let Owner::Call(caller) = owner {
            // Sent again in the next batch, under a new timeout.
            let process = self.calls[caller as usize].process;
            let number = self.next_attempt;
            self.next_attempt += 1;
            if let Some(attempt) = self.attempt_of(owner) {
                attempt.retried = true;
                attempt.stage = Stage::Queued;
                attempt.number = number;
            }
            self.processes[process as usize].queued.push(caller);
            let now = self.local(process);
            self.arm_timeout(process, owner, number, now);
            self.pump(process);
            return;
        }
        self.replied(owner, &Err(Unavailable::new(kind, message)), None);
    }

    /// An attempt's round trip is over: `reply` is the script's, or why there is none.
    fn replied(
        &mut self,
        owner: Owner,
        reply: &Result<Vec<i64>, Unavailable>,
        request: Option<u32>,
    ) {
        match owner {
            Owner::Register(process) => self.registered(process, reply),
            Owner::Batch(process) => {
                let call = self.processes[process as usize]
                    .batch
                    .as_ref()
                    .map(|batch| Rc::clone(&batch.call));
                let members = self.end_batch(process);
                let first = request.unwrap_or(u32::MAX);
                for (index, (caller, id)) in (0_usize..).zip(members.into_iter().zip(first..)) {
                    if !self.member_waits(caller, id) {
                        // Its caller gave up on it (timed out): the part comes too late.
                        if request.is_some() {
                            self.records.push(SharedRecord::Late {
                                t: self.now,
                                request: id,
                            });
                        }
                        continue;
                    }
                    let part = match (reply, &call) {
                        (Ok(values), Some(call)) => Ok(call.reply_for(values, index).to_vec()),
                        (Ok(values), None) => Ok(values.clone()),
                        (Err(cause), _) => Err(cause.clone()),
                    };
                    self.replied(Owner::Call(caller), &part, request.map(|_| id));
                }
                self.pump(process);
            }
            Owner::Call(caller) => {
                let call = &self.calls[caller as usize];
                let (process, key, deadline) = (call.process, call.key, call.deadline);
                let Some(attempt) = self.calls[caller as usize].attempt.clone() else {
                    return;
                };
                let sent = self.calls[caller as usize].now;
                let received = self.local(process);
                let name = &self.scenario.keys[key as usize];
                let protocol = &self.processes[process as usize].protocol;
                // A drain's reply is a permit leaving none, read as one permit's.
                let n = self.scenario.callers[caller as usize]
                    .weight
                    .permits()
                    .unwrap_or(1);
                let times = (sent, received, deadline);
                let mut decision = match &reply {
                    Ok(values) => protocol.finish_n(name, n, times, Ok(values)),
                    Err(cause) => protocol.finish_n(name, n, times, Err(cause.clone())),
                };
                if self.planted == Some(SharedPlantedBug::ConflictIgnored)
                    && let Decision::Conflict(_) = decision
                {
                    // The planted client reads a refusal of its configuration as an
                    // outage, which its fail policy may turn into a permit.
                    let outage = Unavailable::new(UnavailableKind::Server, "conflict");
                    decision = protocol.finish(name, sent, received, deadline, Err(outage));
                }
                if self.planted == Some(SharedPlantedBug::MemoryPastEnd)
                    && let Ok(values) = &reply
                    && let Some(ScriptReply::Full { retry_after, .. }) = ScriptReply::parse(values)
                {
                    let late = Duration::from_micros(retry_after + self.scenario.period_us / 2);
                    self.processes[process as usize]
                        .remembered_past_end
                        .insert(key, received.saturating_add(late));
                }
                if self.planted == Some(SharedPlantedBug::TwoCommands)
                    && let (Decision::Permitted { .. }, Ok(values)) = (&decision, &reply)
                    && let Some(ScriptReply::Permitted {
                        now, window_start, ..
                    }) = ScriptReply::parse(values)
                {
                    let end = window_start + self.scenario.period_us;
                    let ttl = end.saturating_sub(now).div_ceil(1_000) + 1_000;
                    let request_id = self.send(
                        process,
                        owner,
                        Command::EvalSha {
                            script: Rc::clone(&self.expire_script),
                            call: Rc::clone(&attempt.call),
                            extra: vec![ttl.to_string()],
                        },
                        Purpose::Expire,
                    );
                    let number = self.next_attempt;
                    self.next_attempt += 1;
                    if let Some(a) = self.calls[caller as usize].attempt.as_mut() {
                        a.stage = Stage::Expire;
                        a.request = request_id;
                        a.number = number;
                        a.decided = Some((decision, received, request.unwrap_or(u32::MAX)));
                    }
                    let now = self.local(process);
                    self.arm_timeout(process, owner, number, now);
                    return;
                }
                self.calls[caller as usize].attempt = None;
                self.decided(caller, received, request, &decision);
                self.conclude(caller, &decision, received);
            }
        }
    }

    /// The planted second command is done (or failed): the count's decision concludes.
    fn expired_done(&mut self, owner: Owner) {
        let Owner::Call(caller) = owner else {
            return;
        };
        let Some(attempt) = self.calls[caller as usize].attempt.take() else {
            return;
        };
        let Some((decision, received, request)) = attempt.decided else {
            return;
        };
        self.decided(caller, received, Some(request), &decision);
        self.conclude(caller, &decision, received);
    }

    fn registered(&mut self, process: u16, reply: &Result<Vec<i64>, Unavailable>) {
        let p = &mut self.processes[process as usize];
        let origin = p
            .protocol
            .registered(reply.as_deref().map_err(Clone::clone));
        if let Ok(values) = reply
            && let Some(ScriptReply::Registered { now, .. }) = ScriptReply::parse(values)
        {
            p.own_origin = now;
        }
        let origin = match origin {
            Err(SharedError::Conflict(conflict)) => {
                self.records.push(SharedRecord::Conflicted {
                    t: self.now,
                    process,
                });
                let stored =
                    reply
                        .as_deref()
                        .ok()
                        .and_then(ScriptReply::parse)
                        .and_then(|r| match r {
                            ScriptReply::Conflict { origin, .. } => Some(origin),
                            _ => None,
                        });
                match (self.planted, stored) {
                    // The planted client takes the stored origin and carries on.
                    (Some(SharedPlantedBug::ConflictIgnored), Some(origin)) => Ok(origin),
                    _ => Err(SharedError::Conflict(conflict)),
                }
            }
            other => other,
        };
        if origin.is_ok() && !self.stored {
            self.stored = true;
            for deferred in std::mem::take(&mut self.deferred) {
                self.queue.push(self.now, Event::Start(deferred));
            }
        }
        let p = &mut self.processes[process as usize];
        if let Ok(origin_us) = origin {
            p.ready = true;
            p.failed_registrations = 0;
            p.unregistered = None;
            p.refused = false;
            p.registering = None;
            self.records.push(SharedRecord::Registered {
                t: self.now,
                process,
                origin_us,
            });
            for caller in std::mem::take(&mut self.processes[process as usize].pending) {
                self.begin_call(caller);
            }
        } else {
            // As a deployment restarts a replica whose connect failed: try again, after
            // the timeout (a server that is down refuses at once).
            let refused = matches!(origin, Err(SharedError::Conflict(_)));
            let p = &mut self.processes[process as usize];
            p.registering = None;
            p.failed_registrations += 1;
            p.refused |= refused;
            if let Err(SharedError::Unavailable { cause, .. }) = origin
                && !p.refused
            {
                // No limiter until a registration succeeds: the calls waiting for this one,
                // and those to come, are answered by the fail policy.
                p.unregistered = Some(cause.clone());
                let waiting = std::mem::take(&mut p.pending);
                self.records.push(SharedRecord::RegistrationFailed {
                    t: self.now,
                    process,
                });
                for caller in waiting {
                    self.answer_unregistered(caller, cause.clone());
                }
            }
            let p = &mut self.processes[process as usize];
            let last_arrival = self.scenario.callers.last().map_or(0, |c| c.arrival);
            let enough = !refused || p.failed_registrations >= REFUSALS;
            if enough && self.now > last_arrival {
                // The deployment restarts a failing process while there is traffic (a restart
                // of the server may let a refused one store its own configuration), then
                // gives up, and the process stays down.
                return;
            }
            let generation = p.generation;
            // Backing off, as a supervisor restarting a failing replica does: a refused one
            // often enough to catch a loss of the stored configuration, one that cannot reach
            // the server up to a minute apart.
            let timeout = p.protocol.config().timeout();
            let most = if p.refused {
                timeout.saturating_mul(1_024)
            } else {
                timeout.saturating_mul(1_024).max(MOST_BACKOFF)
            };
            let backoff = timeout
                .saturating_mul(1 << p.failed_registrations.min(31))
                .min(most);
            let at = self.virtual_at(process, self.local(process).saturating_add(backoff));
            self.queue.push(at, Event::Register(process, generation));
        }
    }

    /// The batch in flight on `process`'s connection is over: its members, in order.
    fn end_batch(&mut self, process: u16) -> Vec<u32> {
        let p = &mut self.processes[process as usize];
        p.batch = None;
        std::mem::take(&mut p.members)
    }

    fn decided(&mut self, caller: u32, at: Instant, request: Option<u32>, decision: &Decision) {
        if let Decision::Rejected { local: true, .. } = decision {
            self.stats.local_rejections += 1;
        }
        let call = &self.calls[caller as usize];
        self.records.push(SharedRecord::Decided {
            t: self.now,
            caller,
            local: call.now.as_nanos(),
            at: at.as_nanos(),
            request,
            decision: decision_digest(decision),
        });
    }

    /// What the call does after `decision`, known at `at`: end, or sleep.
    fn conclude(&mut self, caller: u32, decision: &Decision, at: Instant) {
        if self.scenario.callers[caller as usize].weight == Weight::Rest {
            // A drain ends with the window full, or with the error that kept it from it; it
            // tells no listener.
            let outcome = match decision {
                Decision::Permitted { .. } | Decision::Rejected { .. } | Decision::Wait { .. } => {
                    SharedOutcome::Drained
                }
                // The simulated processes never change the limit: no attempt finds it changed.
                Decision::Unavailable(_)
                | Decision::FailedOpen(_)
                | Decision::LimitChanged { .. } => SharedOutcome::Unavailable,
                Decision::Conflict(_) => SharedOutcome::Conflict,
            };
            self.finish_call(caller, outcome, EventDigest::None);
            return;
        }
        let call = &self.calls[caller as usize];
        let process = call.process;
        let stalled = call.slept_from.is_some_and(|before| call.now <= before);
        let protocol = &self.processes[process as usize].protocol;
        match protocol.conclude(decision, at, !stalled) {
            Conclusion::Sleep(pause) => {
                let until = at.saturating_add(pause);
                self.stats.waits += 1;
                self.records.push(SharedRecord::Sleep {
                    t: self.now,
                    caller,
                    local: at.as_nanos(),
                    until: until.as_nanos(),
                });
                let wake = self.virtual_at(process, until);
                let call = &mut self.calls[caller as usize];
                call.sleeps += 1;
                call.sleeping = Some(call.sleeps);
                let sleep = call.sleeps;
                self.queue.push(wake, Event::Wake(caller, sleep));
            }
            Conclusion::Done { result, event } => {
                let config = protocol.config();
                let outcome = outcome(&result, config);
                let event = event_digest(event.as_ref());
                self.finish_call(caller, outcome, event);
            }
        }
    }

    fn wake(&mut self, caller: u32, sleep: u32) {
        let call = &mut self.calls[caller as usize];
        if call.done || call.sleeping != Some(sleep) {
            return;
        }
        call.sleeping = None;
        let process = call.process;
        let now = self.local(process);
        let call = &mut self.calls[caller as usize];
        call.slept_from = Some(call.now);
        call.now = now;
        self.attempt(caller);
    }

    fn finish_call(&mut self, caller: u32, outcome: SharedOutcome, event: EventDigest) {
        let call = &mut self.calls[caller as usize];
        if call.done {
            return;
        }
        call.done = true;
        call.attempt = None;
        call.sleeping = None;
        let process = call.process;
        match outcome {
            SharedOutcome::Permitted { remaining: Some(_) } => self.stats.permits += 1,
            SharedOutcome::Permitted { remaining: None } => self.stats.failed_open += 1,
            SharedOutcome::Rejected { .. } => self.stats.rejections += 1,
            SharedOutcome::Unavailable => self.stats.unavailable += 1,
            _ => {}
        }
        let local = self.local(process).as_nanos();
        self.records.push(SharedRecord::Finish {
            t: self.now,
            caller,
            local,
            outcome,
            event,
        });
    }

    fn fault(&mut self, index: u32) {
        let (_, fault) = self.scenario.faults.planned[index as usize];
        let t = self.now;
        let record = match fault {
            Fault::Reset { process } => {
                self.reset(process);
                FaultRecord::Reset { process }
            }
            Fault::Pause { for_ns } => {
                let until = t + for_ns;
                self.paused_until = Some(self.paused_until.map_or(until, |u| u.max(until)));
                self.queue.push(until, Event::Resume);
                FaultRecord::Pause { until }
            }
            Fault::Restart { for_ns } => {
                self.server.restart();
                self.down_until = t + for_ns;
                self.paused_until = None;
                for request in std::mem::take(&mut self.backlog) {
                    self.records.push(SharedRecord::Lost {
                        t,
                        request,
                        loss: Loss::Down,
                    });
                }
                for process in 0..self.processes.len() {
                    self.reset(u16::try_from(process).unwrap_or(0));
                }
                FaultRecord::Restart { until: t + for_ns }
            }
            Fault::Failover { lag, keeps_scripts } => {
                let undone = self.server.failover(usize::from(lag), keeps_scripts);
                for process in 0..self.processes.len() {
                    self.reset(u16::try_from(process).unwrap_or(0));
                }
                let undone = undone
                    .into_iter()
                    .flat_map(|w| self.undone_ids(w.request, w.key))
                    .collect();
                FaultRecord::Failover {
                    lag,
                    keeps_scripts,
                    undone,
                }
            }
            Fault::Flush => {
                self.server.flush_scripts();
                FaultRecord::Flush
            }
            Fault::ClockStep { delta_ns } => {
                self.server.step_clock(delta_ns);
                FaultRecord::ClockStep { delta_ns }
            }
            Fault::Crash { process, for_ns } => {
                self.crash(process, for_ns);
                FaultRecord::Crash {
                    process,
                    until: t + for_ns,
                }
            }
        };
        self.records.push(SharedRecord::Fault { t, fault: record });
    }

    /// The trace ids whose permits a write undone by a failover took back: a batch's write
    /// of a counter holds the permits of each of its attempts on that key, given newest
    /// first as the writes are (so the last names the key's state before the batch).
    fn undone_ids(&self, request: u32, key: Box<str>) -> Vec<(u32, Box<str>)> {
        let r = &self.requests[request as usize];
        let Some(Command::EvalSha { call, .. }) = &r.command else {
            return vec![(request, key)];
        };
        let mut members: Vec<(u32, Box<str>)> = (request..request + r.ids)
            .zip(0..)
            .filter(|&(_, index)| call.counter_key(index) == Some(&*key))
            .map(|(id, _)| (id, key.clone()))
            .collect();
        members.reverse();
        if members.is_empty() {
            vec![(request, key)]
        } else {
            members
        }
    }

    /// Resets `process`'s connection: what was on it is lost, its attempts fail.
    fn reset(&mut self, process: u16) {
        let p = &mut self.processes[process as usize];
        p.connection.generation += 1;
        p.connection.reconnect = true;
        p.connection.last_to_server = 0;
        p.connection.last_to_client = 0;
        let mut owners = Vec::new();
        if let Some(attempt) = &p.registering {
            owners.push((Owner::Register(process), attempt.request));
        }
        if let Some(attempt) = &p.batch {
            owners.push((Owner::Batch(process), attempt.request));
        }
        for (caller, call) in (0_u32..).zip(&self.calls) {
            if call.process == process
                && !call.done
                && let Some(attempt) = call.attempt.as_ref().filter(|a| a.stage == Stage::Expire)
            {
                owners.push((Owner::Call(caller), attempt.request));
            }
        }
        for (owner, request) in owners {
            self.lose(request, Loss::Reset);
            // The connection manager's call fails at once; the next one reconnects.
            self.failed(owner, UnavailableKind::Connection, "connection reset");
        }
    }

    fn crash(&mut self, process: u16, for_ns: u64) {
        let t = self.now;
        let p = &mut self.processes[process as usize];
        if !p.up {
            return;
        }
        p.up = false;
        p.ready = false;
        // Requests already sent still reach the server (and run); their replies find nobody.
        // It connects again as it restarts.
        p.generation += 1;
        p.registering = None;
        p.unregistered = None;
        p.remembered_past_end.clear();
        p.protocol = Protocol::new(config(self.scenario, process as usize));
        p.queued.clear();
        p.members.clear();
        if let Some(batch) = p.batch.take() {
            self.lose(batch.request, Loss::Crash);
        }
        let mut victims = Vec::new();
        for (caller, call) in (0_u32..).zip(&self.calls) {
            if call.process == process && !call.done && (call.attempts > 0) {
                let request = call
                    .attempt
                    .as_ref()
                    .filter(|a| a.stage == Stage::Expire)
                    .map(|a| a.request);
                victims.push((caller, request));
            }
        }
        for (caller, request) in victims {
            if let Some(request) = request {
                self.lose(request, Loss::Crash);
            }
            self.finish_call(caller, SharedOutcome::Crashed, EventDigest::None);
        }
        self.queue.push(t + for_ns, Event::Start(process));
    }
}

fn digest(reply: &Reply) -> ReplyDigest {
    match reply {
        Reply::Error(message) => ReplyDigest::Error {
            noscript: message.starts_with("NOSCRIPT"),
        },
        other => match other.integers() {
            Ok(values) => digest_values(&values),
            Err(_) => ReplyDigest::Other,
        },
    }
}

fn digest_values(values: &[i64]) -> ReplyDigest {
    match *values {
        [a, b, c, d] => ReplyDigest::Four {
            values: [a, b, c, d],
        },
        _ => ReplyDigest::Other,
    }
}

fn decision_digest(decision: &Decision) -> DecisionDigest {
    match decision {
        Decision::Permitted { remaining, .. } => DecisionDigest::Permitted {
            remaining: *remaining,
        },
        Decision::Wait { until } => DecisionDigest::Wait {
            until: u128::from(until.as_nanos()),
        },
        Decision::Rejected { retry_after, local } => DecisionDigest::Rejected {
            retry_after: retry_after.as_nanos(),
            local: *local,
        },
        Decision::FailedOpen(cause) => DecisionDigest::FailedOpen {
            may_have_counted: cause.may_have_counted(),
        },
        Decision::Unavailable(cause) => DecisionDigest::Unavailable {
            may_have_counted: cause.may_have_counted(),
        },
        Decision::Conflict(_) => DecisionDigest::Conflict,
        Decision::LimitChanged { limit } => DecisionDigest::LimitChanged { limit: *limit },
    }
}

fn outcome(
    result: &Result<fixed_window_redis::SharedPermit, SharedError>,
    config: &Config,
) -> SharedOutcome {
    match result {
        Ok(permit) => SharedOutcome::Permitted {
            remaining: if permit.failed_open().is_some() {
                None
            } else {
                permit.remaining()
            },
        },
        Err(SharedError::Limited(RateLimiterError::Rejected {
            name,
            limit,
            period,
            max_wait,
            retry_after,
        })) => SharedOutcome::Rejected {
            retry_after: retry_after.as_nanos(),
            fields_match: *name == config.name()
                && *limit == config.limit()
                && *period == config.period()
                && *max_wait == config.max_wait(),
        },
        Err(SharedError::Unavailable { .. }) => SharedOutcome::Unavailable,
        Err(SharedError::Conflict(_)) => SharedOutcome::Conflict,
        Err(_) => SharedOutcome::OtherError,
    }
}

fn event_digest(event: Option<&SharedEvent>) -> EventDigest {
    match event {
        Some(SharedEvent::Limiter(RateLimiterEvent::Permitted { remaining, .. })) => {
            EventDigest::Permitted {
                remaining: *remaining,
            }
        }
        Some(SharedEvent::Limiter(RateLimiterEvent::Rejected { retry_after, .. })) => {
            EventDigest::Rejected {
                retry_after: retry_after.as_nanos(),
            }
        }
        Some(SharedEvent::Unavailable { failed_open, .. }) => EventDigest::Unavailable {
            failed_open: *failed_open,
        },
        // None, or an event kind this simulator does not know.
        _ => EventDigest::None,
    }
}
