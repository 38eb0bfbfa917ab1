//! A limiter made with `start` whose registration was refused (the server holds another
//! configuration): its registration stays refused, so from then on every call it answers is
//! `Conflict`, at once, whatever its fail policy: never a permit, counted or fail-open, nor
//! the fail policy's answer. Until it knows (its registration under way, or failed
//! `Unavailable`), its calls are judged as any unregistered process's. On a cluster, where no
//! attempt reads the configuration, nothing but its registration refuses such a process on a
//! key no other process has counted on: a refused process must send no attempt there.

use super::Checker;
use crate::oracle::Invariant;
use crate::shared::record::DecisionDigest;

impl Checker<'_> {
    /// Process `process`'s registration was refused: made with `start`, it answers every call
    /// `Conflict` from now on (a process made with `connect` serves nothing instead).
    pub(super) fn refusal_known(&mut self, process: u16) {
        self.refused_processes[process as usize] = true;
        if self.scenario.processes[process as usize].started {
            self.knows_refusal[process as usize] = true;
        }
        self.registered(process, false);
    }

    /// Process `process` registered, or crashed and starts again as a new process: a new
    /// limiter, which knows of no refusal.
    pub(super) fn refusal_forgotten(&mut self, process: u16) {
        self.knows_refusal[process as usize] = false;
    }

    /// On a cluster, `request`, an attempt of `caller`'s process, ran with no counter refusing
    /// it: its process's latest registration must have been accepted (one refused has no
    /// limiter, or answers `Conflict` without a round trip).
    pub(super) fn attempt_when_refused(&mut self, request: u32, caller: Option<u32>) {
        let process = self.requests[request as usize].process;
        self.checks.count(&[Invariant::Configuration]);
        if self.registration_accepted[process as usize] == Some(false) {
            self.report(Invariant::Configuration, caller, || {
                format!(
                    "request {request} of process {process}, whose registration the server \
                     refused, ran as an attempt on a cluster, where no counter refused it"
                )
            });
        }
    }

    /// Judges `caller`'s decision if its process knows its registration was refused: it must
    /// be `Conflict`, without a round trip. Returns whether it did.
    pub(super) fn decided_when_refused(
        &mut self,
        caller: u32,
        request: Option<u32>,
        decision: DecisionDigest,
    ) -> bool {
        let process = self.process_of(caller);
        if !self.knows_refusal[process as usize] {
            return false;
        }
        self.checks.count(&[Invariant::Configuration]);
        if decision != DecisionDigest::Conflict || request.is_some() {
            let policy = self.scenario.processes[process as usize].fail_policy;
            self.report(Invariant::Configuration, Some(caller), || {
                format!(
                    "process {process}, made with `start` and refused, decided {decision:?} \
                     (request {request:?}, {policy:?} policy) instead of `Conflict`"
                )
            });
        }
        true
    }
}
