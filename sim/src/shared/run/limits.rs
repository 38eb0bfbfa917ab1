//! Changes of the shared limit: a process calls `set_limit` as the limiter does, its own script
//! call (not batched with attempts) over its connection, bounded by its timeout, and adopts the
//! limit the server answers.
//!
//! A process with no limiter when its change is due (not started, registering, or its
//! registration failed) makes it once it registers; a crash drops the changes it had not
//! finished.

use std::rc::Rc;

use fixed_window_redis::{ScriptCall, SharedError, Unavailable};

use super::{Owner, Sim};
use crate::shared::record::{LimitOutcome, SharedRecord};

impl Sim<'_> {
    /// The scenario's change `change` is due: its process calls `set_limit`.
    pub(super) fn set_limit(&mut self, change: u32) {
        if let Some(live) = self.scenario.live_change(change) {
            self.set_key_limit(change, live);
            return;
        }
        let spec = self.scenario.limit_changes[change as usize];
        if !self.ready_to_change(spec.process, change) {
            return;
        }
        match self.processes[spec.process as usize]
            .protocol
            .set_limit_call(spec.limit)
        {
            Ok(call) => self.send_change(spec.process, change, call),
            // Zero, refused as at build: nothing is sent.
            Err(_) => self.limit_set(change, LimitOutcome::Refused),
        }
    }

    /// Whether `process` can make change `change` now: up and registered. If not, it makes
    /// it once it is.
    pub(super) fn ready_to_change(&mut self, process: u16, change: u32) -> bool {
        let p = &mut self.processes[process as usize];
        if !(p.up && p.ready) {
            p.pending_changes.push(change);
        }
        p.up && p.ready
    }

    /// Sends `call`, change `change` made by `process`, timed out as any call.
    pub(super) fn send_change(&mut self, process: u16, change: u32, call: ScriptCall) {
        let now = self.local(process);
        let number = self.next_attempt;
        self.next_attempt += 1;
        let owner = Owner::Limit(change);
        let attempt = self.eval(process, owner, Rc::new(call), number, now);
        self.limit_calls[change as usize] = Some(attempt);
        self.arm_timeout(process, owner, number, self.now);
    }

    /// The round trip of change `change` is over: `reply` is the script's, or why there is none.
    pub(super) fn limit_replied(&mut self, change: u32, reply: &Result<Vec<i64>, Unavailable>) {
        if let Some(live) = self.scenario.live_change(change) {
            self.key_limit_replied(change, live, reply);
            return;
        }
        if self.limit_calls[change as usize].take().is_none() {
            return;
        }
        let process = self.scenario.limit_changes[change as usize].process;
        let protocol = &self.processes[process as usize].protocol;
        let outcome = match protocol.limit_set(reply.as_deref().map_err(Clone::clone)) {
            Ok(limit) => LimitOutcome::Set { limit },
            Err(SharedError::Conflict(_)) => LimitOutcome::Conflict,
            Err(_) => LimitOutcome::Unavailable,
        };
        self.limit_set(change, outcome);
    }

    /// `process` registered: the changes it was to make meanwhile, in order.
    pub(super) fn make_pending_changes(&mut self, process: u16) {
        for change in std::mem::take(&mut self.processes[process as usize].pending_changes) {
            self.set_limit(change);
        }
    }

    /// `process` crashed: the changes it was making or was to make end with it.
    pub(super) fn drop_changes(&mut self, process: u16) {
        let mut dropped = std::mem::take(&mut self.processes[process as usize].pending_changes);
        for (change, by) in (0_u32..).zip(self.change_processes()) {
            if by == process
                && let Some(attempt) = self.limit_calls[change as usize].take()
            {
                self.lose(attempt.request, crate::shared::record::Loss::Crash);
                dropped.push(change);
            }
        }
        dropped.sort_unstable();
        for change in dropped {
            self.limit_set(change, LimitOutcome::Crashed);
        }
    }

    /// The process making each change, in order: the limiter's limit's, then the live
    /// changes of keys' limits.
    pub(super) fn change_processes(&self) -> Vec<u16> {
        let limiter = self.scenario.limit_changes.iter().map(|c| c.process);
        let live = self.scenario.key_live.iter().map(|c| c.process);
        limiter.chain(live).collect()
    }

    /// Records how change `change` ended.
    pub(super) fn limit_set(&mut self, change: u32, outcome: LimitOutcome) {
        if let Some(live) = self.scenario.live_change(change) {
            let spec = self.scenario.key_live[live as usize];
            self.records.push(SharedRecord::KeyLimitSet {
                t: self.now,
                change: live,
                process: spec.process,
                key: spec.key,
                limit: spec.limit,
                outcome,
            });
            return;
        }
        let spec = self.scenario.limit_changes[change as usize];
        self.records.push(SharedRecord::LimitSet {
            t: self.now,
            change,
            process: spec.process,
            limit: spec.limit,
            outcome,
        });
    }
}
