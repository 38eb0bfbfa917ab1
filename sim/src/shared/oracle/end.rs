//! What is judged once the trace has ended: the keyspace the server kept, failed attempts
//! against the faults that explain them, and each window's permits against its ledger.

use std::collections::BTreeMap;

use fixed_window_redis::EXPIRY_MARGIN_MILLIS;

use super::{Checker, LedgerOp, MOST_VIOLATIONS};
use crate::oracle::{Invariant, Violation};
use crate::shared::run::SharedRun;

impl Checker<'_> {
    pub(super) fn keyspace(&mut self, keys: &[(Box<str>, Option<u64>)]) {
        self.checks.count(&[Invariant::Expiry]);
        for (key, expires_at_ms) in keys {
            let Some(&index) = self.counter_keys.get(&**key) else {
                continue;
            };
            let Some(when) = *expires_at_ms else {
                self.report(Invariant::Expiry, None, || {
                    format!("counter {key} never expires")
                });
                continue;
            };
            let (Some(count), Some(grid)) = (self.counts[index as usize], self.key_grid(index))
            else {
                continue;
            };
            if let Some(end) = grid.end(count.index()) {
                let latest = end.div_ceil(1_000) + u128::from(EXPIRY_MARGIN_MILLIS);
                if u128::from(when) > latest {
                    self.report(Invariant::Expiry, None, || {
                        format!("counter {key} lives until millisecond {when}, past its window's end plus the margin ({latest})")
                    });
                }
            }
        }
    }

    pub(super) fn end(&mut self, run: &SharedRun) {
        self.record = run.records.len();
        self.checks.count(&[
            Invariant::WindowLimit,
            Invariant::Unavailable,
            Invariant::Liveness,
        ]);
        self.check_under_admission();
        // Each window's permits granted to callers (a share's as they were spent), against the
        // limit in force at the last of them plus what was forgotten.
        let ledgers = std::mem::take(&mut self.ledgers);
        // The largest limit any grant of each window was decided under, for the failover bound.
        let limits: BTreeMap<(u32, u16, u128), u32> = ledgers
            .iter()
            .map(|(&window, ops)| {
                let most = ops.iter().fold(0, |most, op| match *op {
                    LedgerOp::Grant(_, limit) => most.max(limit),
                    LedgerOp::Forget(_) => most,
                });
                (window, most)
            })
            .collect();
        for ((epoch, key, window), ops) in ledgers {
            let (mut granted, mut forgotten) = (0_u64, 0_u64);
            for op in ops {
                match op {
                    LedgerOp::Grant(request, limit) if self.is_granted(request) => {
                        granted += u64::from(self.units(request));
                        if granted > u64::from(limit) + forgotten {
                            self.report(Invariant::WindowLimit, None, || {
                                format!("{granted} permits granted in window {window} of key {key} (epoch {epoch}), more than the limit {limit} in force at the last of them plus the {forgotten} the server forgot")
                            });
                        }
                    }
                    LedgerOp::Forget(request) if self.is_granted(request) => {
                        forgotten += u64::from(self.units(request));
                    }
                    LedgerOp::Grant(..) | LedgerOp::Forget(_) => {}
                }
            }
        }
        self.check_failover_bound(run, &limits);
        for (caller, requests, open, record) in std::mem::take(&mut self.failed) {
            let explained = requests.iter().any(|&r| {
                self.requests
                    .get(r as usize)
                    .is_some_and(|info| info.faulted)
            });
            if !explained {
                let violation = Violation {
                    invariant: Invariant::Unavailable,
                    caller: Some(caller),
                    record,
                    detail: format!(
                        "{} with no fault on its requests {requests:?}",
                        if open { "failed open" } else { "unavailable" }
                    ),
                };
                if self.violations.len() < MOST_VIOLATIONS {
                    self.violations.push(violation);
                }
            }
        }
        self.check_failed_changes();
        self.check_failed_peeks();
        if run.out_of_budget {
            self.report(Invariant::Liveness, None, || {
                "the run used up its event budget".to_owned()
            });
        }
        // A process made with `connect` refused at registration never connects, and one
        // rolled out once a configuration is stored never starts if none is: their callers
        // have no limiter to call. One made with `start` serves, refused or not.
        let never: Vec<usize> = (0..self.calls.len())
            .filter(|&c| !self.calls[c].started || !self.calls[c].finished)
            .filter(|&c| {
                let process = self.scenario.callers[c].process as usize;
                let serving = self.started_processes[process]
                    && (!self.refused_processes[process]
                        || self.scenario.processes[process].started);
                self.calls[c].started || serving
            })
            .collect();
        if !never.is_empty() && !run.out_of_budget {
            self.report(Invariant::Liveness, None, || {
                format!(
                    "{} calls never began or never ended (first: caller {})",
                    never.len(),
                    never[0]
                )
            });
        }
    }
}
