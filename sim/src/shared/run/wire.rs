//! Requests on the wire: each process's connection (one script call in flight, the rest
//! batched), sending, losing, delivering, running at the server, replying, resending after
//! `NOSCRIPT`, and timeouts.

use std::rc::Rc;

use fixed_window::Instant;
use fixed_window_redis::{ScriptCall, UnavailableKind};
use rand::RngExt;

use super::cluster::stray;
use super::digest::{digest, digest_values};
use super::peek::is_peek;
use super::{Attempt, Event, Owner, Request, Sim, Stage};
use crate::shared::cluster::key_slot;
use crate::shared::cluster::nodes::Cluster;
use crate::shared::engine::Reply;
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{Loss, Purpose, SharedRecord};
use crate::shared::server::Command;

impl Sim<'_> {
    /// The lane `call` goes in, as the production coalescer's: on a cluster the hash slot of
    /// its keys (one primary owns it), on one node the one lane (`None`).
    pub(super) fn lane(&self, call: &ScriptCall) -> Option<u16> {
        self.cluster.as_ref()?;
        call.counter_key(0).map(key_slot)
    }

    /// Whether the process keeps one batch in flight for all its lanes, as the coalescer did
    /// before it had lanes ([`SharedPlantedBug::OneCallInFlight`]; a planted client that mixes
    /// slots in one call batches so as well).
    fn one_batch(&self) -> bool {
        matches!(
            self.planted,
            Some(SharedPlantedBug::OneCallInFlight | SharedPlantedBug::BatchCrossingSlots)
        )
    }

    /// Sends the next batch of each of `process`'s lanes that has none in flight: the
    /// attempts queued in it (up to [`MAX_BATCH`](fixed_window_redis::MAX_BATCH)), each group
    /// that can share a script call (those made under one version of the limit) in one, the
    /// groups' calls together, as the production client does. A lane is the one node, or a
    /// hash slot of a cluster: lanes go independently, so one primary's slow calls hold up
    /// no other's.
    pub(super) fn pump(&mut self, process: u16) {
        let one_batch = self.one_batch();
        let p = &self.processes[process as usize];
        if !p.up || !p.ready || p.queued.is_empty() {
            return;
        }
        let in_flight = p.batch.iter().any(Option::is_some);
        if one_batch && in_flight {
            return;
        }
        // The lanes with a call in flight: their attempts wait for it.
        let busy: Vec<Option<u16>> = p
            .batch
            .iter()
            .flatten()
            .map(|attempt| self.lane(&attempt.call))
            .collect();
        let queued = std::mem::take(&mut self.processes[process as usize].queued);
        let mut groups: Vec<(ScriptCall, Vec<u32>)> = Vec::new();
        // Attempts gathered per lane (one count for all with one batch).
        let mut gathered: Vec<(Option<u16>, usize)> = Vec::new();
        let mut rest = Vec::new();
        let mut strays = Vec::new();
        for caller in queued {
            let Some(attempt) = self.calls[caller as usize]
                .attempt
                .as_ref()
                .filter(|a| a.stage == Stage::Queued)
            else {
                // Ended meanwhile: nothing to send.
                continue;
            };
            let lane = self.lane(&attempt.call);
            if busy.contains(&lane) {
                rest.push(caller);
                continue;
            }
            let counted = if one_batch { None } else { lane };
            let index = if let Some(index) = gathered.iter().position(|&(l, _)| l == counted) {
                index
            } else {
                gathered.push((counted, 0));
                gathered.len() - 1
            };
            if gathered[index].1 == fixed_window_redis::MAX_BATCH {
                rest.push(caller);
                continue;
            }
            gathered[index].1 += 1;
            let Some(attempt) = self.calls[caller as usize].attempt.as_mut() else {
                continue;
            };
            attempt.stage = Stage::Batched;
            let mut call = Some((*attempt.call).clone());
            for (index, (group, members)) in groups.iter_mut().enumerate() {
                let Some(next) = call.take() else { break };
                match group.join(next) {
                    Ok(()) => members.push(caller),
                    // A planted client may put an attempt of another slot in the first group.
                    Err(refused) if index == 0 => {
                        call = stray(self.planted, group, *refused, &mut strays);
                        if call.is_none() {
                            members.push(caller);
                        }
                    }
                    Err(refused) => call = Some(*refused),
                }
            }
            if let Some(call) = call {
                groups.push((call, vec![caller]));
            }
        }
        if let Some(cluster) = &mut self.cluster
            && !in_flight
        {
            cluster.strays[process as usize] = strays;
        }
        let p = &mut self.processes[process as usize];
        p.queued = rest;
        if !in_flight {
            // Nothing in flight: the groups are numbered afresh (the first carries a planted
            // client's strays).
            p.batch.clear();
            p.members.clear();
        }
        let first = u16::try_from(p.batch.len()).unwrap_or(u16::MAX);
        p.members
            .extend(groups.iter().map(|(_, members)| members.clone()));
        p.batch.extend(groups.iter().map(|_| None));
        let now = self.local(process);
        for ((call, _), group) in groups.into_iter().zip(first..) {
            let number = self.next_attempt;
            self.next_attempt += 1;
            let owner = Owner::Batch(process, group);
            let attempt = self.eval(process, owner, Rc::new(call), number, now);
            self.number_members(process, group, attempt.request);
            self.processes[process as usize].batch[group as usize] = Some(attempt);
            self.arm_timeout(process, owner, number, self.now);
        }
    }

    /// Gives each waiting member of group `group` of `process`'s batch its id in the group's
    /// `request`.
    pub(super) fn number_members(&mut self, process: u16, group: u16, request: u32) {
        let members = &self.processes[process as usize].members;
        for (id, &caller) in (request..).zip(members.get(group as usize).into_iter().flatten()) {
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
    pub(super) fn member_waits(&self, caller: u32, id: u32) -> bool {
        self.calls[caller as usize]
            .attempt
            .as_ref()
            .is_some_and(|a| a.stage == Stage::Batched && a.request == id)
    }

    /// Sends attempt `number`'s script call for `owner` (a process registering, or a batch
    /// of attempts) and returns the attempt, waiting for its reply.
    pub(super) fn eval(
        &mut self,
        process: u16,
        owner: Owner,
        call: Rc<ScriptCall>,
        number: u32,
        now: Instant,
    ) -> Attempt {
        // A background read of the configuration is the registration's call again.
        let registering = matches!(owner, Owner::Register(_) | Owner::Refresh(_));
        let extra = self.extra_args(process, now, registering);
        let purpose = match owner {
            Owner::Register(_) => Purpose::Register,
            Owner::Refresh(_) => Purpose::Refresh,
            Owner::Limit(_) => Purpose::Limit,
            Owner::Call(_) | Owner::Batch(..) if is_peek(&call) => Purpose::Peek,
            Owner::HandBack(..) => Purpose::HandBack,
            Owner::Call(_) | Owner::Batch(..) => Purpose::Acquire,
        };
        let command = Command::EvalSha {
            script: Rc::clone(&self.script),
            call: Rc::clone(&call),
            extra,
        };
        let request = self.send(process, owner, command, purpose, false);
        Attempt {
            number,
            sent: now,
            call,
            stage: Stage::Eval,
            request,
            retried: false,
            decided: None,
            hops: 0,
            asked: None,
        }
    }

    pub(super) fn extra_args(&self, process: u16, now: Instant, registering: bool) -> Vec<String> {
        match self.planted {
            Some(SharedPlantedBug::ClientClock) => vec![(now.as_nanos() / 1_000).to_string()],
            Some(SharedPlantedBug::OwnOrigin) if !registering => {
                vec![self.processes[process as usize].own_origin.to_string()]
            }
            _ => Vec::new(),
        }
    }

    /// Arms the timeout of an attempt whose bound runs from virtual time `from` (now, or a
    /// call's reading of its start): as tokio's timer does, it runs on the hardware's time
    /// from that moment, not from the limiter's rounded reading.
    pub(super) fn arm_timeout(&mut self, process: u16, owner: Owner, number: u32, from: u64) {
        let timeout = self.processes[process as usize].protocol.config().timeout();
        let at = self.after_from(process, from, timeout);
        self.queue.push(at, Event::Timeout(owner, number));
    }

    /// Sends `command` on `process`'s connection (`again`: a call already sent, sent again);
    /// its request id (the first of its ids: a batch's script call has one per attempt).
    pub(super) fn send(
        &mut self,
        process: u16,
        owner: Owner,
        command: Command,
        purpose: Purpose,
        again: bool,
    ) -> u32 {
        let request = u32::try_from(self.requests.len()).unwrap_or(u32::MAX);
        let link = self.scenario.processes[process as usize].link;
        let callers: Vec<Option<u32>> = match (owner, purpose) {
            (Owner::Batch(_, group), Purpose::Acquire | Purpose::Peek) => self.processes
                [process as usize]
                .members
                .get(group as usize)
                .into_iter()
                .flatten()
                .copied()
                .map(Some)
                .collect(),
            (Owner::Call(caller), _) => vec![Some(caller)],
            _ => vec![None],
        };
        let ids = u32::try_from(callers.len()).unwrap_or(1);
        let handing = self.hand_back_record((owner, process), &command, request, again);
        let kept = self.before_send(process);
        let (limit, version) = carried(&command);
        let mut route = self.route(process, owner, &command);
        let asking = route.asking.is_some();
        let p = &mut self.processes[process as usize];
        let (connection, generation) = (p.connection.generation, p.generation);
        let session = p.connection.session;
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
                route: core::mem::take(&mut route),
                migration: None,
                acknowledged: None,
                epoch: 0,
                session,
                denied: None,
            });
            self.records.push(SharedRecord::Sent {
                t: self.now,
                request: id,
                caller,
                process,
                purpose,
                limit,
                version,
                change: match owner {
                    Owner::Limit(change) => Some(change),
                    _ => None,
                },
                again,
            });
        }
        self.records.extend(handing);
        if let Some(refusal) = kept {
            self.refuse_locally(request, refusal);
            return request;
        }
        let p = &mut self.processes[process as usize];
        let mut delay = link.delay_ns + self.rng.random_range(0..=link.jitter_ns);
        if std::mem::take(&mut p.connection.reconnect) {
            delay += 2 * link.delay_ns;
        }
        if asking {
            // redis-rs awaits `ASKING`'s reply before it sends the call.
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
    pub(super) fn ids(&self, request: u32) -> core::ops::Range<u32> {
        request..request + self.requests[request as usize].ids
    }

    /// Records every id of `request` lost.
    pub(super) fn lose(&mut self, request: u32, loss: Loss) {
        let t = self.now;
        for id in self.ids(request) {
            self.records.push(SharedRecord::Lost {
                t,
                request: id,
                loss,
            });
        }
    }

    pub(super) fn lost(&mut self, ppm: u32) -> bool {
        ppm > 0 && self.rng.random_range(0..1_000_000) < ppm
    }

    pub(super) fn at_server(&mut self, request: u32) {
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
        if let Some(until) = self.primary_stalled(request) {
            // A stalled primary reads the request once it continues.
            for id in self.ids(request) {
                self.records.push(SharedRecord::Held {
                    t: self.now,
                    request: id,
                });
            }
            self.queue.push(until, Event::AtServer(request));
            return;
        }
        let blocked = self.blocked_until(request);
        if blocked > self.now {
            // A `WAIT` holds the connection: the server reads the request once it answers.
            self.queue.push(blocked, Event::AtServer(request));
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

    pub(super) fn execute(&mut self, request: u32) {
        let t = self.now;
        if self.primary_down(request) {
            // A cluster's primary that failed refuses the connection.
            self.lose(request, Loss::Down);
            self.requests[request as usize].refused = true;
            self.reply(request);
            return;
        }
        if self.requests[request as usize].command.is_some()
            && let Some(refusal) = self.access_refusal(request)
        {
            self.refuse_at_server(request, refusal);
            return;
        }
        let r = &self.requests[request as usize];
        let Some(command) = &r.command else {
            return;
        };
        let (reply, effects) = match &mut self.cluster {
            Some(cluster) => {
                let check_owner = self.planted != Some(SharedPlantedBug::WrongSlot);
                cluster.execute(&r.route, request, command, t, check_owner)
            }
            None => self.server.execute(request, command, t),
        };
        // The migration an `ASK` among its answers was for.
        let migration = self.cluster.as_ref().and_then(Cluster::migrating);
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
        if let Ok((_, Some(text))) = reply.integers_and_text() {
            // `None`: no live limits stored.
            self.records
                .push(SharedRecord::LiveLimitsRead { t, request, text });
        }
        if let Command::EvalSha { call, .. } = command
            && effects.ran_script
            && is_peek(call)
        {
            self.records.push(SharedRecord::PeekRan {
                t,
                request,
                writes: effects.writes,
            });
        }
        let script_call = matches!(command, Command::EvalSha { .. });
        self.requests[request as usize].reply = Some(reply);
        self.requests[request as usize].migration = migration.map(|m| m.fault);
        if script_call && self.wait_after(request, effects.acknowledged_at) {
            return;
        }
        if self.lost(self.scenario.faults.reply_loss_ppm) {
            self.lose(request, Loss::Reply);
            return;
        }
        self.reply(request);
    }

    /// Sends the reply (or the refusal) of `request` back on its connection.
    pub(super) fn reply(&mut self, request: u32) {
        let process = self.requests[request as usize].process;
        let link = self.scenario.processes[process as usize].link;
        let delay = link.delay_ns + self.rng.random_range(0..=link.jitter_ns);
        let connection = &mut self.processes[process as usize].connection;
        let arrival = (self.now + delay).max(connection.last_to_client);
        connection.last_to_client = arrival;
        self.queue.push(arrival, Event::AtClient(request));
    }

    pub(super) fn resume(&mut self) {
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
    pub(super) fn waiting_attempt(&mut self, request: u32) -> Option<&mut Attempt> {
        let r = &self.requests[request as usize];
        let attempt = match r.owner {
            Owner::Call(caller) => self.calls[caller as usize].attempt.as_mut()?,
            Owner::Register(process) => self.processes[process as usize].registering.as_mut()?,
            Owner::Refresh(process) => self.processes[process as usize].refreshing.as_mut()?,
            Owner::Batch(process, group) => self.processes[process as usize]
                .batch
                .get_mut(group as usize)?
                .as_mut()?,
            Owner::Limit(change) => self.limit_calls[change as usize].as_mut()?,
            Owner::HandBack(_, slot) => self.handing.calls[slot as usize].as_mut()?,
        };
        (attempt.request == request).then_some(attempt)
    }

    pub(super) fn at_client(&mut self, request: u32) {
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
        if let Some(refusal) = self.requests[request as usize].denied {
            // The connection keeps a refused authentication whether anyone waits for it.
            self.keep_refusal(request, refusal);
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
        if let Some(refusal) = r.denied {
            self.refusal_received(request);
            self.failed(owner, UnavailableKind::Denied, refusal);
            return;
        }
        let reply = self.requests[request as usize]
            .reply
            .take()
            .unwrap_or(Reply::Nil);
        if !matches!(reply, Reply::Error(_)) {
            self.answer_received(self.requests[request as usize].process);
        }
        let Some(attempt) = self.waiting_attempt(request) else {
            return;
        };
        let stage = attempt.stage;
        match (stage, &reply) {
            (Stage::Eval, Reply::Error(message)) if message.starts_with("NOSCRIPT") => {
                self.resend(owner, Stage::Load);
            }
            (Stage::Load, Reply::Bulk(_)) => self.resend(owner, Stage::EvalAgain),
            (Stage::Eval | Stage::EvalAgain, Reply::Error(message)) if self.follows(message) => {
                let message = message.to_string();
                self.follow(request, owner, stage, &message);
            }
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
            (Stage::Eval | Stage::EvalAgain, reply) => match reply.integers_and_text() {
                Ok((values, text)) => {
                    if self.replicated_enough(owner, request) {
                        // A `limits` call's live limits go with its numbers.
                        self.live_text = text;
                        self.replied(owner, &Ok(values), Some(request));
                        self.live_text = None;
                    }
                }
                Err(other) => {
                    let message = format!("the script answered {other:?}");
                    self.failed(owner, UnavailableKind::Reply, &message);
                }
            },
        }
    }

    /// Sends the next command of the owner's attempt.
    pub(super) fn resend(&mut self, owner: Owner, stage: Stage) {
        let (process, mut purpose) = match owner {
            Owner::Call(caller) => (self.calls[caller as usize].process, Purpose::Acquire),
            Owner::Register(process) => (process, Purpose::Register),
            Owner::Refresh(process) => (process, Purpose::Refresh),
            Owner::Batch(process, _) => (process, Purpose::Acquire),
            Owner::Limit(change) => (self.change_processes()[change as usize], Purpose::Limit),
            Owner::HandBack(process, _) => (process, Purpose::HandBack),
        };
        let Some(attempt) = self.attempt_of(owner) else {
            return;
        };
        if stage == Stage::Load {
            // The script loaded, its call goes again as a new command: routed by the map,
            // its retries counted afresh.
            attempt.asked = None;
            attempt.hops = 0;
        }
        let call = Rc::clone(&attempt.call);
        if purpose == Purpose::Acquire && is_peek(&call) {
            purpose = Purpose::Peek;
        }
        let now = attempt.sent;
        let (command, purpose) = if stage == Stage::Load {
            (Command::ScriptLoad(Rc::clone(&self.script)), Purpose::Load)
        } else {
            let extra = self.extra_args(
                process,
                now,
                matches!(owner, Owner::Register(_) | Owner::Refresh(_)),
            );
            (
                Command::EvalSha {
                    script: Rc::clone(&self.script),
                    call,
                    extra,
                },
                purpose,
            )
        };
        let request = self.send(process, owner, command, purpose, true);
        if let Some(attempt) = self.attempt_of(owner) {
            attempt.request = request;
            attempt.stage = stage;
        }
        if let (Owner::Batch(process, group), Stage::EvalAgain) = (owner, stage) {
            self.number_members(process, group, request);
        }
    }

    pub(super) fn attempt_of(&mut self, owner: Owner) -> Option<&mut Attempt> {
        match owner {
            Owner::Call(caller) => self.calls[caller as usize].attempt.as_mut(),
            Owner::Register(process) => self.processes[process as usize].registering.as_mut(),
            Owner::Refresh(process) => self.processes[process as usize].refreshing.as_mut(),
            Owner::Batch(process, group) => self.processes[process as usize]
                .batch
                .get_mut(group as usize)
                .and_then(Option::as_mut),
            Owner::Limit(change) => self.limit_calls[change as usize].as_mut(),
            Owner::HandBack(_, slot) => self.handing.calls[slot as usize].as_mut(),
        }
    }

    pub(super) fn timeout(&mut self, owner: Owner, number: u32) {
        let current = self.attempt_of(owner).is_some_and(|a| a.number == number);
        if !current {
            return;
        }
        let callers: Vec<Option<u32>> = match owner {
            Owner::Call(caller) => vec![Some(caller)],
            Owner::Register(_) | Owner::Refresh(_) | Owner::Limit(_) | Owner::HandBack(..) => {
                vec![None]
            }
            Owner::Batch(process, group) => self.processes[process as usize]
                .members
                .get(group as usize)
                .into_iter()
                .flatten()
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
}

/// The limit and version of the limit `command` carries (zeros for a `SCRIPT LOAD`).
fn carried(command: &Command) -> (u32, u32) {
    match command {
        Command::EvalSha { call, .. } => (
            call.args()
                .nth(1)
                .and_then(|limit| limit.parse().ok())
                .unwrap_or(0),
            call.limit_version(),
        ),
        Command::ScriptLoad(_) => (0, 0),
    }
}
