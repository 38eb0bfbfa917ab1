//! A limiter made with `start` whose registration was refused (the server holds another
//! configuration): its registration stays refused, so from then on every call it answers is
//! `Conflict`, at once, whatever its fail policy: never a permit, counted or fail-open, nor
//! the fail policy's answer. Until it knows (its registration under way, or failed
//! `Unavailable`), its calls are judged as any unregistered process's. On a cluster, where no
//! attempt reads the configuration, nothing but its registration refuses such a process on a
//! key no other process has counted on: a refused process must send no attempt there.

use fixed_window_redis::ScriptReply;

use super::Checker;
use super::limits::Expect;
use crate::oracle::Invariant;
use crate::shared::record::{DecisionDigest, Purpose, ReplyDigest};

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
    fn attempt_when_refused(&mut self, request: u32, caller: Option<u32>) {
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

    /// On a cluster, judges the script run of `request` (for `purpose`, at virtual time `t`)
    /// by its counter's check (`expect`): a refusal is remembered for the rest of its call;
    /// an attempt its counter lets count must come from a registered process, unless its call
    /// was refused at an earlier key. Returns whether the run is judged (refused with its
    /// call, counting nothing).
    pub(super) fn counted_apart(
        &mut self,
        (t, request, purpose): (u64, u32, Purpose),
        expect: Expect,
        reply: ReplyDigest,
    ) -> bool {
        if self.scenario.cluster.is_none() || purpose != Purpose::Acquire {
            return false;
        }
        let info = &self.requests[request as usize];
        let (process, caller) = (info.process, info.caller);
        if let Expect::Refuse(stored) = expect {
            self.call_refused = Some((t, process, stored));
            return false;
        }
        if self.refused_with_its_call(t, process, reply) {
            return true;
        }
        self.attempt_when_refused(request, caller);
        false
    }

    /// Whether an attempt that its own key's counter would let count, run at virtual time `t`
    /// by `process`, was answered the refusal of an earlier attempt of its script call on a
    /// cluster: the script stops at the first counter of other settings and answers the
    /// whole call with it, so this attempt did not run, and counted nothing.
    fn refused_with_its_call(&mut self, t: u64, process: u16, reply: ReplyDigest) -> bool {
        let Some((at, by, stored)) = self.call_refused else {
            return false;
        };
        let parsed = match reply {
            ReplyDigest::Four { values } => ScriptReply::parse(&values),
            _ => None,
        };
        let refusal = matches!(
            parsed,
            Some(ScriptReply::Conflict { period, limit, .. })
                if period == stored.period && limit == u64::from(stored.limit)
        );
        if (at, by) == (t, process) && refusal {
            self.checks.count(&[Invariant::Configuration]);
            return true;
        }
        false
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
