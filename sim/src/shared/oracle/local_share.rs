//! The bound of [`FailPolicy::Local`]: each attempt the server could not decide, decided again
//! by its process's local share, judged against the share's own fixed window on the process's
//! grid (its clock's instant 0 its origin, the period its configuration's), each key's share
//! by the spec's rule ([`fixed_window_spec::local_share`]: the policy's share, scaled to the
//! key's own limit where the process gives it one).
//!
//! Where keys' limits change live, a key's own limit in a process is the one in force at the
//! version of the limit the process held when it decided (recorded with the decision): its
//! live limit at that version in the model's history of the changes the script stored, else
//! its configured one. That version is never newer than the latest stored, nor older than
//! one the process has already sent an attempt under. The share changes with it, within a
//! window of the process's grid too: the permits the window granted locally count against the
//! new share, so a permit must fit in the share in force when it is granted, and a rejection
//! or a wait is right only if it does not.

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
            version,
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
        let share = self.judged_share(caller, (process, key), version, (policy_share, limit));
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

    /// The local share of `key` in `process` deciding `caller`'s attempt at version `version`
    /// of the limit, under a policy of `policy_share` in a limiter configured with `limit`:
    /// scaled to the key's live limit at that version, else its configured one. The version
    /// must be neither newer than the latest stored nor older than one the process has sent
    /// an attempt under.
    fn judged_share(
        &mut self,
        caller: u32,
        (process, key): (u16, u16),
        version: u32,
        (policy_share, limit): (u32, u32),
    ) -> u32 {
        // Stored by a live change or by a change of the limiter's limit.
        let latest = self
            .live
            .last()
            .map_or(0, |&(stored, _)| stored)
            .max(self.stored.map_or(0, |stored| stored.version));
        let learnt = self.learnt[process as usize];
        if !self.scenario.key_live.is_empty() && (version > latest || version < learnt) {
            self.report(Invariant::Configuration, Some(caller), || {
                format!("decided by its local share at version {version} of the limit, the latest stored being {latest}, the process having sent attempts under {learnt}")
            });
        }
        let own = self
            .live_at(version, key)
            .or_else(|| self.scenario.key_limits.own(process, key));
        fixed_window_spec::local_share(policy_share, own, limit)
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
