//! Leased shares as the oracle judges them: a lease call is the server's operation (it counts
//! the whole share in the key's window, of the size the adaptive rule gives), and the permits
//! a process grants from the share without a round trip draw on it. Each such permit comes out
//! of the share its process holds on the key, is granted before the window's real end on the
//! server's clock less the drift allowance, and never after the process learnt of a newer
//! limit. The permits granted from a share count in its window's ledger, so the upper bound
//! covers them; and where the stated conditions hold, each window that refused a call had no
//! more room left unspent than [`Rule::under_admission_bound`] allows.
//!
//! Every rule here is the spec crate's ([`fixed_window_spec::Lease`], [`spend_deadline`]): the
//! limiter's own [`Lease`] only names the configuration a process was given.

use fixed_window_redis::{Lease, ScriptReply};
use fixed_window_spec::{Lease as Rule, Leasing, spend_deadline};

use super::{Checker, LedgerOp, Run};
use crate::oracle::Invariant;
use crate::shared::record::DecisionDigest;

/// A lease call the server granted, as the oracle follows it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Leased {
    pub process: u16,
    pub key: u16,
    /// The permits counted for it.
    pub granted: u32,
    /// The caller's permits out of it.
    pub own: u32,
    /// Permits granted from it without a round trip.
    pub spent: u32,
    /// Left to spend, as the process said when its caller was answered.
    pub left: u32,
    /// Virtual time the script ran.
    pub ran_at: u64,
    /// The script's reading and its window's end, on the server's clock, in nanoseconds
    /// (whole microseconds).
    pub window: (u128, u128),
    /// The version of the limit the call carried.
    pub version: u32,
}

impl Checker<'_> {
    /// The script leased a share of `granted` for `run` (a call for `run.weight` permits) at
    /// its reading `now`, in the window starting at `window_start`.
    pub(super) fn leased_run(
        &mut self,
        t: u64,
        run: &Run,
        granted: u32,
        now: u64,
        window_start: u64,
    ) {
        let Run {
            request,
            caller,
            key,
            server_us,
            grid,
            weight,
            limit,
        } = *run;
        self.checks.count(&[
            Invariant::WindowLimit,
            Invariant::Alignment,
            Invariant::Events,
        ]);
        let process = self.process_of(caller);
        let Some(lease) = self.scenario.processes[process as usize].lease else {
            self.report(Invariant::Events, Some(caller), || {
                format!("request {request} leased a share for a process that never leases")
            });
            return;
        };
        let n = weight.unwrap_or(0);
        let count = self.counts[key as usize].unwrap_or_default();
        let at = u128::from(server_us);
        let (index, used) = count.at(&grid, at);
        match rule(lease).decide(&count, &grid, limit, at, n) {
            Leasing::Share {
                share: expected, ..
            } => {
                if granted != expected {
                    self.report(Invariant::WindowLimit, Some(caller), || {
                        format!("a lease for {n} in window {index} of key {key} ({used} of {limit} used) granted {granted}, the rule gives {expected}")
                    });
                }
            }
            Leasing::Exact(_) => self.report(Invariant::WindowLimit, Some(caller), || {
                format!("leased {granted} for {n} at server time {server_us} although window {index} of key {key} held {used} of {limit}")
            }),
        }
        self.check_window_start(caller, window_start, grid.start(index));
        // The server counted the whole share, whatever the model expected.
        self.count_on_server((caller, request), key, (count, index), granted, limit);
        let end = grid.end(index).unwrap_or(u128::MAX);
        self.leases.insert(
            request,
            Leased {
                process,
                key,
                granted,
                own: n,
                spent: 0,
                left: 0,
                ran_at: t,
                window: (
                    u128::from(now).saturating_mul(1_000),
                    end.saturating_mul(1_000),
                ),
                version: self.requests[request as usize].carried.1,
            },
        );
    }

    /// A `decision` of `caller`'s: a permit decided without a round trip (`request`
    /// `None`) or on the `reply` to a lease call: judged here (true), or an exact one.
    pub(super) fn share_decision(
        &mut self,
        t: u64,
        caller: u32,
        (request, decision): (Option<u32>, DecisionDigest),
        reply: Option<ScriptReply>,
    ) -> bool {
        let DecisionDigest::Permitted { remaining } = decision else {
            return false;
        };
        match (request, reply) {
            (None, _) => self.local_permit(t, caller, remaining),
            (Some(request), Some(ScriptReply::Leased { .. })) => {
                self.share_installed(caller, request, remaining);
            }
            _ => return false,
        }
        true
    }

    /// `caller` was permitted with `remaining` on the reply to lease call `request`: its
    /// process now holds that much of the share.
    pub(super) fn share_installed(&mut self, caller: u32, request: u32, remaining: u32) {
        let Some(lease) = self.leases.get_mut(&request) else {
            return;
        };
        let most = lease.granted.saturating_sub(lease.own);
        lease.left = remaining;
        let (process, key) = (lease.process, lease.key);
        if remaining > most {
            self.report(Invariant::WindowLimit, Some(caller), || {
                format!("a share of {most} more (request {request}) left {remaining} to spend")
            });
        }
        self.held.insert((process, key), request);
    }

    /// `caller` was permitted with `remaining` at virtual time `t` without a round trip: the
    /// permits come out of the share its process holds on its key, before that share's
    /// deadline, under the version of the limit it was leased under.
    pub(super) fn local_permit(&mut self, t: u64, caller: u32, remaining: u32) {
        self.checks
            .count(&[Invariant::WindowLimit, Invariant::Events]);
        let (process, key) = (self.process_of(caller), self.key_of(caller));
        let n = self.scenario.callers[caller as usize]
            .weight
            .permits()
            .unwrap_or(0);
        let held = self.held.get(&(process, key)).copied();
        let Some(request) = held else {
            self.report(Invariant::Events, Some(caller), || {
                format!("permitted {n} without a round trip and without a share of key {key}")
            });
            return;
        };
        let learnt = self.learnt[process as usize];
        let stepped = self.last_step;
        let ppm = i128::from(self.scenario.processes[process as usize].clock.ppm);
        let Some(lease) = self.leases.get_mut(&request) else {
            return;
        };
        let (left, ran_at, (server_now, window_end), version) =
            (lease.left, lease.ran_at, lease.window, lease.version);
        lease.spent = lease.spent.saturating_add(n);
        lease.left = left.saturating_sub(n);
        if n == 0 || left < n || remaining != left - n {
            self.report(Invariant::WindowLimit, Some(caller), || {
                format!("permitted {n} leaving {remaining} from a share of key {key} (request {request}) holding {left}")
            });
        }
        if learnt > version {
            self.report(Invariant::WindowLimit, Some(caller), || {
                format!("permitted from a share leased under version {version} of the limit, after the process learnt version {learnt}")
            });
        }
        // The spec's deadline measured from the script's run (at or after the send), on the
        // server's clock: the window's real end less the allowance; then on a clock running
        // at the process's rate (a nanosecond of slack for each rounded reading). One the
        // local clock cannot name is never reached: no permit may come from that share. A
        // step of the server's clock since moved the end: not judged.
        if stepped.is_none_or(|step| step < ran_at) {
            let allowed = spend_deadline(0, server_now, window_end).map_or(0, |by| {
                by * 1_000_000 / (1_000_000 + ppm).unsigned_abs() + 2
            });
            let elapsed = u128::from(t.saturating_sub(ran_at));
            if elapsed >= allowed {
                let left_ns = window_end.saturating_sub(server_now);
                self.report(Invariant::WindowLimit, Some(caller), || {
                    format!("permitted from a share (request {request}) {elapsed} ns after the script leased it, when the window had {left_ns} ns left: past its end less the allowance ({allowed} ns)")
                });
            }
        }
    }

    /// The permits a lease call granted: its caller's and those spent from its share.
    pub(super) fn lease_units(&self, request: u32) -> Option<u32> {
        self.leases
            .get(&request)
            .map(|lease| lease.own.saturating_add(lease.spent))
    }

    /// A call was refused in `key`'s current window at server time `server_us`.
    pub(super) fn refusal(&mut self, key: u16, server_us: u128) {
        if let Some(grid) = self.key_grid(key) {
            self.refused_windows
                .insert((self.epoch, key, grid.index_of(server_us)));
        }
    }

    /// Whether the under-admission bound covers this run: leasing processes, calls of one
    /// permit, and nothing that drops a share early (no fault, change of the limiter's limit
    /// or of a key's limit live, process configured apart, conflict or failed call).
    fn under_admission_judged(&self) -> bool {
        let scenario = self.scenario;
        scenario.processes.iter().any(|p| p.lease.is_some())
            && scenario.faults.healthy()
            && scenario.limit_changes.is_empty()
            && scenario.key_live.is_empty()
            && scenario.processes.iter().all(|p| p.misconfigured.is_none())
            && scenario.key_limits.apart.is_none()
            && scenario
                .callers
                .iter()
                .all(|c| c.weight.permits() == Some(1))
            && !self.share_dropped
    }

    /// Each window that refused a call had at most the stated permits of room left unspent:
    /// the sum of [`Rule::under_admission_bound`] over the leasing processes.
    pub(super) fn check_under_admission(&mut self) {
        if !self.under_admission_judged() {
            return;
        }
        let refused: Vec<_> = self.refused_windows.iter().copied().collect();
        for window in refused {
            // Every process agrees on each key's limit: its own, or the limiter's.
            let limit = self
                .scenario
                .key_limits
                .agreed(window.1, self.scenario.limit);
            let bound: u64 = self
                .scenario
                .processes
                .iter()
                .filter_map(|p| p.lease)
                .map(|lease: Lease| rule(lease).under_admission_bound(1, limit))
                .sum();
            self.checks.count(&[Invariant::FalseRejection]);
            let granted: u64 = self.ledgers.get(&window).map_or(0, |ops| {
                ops.iter()
                    .map(|op| match *op {
                        LedgerOp::Grant(request, _) if self.is_granted(request) => {
                            u64::from(self.units(request))
                        }
                        _ => 0,
                    })
                    .sum()
            });
            let room = u64::from(limit).saturating_sub(granted);
            if room > bound {
                let (epoch, key, index) = window;
                self.report(Invariant::FalseRejection, None, || {
                    format!("window {index} of key {key} (epoch {epoch}) refused a call with {room} of {limit} permits never spent, above the bound {bound}")
                });
            }
        }
    }
}

/// The spec's rule for shares configured as `lease`.
fn rule(lease: Lease) -> Rule {
    Rule::checked(lease.max_share(), lease.divisor())
        .unwrap_or_else(|| unreachable!("a lease's largest share and divisor are at least 1"))
}
