//! Refusals of the limiter's user: recovery within the stated bound, and each refused attempt
//! answered by its process's fail policy with nothing counted.
//!
//! The bound, from the limiter's connection layer: a refusal seen by a call makes a new
//! connection due after at most [`RENEWAL_MAX`] on the process's clock; the first request
//! after it makes the new connection, which the server authenticates. A refusal whose call
//! timed out first is seen by the next call (the connection keeps it). So once the server
//! takes the user again (at `until`), a process is refused only by a refusal the server
//! gave before `until`, coming back (one one-way trip of its link), or kept by its connection
//! and seen by its first call since: no later than [`RENEWAL_MAX`], as its clock measures it,
//! after the first refusal it meets once `until` and that trip have passed. Judged from the
//! trace alone: the faults say how long each refusal lasted, the requests lost as `denied` say
//! when a process was refused.

use std::collections::HashMap;

use fixed_window_redis::{FailPolicy, RENEWAL_MAX};

use super::Checker;
use crate::oracle::Invariant;
use crate::shared::faults::Refusal;
use crate::shared::record::{DecisionDigest, Loss};

/// Slack for the readings' rounding, in nanoseconds.
const SLACK_NS: u64 = 1_000;

/// What the oracle knows of the refusals.
#[derive(Debug, Default)]
pub(super) struct Refusals {
    /// Each refusal's virtual times: when it began, when the user was taken again (for a
    /// rotated password, when every process was given the new one), and whether it was a
    /// rotation.
    spans: Vec<(u64, u64, bool)>,
    /// The requests refused (by the server, or by the refusal their connection kept), each
    /// with whether the refusal is what ended its attempt (no timeout, reset or crash came
    /// first).
    denied: HashMap<u32, bool>,
    /// Per process, the first refusal it met after a refusal of the user had ended: the end
    /// of that refusal, and the virtual time.
    first_after: HashMap<u16, (u64, u64)>,
}

impl Checker<'_> {
    /// The server's access control refuses the limiter's user from `t` until `until`.
    pub(super) fn access_refused(&mut self, t: u64, until: u64, refusal: Refusal) {
        self.refusals
            .spans
            .push((t, until, refusal == Refusal::PasswordRotated));
    }

    /// `request` was refused at `t`: within a refusal (and its way back), or within the
    /// back-off after the first refusal its process met since.
    pub(super) fn denied(&mut self, t: u64, request: u32) {
        self.refusals.denied.insert(request, true);
        let (process, sent_at) = {
            let info = self.request(request);
            (info.process, info.sent_at)
        };
        let trip = self.one_way(process);
        self.checks.count(&[Invariant::Liveness]);
        let begun = self.refusals.spans.iter().filter(|&&(from, ..)| from <= t);
        let Some(until) = begun.clone().map(|&(_, until, _)| until).max() else {
            let caller = self.request(request).caller;
            self.report(Invariant::Liveness, caller, || {
                format!("process {process} refused request {request} at {t} ns, before any refusal of its user")
            });
            return;
        };
        // A process given the new password makes its next connection with it at once
        // (`set_client`, which also forgets a refusal its connection kept): a request it sent
        // after that is refused by nothing, unless another refusal lasted until then (its
        // refusals, kept, end within the back-off as above).
        let others = begun
            .filter(|&&(.., rotation)| !rotation)
            .map(|&(_, until, _)| until)
            .max();
        let rotated = begun_rotation(&self.refusals.spans, t);
        if let Some(given) = rotated
            && sent_at > given
            && others.is_none_or(|other| other.saturating_add(trip) < given)
        {
            let caller = self.request(request).caller;
            self.report(Invariant::Liveness, caller, || {
                format!(
                    "process {process} refused request {request}, sent at {sent_at} ns, after \
                     it was given the rotated password at {given} ns"
                )
            });
            return;
        }
        if t <= until.saturating_add(trip) {
            return;
        }
        let wait = self.renewal_max(process);
        match self.refusals.first_after.get(&process) {
            Some(&(ended, first)) if ended == until => {
                if t > first.saturating_add(wait) {
                    let caller = self.request(request).caller;
                    self.report(Invariant::Liveness, caller, || {
                        format!(
                            "process {process} refused request {request} at {t} ns: its user \
                             was back at {until} ns, it met the refusal again at {first} ns, \
                             and should have made a new connection within {wait} ns of that"
                        )
                    });
                }
            }
            // The refusal its connection kept, seen by its first call since.
            _ => {
                self.refusals.first_after.insert(process, (until, t));
            }
        }
    }

    /// A request was lost (`loss`) at `t`, or came back late (`None`).
    pub(super) fn lost(&mut self, t: u64, request: u32, loss: Option<Loss>) {
        self.request(request).faulted = true;
        if loss == Some(Loss::Denied) {
            self.denied(t, request);
        } else {
            self.ended_otherwise(request);
        }
    }

    /// A fault other than the refusal ended `request`'s attempt first (a timeout, a reset, a
    /// crash, a late reply).
    pub(super) fn ended_otherwise(&mut self, request: u32) {
        if let Some(ended) = self.refusals.denied.get_mut(&request) {
            *ended = false;
        }
    }

    /// Caller `caller`'s attempt (or a registration, `None`) timed out.
    pub(super) fn timed_out(&mut self, caller: Option<u32>) {
        let Some(caller) = caller else {
            return;
        };
        if let Some(&last) = self.calls[caller as usize].attempt.last() {
            self.ended_otherwise(last);
        }
    }

    /// One one-way trip of `process`'s link, at its longest, and the slack.
    fn one_way(&self, process: u16) -> u64 {
        let link = self.scenario.processes[process as usize].link;
        link.delay_ns
            .saturating_add(link.jitter_ns)
            .saturating_add(SLACK_NS)
    }

    /// [`RENEWAL_MAX`] as `process`'s clock measures it, in virtual nanoseconds, and the
    /// slack.
    fn renewal_max(&self, process: u16) -> u64 {
        let spec = &self.scenario.processes[process as usize];
        let most = RENEWAL_MAX.as_nanos();
        // A clock running slow measures a wait as more virtual time.
        let rate = u128::try_from(1_000_000 + i64::from(spec.clock.ppm)).unwrap_or(1);
        let wait = u64::try_from((most * 1_000_000).div_ceil(rate)).unwrap_or(u64::MAX);
        wait.saturating_add(SLACK_NS)
    }

    /// Caller `caller`'s attempt decided `decision`: if its last request was refused, the
    /// decision is its process's fail policy's, with nothing counted (nothing ran).
    pub(super) fn decided_after_refusal(&mut self, caller: u32, decision: DecisionDigest) {
        let call = &self.calls[caller as usize];
        let Some(&last) = call.attempt.last() else {
            return;
        };
        if self.refusals.denied.get(&last) != Some(&true) {
            return;
        }
        let process = self.scenario.callers[caller as usize].process;
        let policy = self.scenario.processes[process as usize].fail_policy;
        self.checks.count(&[Invariant::Unavailable]);
        let right = matches!(
            (policy, decision),
            (
                FailPolicy::Closed | FailPolicy::Local { .. },
                DecisionDigest::Unavailable {
                    may_have_counted: false,
                },
            ) | (
                FailPolicy::Open,
                DecisionDigest::FailedOpen {
                    may_have_counted: false,
                },
            )
        );
        if !right {
            self.report(Invariant::Unavailable, Some(caller), || {
                format!(
                    "request {last} was refused (nothing ran), and the attempt decided \
                     {decision:?} under {policy:?}: expected an uncounted failure by the \
                     policy (Unavailable, or a fail-open permit)"
                )
            });
        }
    }
}

/// The latest moment a process was given a rotated password, of the rotations begun by `t`.
fn begun_rotation(spans: &[(u64, u64, bool)], t: u64) -> Option<u64> {
    spans
        .iter()
        .filter(|&&(from, _, rotation)| rotation && from <= t)
        .map(|&(_, until, _)| until)
        .max()
}
