//! The bound of [`FailPolicy::Local`]: each attempt the server could not decide, decided again
//! by its process's local share, judged against the share's own fixed window on the process's
//! grid (its clock's instant 0 its origin, the period its configuration's), each key's share
//! by the spec's rule ([`fixed_window_spec::local_share`]: the policy's share, scaled to the
//! key's own limit where the process gives it one).

use fixed_window_redis::FailPolicy;

use super::Checker;
use crate::oracle::Invariant;
use crate::shared::record::{DecisionDigest, FaultRecord, SharedRecord};

impl Checker<'_> {
    /// A [`SharedRecord::Shared`]: `caller`'s attempt, just decided `Unavailable`, decided
    /// again by its process's local share at the process's reading `at`: only under `Local`, only after the server could
    /// not decide (which the rules of `Unavailable` explain by a fault), at most the key's
    /// share (the policy's, scaled to the key's own limit) per window of the process's grid, and a rejection or a wait only once
    /// the window cannot take the call's permits.
    pub(super) fn shared(&mut self, record: &SharedRecord) {
        let &SharedRecord::Shared {
            caller,
            at,
            decision,
            ..
        } = record
        else {
            return;
        };
        self.checks.count(&[
            Invariant::Unavailable,
            Invariant::FalseRejection,
            Invariant::Events,
            Invariant::Deadline,
        ]);
        let (process, key) = (self.process_of(caller), self.key_of(caller));
        let call = &mut self.calls[caller as usize];
        let (last, deadline) = (call.last, call.deadline);
        call.last = Some((decision, None));
        let policy = self.scenario.processes[process as usize].fail_policy;
        let FailPolicy::Local {
            share: policy_share,
        } = policy
        else {
            self.report(Invariant::Unavailable, Some(caller), || {
                format!("decided {decision:?} by a local share under the {policy:?} policy")
            });
            return;
        };
        if !matches!(last, Some((DecisionDigest::Unavailable { .. }, _))) {
            self.report(Invariant::Unavailable, Some(caller), || {
                format!("decided {decision:?} by its local share after the decision {last:?}, not an outage")
            });
            return;
        }
        let (limit, micros) = self.scenario.configured(process);
        let own = self.scenario.key_limits.own(process, key);
        let share = fixed_window_spec::local_share(policy_share, own, limit);
        let period_ns = micros.saturating_mul(1_000).max(1);
        let window = at / period_ns;
        let next = (window + 1).saturating_mul(period_ns);
        let weight = self.scenario.callers[caller as usize].weight.permits();
        let Some(n) = weight.filter(|&n| n <= share) else {
            // A drain, or more than the share at once: the share fails closed.
            if !matches!(decision, DecisionDigest::Unavailable { .. }) {
                self.report(Invariant::Unavailable, Some(caller), || {
                    format!("{weight:?} permits of a share of {share} decided {decision:?}, not Unavailable")
                });
            }
            return;
        };
        let counted = self.shares.entry((process, key, window)).or_default();
        let used = *counted;
        // In 64 bits: a share and a weight near `u32::MAX` add up past it.
        let full = u64::from(used) + u64::from(n) > u64::from(share);
        match decision {
            DecisionDigest::FailedOpen { .. } => {
                *counted = counted.saturating_add(n);
                let used = u64::from(used) + u64::from(n);
                if used > u64::from(share) {
                    self.report(Invariant::Unavailable, Some(caller), || {
                        format!("{used} permits granted without the server to key {key} in window {window} of process {process}'s grid, over its share of {share}")
                    });
                }
            }
            DecisionDigest::Rejected {
                retry_after,
                local: true,
            } => {
                if !full {
                    self.report(Invariant::FalseRejection, Some(caller), || {
                        format!("rejected by its local share at {at} with {} of {share} permits free in window {window}", share - used)
                    });
                }
                if retry_after != u128::from(next - at) {
                    self.report(Invariant::Events, Some(caller), || {
                        format!("a local share's retry_after {retry_after} ns at {at}, but its window ends at {next}")
                    });
                }
            }
            DecisionDigest::Wait { until } => {
                // When the wait ends the call asks the server again, as documented: the
                // attempt before it, which timed out or lost its reply, may have counted (even
                // after the wait began, its request still on its way), and the next may count
                // again. The server then counts more than it granted, never less: each such
                // wait allows the call one count more.
                self.calls[caller as usize].share_waits += 1;
                if !full {
                    self.report(Invariant::FalseRejection, Some(caller), || {
                        format!("waits on its local share at {at} with {} of {share} permits free in window {window}", share - used)
                    });
                }
                if until != u128::from(next) || until > u128::from(deadline) {
                    self.report(Invariant::Deadline, Some(caller), || {
                        format!("waits on its local share until {until}, its window ends at {next}, its deadline is {deadline}")
                    });
                }
            }
            other => self.report(Invariant::Unavailable, Some(caller), || {
                format!("{n} permits of a share of {share} decided {other:?} by the local share")
            }),
        }
    }

    /// A crashed process restarts as a new one, with an empty local share (and the peeks it
    /// had queued fail).
    pub(super) fn share_fault(&mut self, t: u64, fault: &FaultRecord) {
        if let &FaultRecord::Crash { process, .. } = fault {
            self.peek_crash(t, process);
            self.shares.retain(|&(p, _, _), _| p != process);
        }
    }
}
