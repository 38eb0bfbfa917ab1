//! A caller's side of a run: arriving, attempting through its process's protocol, deciding,
//! sleeping and finishing; and a process's start and registration.

use core::time::Duration;
use std::rc::Rc;

use fixed_window::Instant;
use fixed_window_redis::{Begin, Conclusion, Conflict, Decision, Unavailable, UnavailableKind};

use super::digest::{decision_digest, event_digest, outcome};
use super::{Attempt, Event, Owner, Sim};
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{EventDigest, SharedOutcome, SharedRecord};
use crate::shared::scenario::Weight;

impl Sim<'_> {
    pub(super) fn start(&mut self, process: u16) {
        if self.scenario.is_misconfigured(process) && !self.stored {
            // Rolled out after the others: it starts once the shared configuration is stored.
            self.deferred.push(process);
            return;
        }
        let now = self.local(process);
        let p = &mut self.processes[process as usize];
        if p.up {
            return;
        }
        p.up = true;
        // Its limiter is made now: the first background read of the configuration comes a
        // `LIMIT_REFRESH` later.
        p.refreshed = now;
        self.register(process);
    }

    pub(super) fn register(&mut self, process: u16) {
        let now = self.local(process);
        let call = Rc::new(self.registration_call(process));
        let number = self.next_attempt;
        self.next_attempt += 1;
        let attempt = self.eval(process, Owner::Register(process), call, number, now);
        self.processes[process as usize].registering = Some(attempt);
        self.arm_timeout(process, Owner::Register(process), number, self.now);
    }

    /// As the limiter does at each attempt: on a cluster, or on one node while windows are
    /// remembered full or live limits held, reads the configuration again in the background
    /// (a live limits' restore, which no scenario here needs, is not made), at most once per
    /// [`LIMIT_REFRESH`](fixed_window_redis::LIMIT_REFRESH) on the process's clock. The attempt does not wait for it. One read is
    /// in flight at a time: a read slower than `LIMIT_REFRESH` would need a timeout longer
    /// than it, where the limiter may have two.
    pub(super) fn refresh_limit(&mut self, process: u16, (now, read_at): (Instant, u64)) {
        let p = &self.processes[process as usize];
        if p.refreshing.is_some() || !p.protocol.refresh_due(p.refreshed, now) {
            return;
        }
        let call = Rc::new(self.registration_call(process));
        self.processes[process as usize].refreshed = now;
        let number = self.next_attempt;
        self.next_attempt += 1;
        let attempt = self.eval(process, Owner::Refresh(process), call, number, now);
        self.processes[process as usize].refreshing = Some(attempt);
        self.arm_timeout(process, Owner::Refresh(process), number, read_at);
    }

    pub(super) fn arrive(&mut self, caller: u32) {
        let spec = self.scenario.callers[caller as usize];
        let process = spec.process;
        if let Weight::Units(n) = spec.weight
            && n > (self.processes[process as usize].protocol)
                .key_limit(&self.scenario.keys[spec.key as usize])
        {
            // Refused before anything else, as `try_acquire_n` and `acquire_n` refuse it.
            self.start_call(caller);
            self.finish_call(caller, SharedOutcome::TooMany, EventDigest::None);
            return;
        }
        let p = &mut self.processes[process as usize];
        if let Some(conflict) = p.conflict.filter(|_| p.up) {
            self.answer_conflict(caller, conflict);
        } else if p.up && p.ready {
            self.begin_call(caller);
        } else if let Some(cause) = p.unregistered.clone().filter(|_| p.up) {
            self.answer_unregistered(caller, cause);
        } else {
            p.pending.push(caller);
        }
    }

    pub(super) fn begin_call(&mut self, caller: u32) {
        if self.peek_first(caller) {
            // The call arrives again once its peek has ended.
            return;
        }
        self.start_call(caller);
        self.attempt(caller);
    }

    /// Answers `caller`, whose process has no limiter (its registration failed for `cause`),
    /// by the process's fail policy, without a round trip.
    pub(super) fn answer_unregistered(&mut self, caller: u32, cause: Unavailable) {
        self.start_call(caller);
        self.decide_unregistered(caller, cause);
    }

    /// Answers `caller`, whose process was made with `start` and refused, with `conflict`,
    /// without a round trip, as the limiter answers every call once its registration was
    /// refused.
    pub(super) fn answer_conflict(&mut self, caller: u32, conflict: Conflict) {
        self.start_call(caller);
        self.decide_conflict(caller, conflict);
    }

    /// One attempt of `caller`, whose process was made with `start` and refused: `Conflict`,
    /// without a round trip.
    fn decide_conflict(&mut self, caller: u32, conflict: Conflict) {
        let call = &mut self.calls[caller as usize];
        call.attempts += 1;
        let (process, now) = (call.process, call.now);
        let decision = if self.planted == Some(SharedPlantedBug::StartedRefusedByPolicy) {
            // The planted limiter takes the refusal for a registration still to come, and
            // answers by its fail policy.
            let cause = Unavailable::new(UnavailableKind::NotRegistered, "refused");
            self.processes[process as usize]
                .protocol
                .unregistered(&cause)
        } else {
            Decision::Conflict(conflict)
        };
        self.decided(caller, now, None, &decision);
        self.conclude(caller, &decision, now);
    }

    /// One attempt of `caller`, whose process has no limiter (its registration failed for
    /// `cause`): decided by the fail policy without a round trip.
    fn decide_unregistered(&mut self, caller: u32, cause: Unavailable) {
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
    pub(super) fn start_call(&mut self, caller: u32) {
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
        call.read_at = self.now;
    }

    /// One attempt of a call at its `now`.
    pub(super) fn attempt(&mut self, caller: u32) {
        let number = self.next_attempt;
        self.next_attempt += 1;
        let call = &mut self.calls[caller as usize];
        call.attempts += 1;
        let (process, key, now, deadline) = (call.process, call.key, call.now, call.deadline);
        let read_at = call.read_at;
        self.refresh_limit(process, (now, read_at));
        if self.planted.is_some_and(SharedPlantedBug::remembers_apart)
            && let Some(&(until, opens_by, opens_at)) = self.processes[process as usize]
                .remembered_past_end
                .get(&key)
            && now < until
        {
            // As the protocol decides from its memory.
            let decision = if opens_by <= deadline && now < deadline {
                Decision::Wait {
                    until: opens_at.min(deadline),
                }
            } else {
                Decision::Rejected {
                    retry_after: opens_at.saturating_duration_since(now),
                    local: true,
                }
            };
            self.decided(caller, now, None, &decision);
            self.conclude(caller, &decision, now);
            return;
        }
        if let Some(n) = self.scenario.callers[caller as usize].weight.permits()
            && let Some(decision) = self
                .kept_share(process, key, n, now)
                .or_else(|| self.spend_handed_back(process, key, n))
        {
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
                if let Decision::Permitted { remaining, .. } = decision {
                    self.spent_kept(process, key, remaining);
                }
                self.decided(caller, now, None, &decision);
                self.conclude(caller, &decision, now);
            }
            Ok(Begin::Call(call)) => {
                self.calls[caller as usize].attempt = Some(Attempt::queued(number, now, call));
                self.processes[process as usize].queued.push(caller);
                self.records.push(SharedRecord::Queued {
                    t: self.now,
                    caller,
                });
                // The caller's own bound, as the production caller's: from its attempt's
                // start, whether it waits in the queue or in the batch.
                self.arm_timeout(process, Owner::Call(caller), number, read_at);
                self.pump(process);
            }
            Err(_) => {
                self.finish_call(caller, SharedOutcome::OtherError, EventDigest::None);
            }
        }
    }

    /// Group `group` of the batch in flight on `process`'s connection is over: its members,
    /// in order.
    pub(super) fn end_batch(&mut self, process: u16, group: u16) -> Vec<u32> {
        let lane = self.processes[process as usize]
            .batch
            .get(group as usize)
            .and_then(Option::as_ref)
            .map(|attempt| self.lane(&attempt.call));
        if let Some(slot) = lane {
            self.records.push(SharedRecord::CallEnded {
                t: self.now,
                process,
                slot,
            });
        }
        let p = &mut self.processes[process as usize];
        let group = group as usize;
        if let Some(slot) = p.batch.get_mut(group) {
            *slot = None;
        }
        p.members
            .get_mut(group)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    pub(super) fn decided(
        &mut self,
        caller: u32,
        at: Instant,
        request: Option<u32>,
        decision: &Decision,
    ) {
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
    pub(super) fn conclude(&mut self, caller: u32, decision: &Decision, at: Instant) {
        let shared = self.by_local_share(caller, decision, at);
        let decision = shared.as_ref().unwrap_or(decision);
        if self.scenario.callers[caller as usize].weight == Weight::Rest {
            // A drain ends with the window full, or with the error that kept it from it; it
            // tells no listener.
            let outcome = match decision {
                Decision::Permitted { .. } | Decision::Rejected { .. } | Decision::Wait { .. } => {
                    SharedOutcome::Drained
                }
                // Found changed again on each retry: the call fails.
                Decision::Unavailable(_)
                | Decision::FailedOpen(_)
                | Decision::LimitChanged { .. } => SharedOutcome::Unavailable,
                Decision::Conflict(_) => SharedOutcome::Conflict,
                // A drain asks for no count: it is never too many.
                Decision::TooMany { .. } => SharedOutcome::TooMany,
            };
            self.finish_call(caller, outcome, EventDigest::None);
            return;
        }
        let call = &self.calls[caller as usize];
        let process = call.process;
        let stalled = call.slept_from.is_some_and(|before| call.now <= before);
        let protocol = &self.processes[process as usize].protocol;
        let name = &self.scenario.keys[call.key as usize];
        match protocol.conclude(name, decision, at, !stalled) {
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
                // A key with a limit of its own is decided, and refused, by it.
                let key = self.scenario.callers[caller as usize].key;
                let limit = if self.scenario.key_live.is_empty() {
                    (self.scenario.key_limits.own(process, key)).unwrap_or_else(|| protocol.limit())
                } else {
                    // Its live limit, if it has one.
                    protocol.key_limit(&self.scenario.keys[key as usize])
                };
                let outcome = outcome(&result, protocol.config(), limit);
                let event = event_digest(event.as_ref());
                self.finish_call(caller, outcome, event);
            }
        }
    }

    pub(super) fn wake(&mut self, caller: u32, sleep: u32) {
        let call = &mut self.calls[caller as usize];
        if call.done || call.sleeping != Some(sleep) {
            return;
        }
        call.sleeping = None;
        call.changes = 0;
        let process = call.process;
        let now = self.local(process);
        let call = &mut self.calls[caller as usize];
        call.slept_from = Some(call.now);
        call.now = now;
        call.read_at = self.now;
        // A call that waited on its process's local share may wake once the process's
        // registration was refused: made with `start`, it answers `Conflict`, as the
        // limiter's next attempt finds the refusal before anything else.
        if let Some(conflict) = self.processes[process as usize].conflict {
            self.decide_conflict(caller, conflict);
            return;
        }
        // It may wake while the process still has no limiter: as the limiter's attempt, it
        // is then answered by the fail policy.
        if let Some(cause) = self.processes[process as usize]
            .unregistered
            .clone()
            .filter(|_| !self.processes[process as usize].ready)
        {
            self.decide_unregistered(caller, cause);
            return;
        }
        self.attempt(caller);
    }

    pub(super) fn finish_call(&mut self, caller: u32, outcome: SharedOutcome, event: EventDigest) {
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
}
