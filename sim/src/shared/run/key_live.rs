//! Live changes of one key's limit (`set_key_limit`, `clear_key_limit`): a process makes its
//! change as the limiter does, its own script call over its connection, bounded by its
//! timeout; every process of such a scenario reads the live limits with the configuration
//! (`Protocol::limits_call`) when it registers, in its background read, and before making
//! again an attempt that a reply told of a version it has not read.
//!
//! The changes take the events and the round-trip bookkeeping of the limiter's limit's
//! changes, numbered after those.

use std::rc::Rc;

use fixed_window_redis::{ScriptCall, SharedError, Unavailable};

use super::{Owner, Sim};
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::LimitOutcome;

impl Sim<'_> {
    /// Whether the processes read the live limits with the configuration: in a scenario that
    /// changes keys' limits live, unless the planted client never reads them.
    pub(super) fn reads_live_limits(&self) -> bool {
        !self.scenario.key_live.is_empty()
            && self.planted != Some(SharedPlantedBug::LiveLimitsUnread)
    }

    /// The call a registration (or a background read of the configuration) of `process`
    /// makes.
    pub(super) fn registration_call(&self, process: u16) -> ScriptCall {
        let protocol = &self.processes[process as usize].protocol;
        if self.reads_live_limits() {
            protocol.limits_call()
        } else {
            protocol.register_call()
        }
    }

    /// The call of `process`'s registration under way, if any.
    pub(super) fn registering_call(&self, process: u16) -> Option<Rc<ScriptCall>> {
        let registering = self.processes[process as usize].registering.as_ref();
        registering.map(|attempt| Rc::clone(&attempt.call))
    }

    /// The outcome of `process`'s registration call `call`, with its reply: read with the
    /// live limits' text the reply carried, where the processes read them.
    pub(super) fn read_registration(
        &mut self,
        process: u16,
        call: Option<&ScriptCall>,
        reply: &Result<Vec<i64>, Unavailable>,
    ) -> Result<u64, SharedError> {
        let text = self.live_text.take().flatten();
        let protocol = &self.processes[process as usize].protocol;
        match call {
            Some(call) if self.reads_live_limits() => protocol.limits_read(
                call,
                reply
                    .as_deref()
                    .map(|values| (values, text.as_deref()))
                    .map_err(Clone::clone),
            ),
            _ => protocol.registered(reply.as_deref().map_err(Clone::clone)),
        }
    }

    /// The scenario's live change `live` (change `change` among all) is due: its process
    /// calls `set_key_limit` (or `clear_key_limit`).
    pub(super) fn set_key_limit(&mut self, change: u32, live: u32) {
        let spec = self.scenario.key_live[live as usize];
        if !self.ready_to_change(spec.process, change) {
            return;
        }
        let key = &self.scenario.keys[spec.key as usize];
        match self.processes[spec.process as usize]
            .protocol
            .set_key_limit_call(key, spec.limit)
        {
            Ok(call) => self.send_change(spec.process, change, call),
            // Never drawn: a key the scenario uses names a counter, and no limit is 0.
            Err(_) => self.limit_set(change, LimitOutcome::Refused),
        }
    }

    /// The round trip of live change `live` (change `change` among all) is over: `reply` is
    /// the script's, or why there is none.
    pub(super) fn key_limit_replied(
        &mut self,
        change: u32,
        live: u32,
        reply: &Result<Vec<i64>, Unavailable>,
    ) {
        if self.limit_calls[change as usize].take().is_none() {
            return;
        }
        let spec = self.scenario.key_live[live as usize];
        let protocol = &self.processes[spec.process as usize].protocol;
        let key = &self.scenario.keys[spec.key as usize];
        let outcome =
            match protocol.key_limit_set(key, spec.limit, reply.as_deref().map_err(Clone::clone)) {
                Ok(()) => LimitOutcome::Set {
                    limit: protocol.key_limit(key),
                },
                Err(SharedError::Conflict(_)) => LimitOutcome::Conflict,
                Err(_) => LimitOutcome::Unavailable,
            };
        self.limit_set(change, outcome);
    }

    /// `caller`'s attempt (or peek) was told of a version of the limit its process has not
    /// read with its live limits: it attempts again once a read of them (this one, or one
    /// already under way) is over.
    pub(super) fn await_limits(&mut self, caller: u32, process: u16) {
        self.processes[process as usize]
            .awaiting_limits
            .push(caller);
        if self.processes[process as usize].refreshing.is_some() {
            return;
        }
        let now = self.local(process);
        let call = Rc::new(self.processes[process as usize].protocol.limits_call());
        self.processes[process as usize].refreshed = now;
        let number = self.next_attempt;
        self.next_attempt += 1;
        let attempt = self.eval(process, Owner::Refresh(process), call, number, now);
        self.processes[process as usize].refreshing = Some(attempt);
        self.arm_timeout(process, Owner::Refresh(process), number, self.now);
    }

    /// A read of the live limits of `process` is over: the callers waiting for it attempt
    /// again, now.
    pub(super) fn limits_read_over(&mut self, process: u16) {
        for caller in std::mem::take(&mut self.processes[process as usize].awaiting_limits) {
            if self.peek_after_read(caller) {
                continue;
            }
            let call = &self.calls[caller as usize];
            if call.done || call.attempt.is_some() {
                continue;
            }
            let now = self.local(process);
            let call = &mut self.calls[caller as usize];
            call.now = now;
            call.read_at = self.now;
            self.attempt(caller);
        }
    }
}
