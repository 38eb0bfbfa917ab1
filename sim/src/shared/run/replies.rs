//! What a process does with a reply, or with its absence: each attempt of a batch finished
//! with its part, a registration accepted or refused, a failure answered by the fail policy.

use core::time::Duration;
use std::rc::Rc;

use fixed_window::Instant;

use fixed_window_redis::{
    DRIFT_ALLOWANCE, Decision, ScriptReply, SharedError, Unavailable, UnavailableKind,
};

use super::{CHANGE_RETRIES, Event, MOST_BACKOFF, Owner, REFUSALS, Sim, Stage};
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{Purpose, SharedRecord};
use crate::shared::server::Command;

impl Sim<'_> {
    pub(super) fn failed(&mut self, owner: Owner, kind: UnavailableKind, message: &str) {
        if let Owner::Batch(process, group) = owner {
            // Whatever ends the group's call without its reply is each waiting attempt's.
            let first = self.attempt_of(owner).map_or(u32::MAX, |a| a.request);
            let members = self.end_batch(process, group);
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
            self.records.push(SharedRecord::Queued {
                t: self.now,
                caller,
            });
            self.arm_timeout(process, owner, number, self.now);
            self.pump(process);
            return;
        }
        self.replied(owner, &Err(Unavailable::new(kind, message)), None);
    }

    /// The planted memories of a full window apart from the protocol's (`remembers_apart`):
    /// kept past the window's end, or kept whatever the process learns after.
    fn remember_apart(
        &mut self,
        process: u16,
        key: u16,
        n: u32,
        (sent, received): (Instant, Instant),
        reply: &Result<Vec<i64>, Unavailable>,
    ) {
        if let Some(planted) = self.planted.filter(|p| p.remembers_apart())
            && let Ok(values) = &reply
            && let Some(ScriptReply::Full { retry_after, .. }) = ScriptReply::parse(values)
        {
            let memory = &mut self.processes[process as usize].remembered_past_end;
            if planted == SharedPlantedBug::MemoryPastEnd {
                let late = Duration::from_micros(retry_after + self.scenario.period_us / 2);
                let until = received.saturating_add(late);
                // Always a rejection: the window is taken to open too late for any wait.
                memory.insert(key, (until, Instant::MAX, until));
            } else if n == 1 {
                // As the protocol remembers it (whatever the version it was sent
                // under), and kept whatever the process learns after.
                let retry_after = Duration::from_micros(retry_after);
                let allowance = retry_after / DRIFT_ALLOWANCE;
                let until = sent.saturating_add(retry_after.saturating_sub(allowance));
                let opens_by = sent.saturating_add(retry_after);
                let opens_at = received.max(sent).saturating_add(retry_after);
                memory.insert(key, (until, opens_by, opens_at));
            }
        }
    }

    /// An attempt's round trip is over: `reply` is the script's, or why there is none.
    pub(super) fn replied(
        &mut self,
        owner: Owner,
        reply: &Result<Vec<i64>, Unavailable>,
        request: Option<u32>,
    ) {
        match owner {
            Owner::Register(process) => self.registered(process, reply),
            Owner::Refresh(process) => self.refreshed(process, reply),
            Owner::Limit(change) => self.limit_replied(change, reply),
            Owner::HandBack(process, slot) => self.hand_back_replied(process, slot, reply),
            Owner::Batch(process, group) => self.batch_replied(process, group, reply, request),
            Owner::Call(caller) if self.peeks.is_peeking(caller) => {
                self.peek_replied(caller, reply, request);
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
                let times = self.lease_times(attempt.call.is_lease(), (sent, received, deadline));
                // Finished under the version of the limit it was sent with, as the limiter
                // finishes it.
                let version = attempt.call.limit_version();
                // A lease call is finished as one, as the limiter finishes it: a share granted
                // is held, any other outcome lets the key lease again.
                let reply_of = || match &reply {
                    Ok(values) => Ok(&values[..]),
                    Err(cause) => Err(cause.clone()),
                };
                let mut decision = if attempt.call.is_lease() {
                    protocol.finish_lease(name, n, version, times, reply_of())
                } else {
                    protocol.finish_at(name, n, version, times, reply_of())
                };
                self.keep_share(process, key, sent, &decision, reply);
                let protocol = &self.processes[process as usize].protocol;
                if self.planted == Some(SharedPlantedBug::ConflictIgnored)
                    && let Decision::Conflict(_) = decision
                {
                    // The planted client reads a refusal of its configuration as an
                    // outage, which its fail policy may turn into a permit.
                    let outage = Unavailable::new(UnavailableKind::Server, "conflict");
                    decision = protocol.finish(name, sent, received, deadline, Err(outage));
                }
                self.remember_apart(process, key, n, (sent, received), reply);
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
                        false,
                    );
                    let number = self.next_attempt;
                    self.next_attempt += 1;
                    if let Some(a) = self.calls[caller as usize].attempt.as_mut() {
                        a.stage = Stage::Expire;
                        a.request = request_id;
                        a.number = number;
                        a.decided = Some((decision, received, request.unwrap_or(u32::MAX)));
                    }
                    self.arm_timeout(process, owner, number, self.now);
                    return;
                }
                self.calls[caller as usize].attempt = None;
                self.decided(caller, received, request, &decision);
                let call = &mut self.calls[caller as usize];
                if matches!(decision, Decision::LimitChanged { .. })
                    && call.changes < CHANGE_RETRIES
                {
                    // Adopted: the attempt is made again at once under the new limit; a
                    // process reading live limits reads them first.
                    call.changes += 1;
                    call.now = received;
                    call.read_at = self.now;
                    if self.processes[process as usize].protocol.limits_due() {
                        self.await_limits(caller, process);
                        return;
                    }
                    self.attempt(caller);
                    return;
                }
                self.conclude(caller, &decision, received);
            }
        }
    }

    /// Group `group` of `process`'s batch is over: each waiting member finishes with its part
    /// of `reply` (of `request`, the group's first id), or the cause of its absence.
    fn batch_replied(
        &mut self,
        process: u16,
        group: u16,
        reply: &Result<Vec<i64>, Unavailable>,
        request: Option<u32>,
    ) {
        let call = self.processes[process as usize]
            .batch
            .get(group as usize)
            .and_then(Option::as_ref)
            .map(|batch| Rc::clone(&batch.call));
        let members = self.end_batch(process, group);
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

    /// The planted second command is done (or failed): the count's decision concludes.
    pub(super) fn expired_done(&mut self, owner: Owner) {
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

    /// A background read of the configuration ended: a reply adopts a newer limit stored
    /// there; a conflict, a reply of no use or none at all changes nothing (attempts report
    /// them), as in the limiter.
    pub(super) fn refreshed(&mut self, process: u16, reply: &Result<Vec<i64>, Unavailable>) {
        let call = self.processes[process as usize]
            .refreshing
            .take()
            .map(|attempt| attempt.call);
        if reply.is_ok() {
            let _ = self.read_registration(process, call.as_deref(), reply);
        }
        self.live_text = None;
        self.limits_read_over(process);
    }

    pub(super) fn registered(&mut self, process: u16, reply: &Result<Vec<i64>, Unavailable>) {
        let call = self.registering_call(process);
        let origin = self.read_registration(process, call.as_deref(), reply);
        let p = &mut self.processes[process as usize];
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
            self.make_pending_changes(process);
        } else {
            // As a deployment restarts a replica whose connect failed: try again, after
            // the timeout (a server that is down refuses at once).
            let refused = matches!(origin, Err(SharedError::Conflict(_)));
            let p = &mut self.processes[process as usize];
            p.registering = None;
            p.failed_registrations += 1;
            p.refused |= refused;
            if let Err(SharedError::Conflict(conflict)) = origin
                && self.scenario.processes[process as usize].started
            {
                // Made with `start`: it serves, and its registration stays refused, so every
                // call is answered `Conflict`, the waiting ones first.
                p.conflict = Some(conflict);
                for caller in std::mem::take(&mut p.pending) {
                    self.answer_conflict(caller, conflict);
                }
                return;
            }
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
            let at = self.after(process, backoff);
            self.queue.push(at, Event::Register(process, generation));
        }
    }
}
