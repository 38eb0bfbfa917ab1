//! What each request did at the server: sent, run by the script, refused; registrations.

use core::num::NonZeroU128;

use fixed_window_redis::ScriptReply;
use fixed_window_spec::Grid;

use super::{Checker, Run};
use crate::oracle::Invariant;
use crate::shared::record::{Purpose, ReplyDigest};

impl Checker<'_> {
    /// A request sent for `caller`'s attempt, or for `process` itself.
    pub(super) fn sent(
        &mut self,
        request: u32,
        caller: Option<u32>,
        process: u16,
        purpose: Purpose,
    ) {
        let info = self.request(request);
        info.caller = caller;
        info.process = process;
        info.purpose = Some(purpose);
        if let Some(caller) = caller {
            self.calls[caller as usize].attempt.push(request);
        } else if purpose == Purpose::Register {
            self.registering[process as usize].push(request);
            self.started_processes[process as usize] = true;
        }
    }

    /// A script run on the server at `server_us`.
    pub(super) fn executed(&mut self, request: u32, server_us: u64, reply: ReplyDigest) {
        let info = &self.requests[request as usize];
        let (caller, process, purpose) = (info.caller, info.process, info.purpose);
        if !matches!(purpose, Some(Purpose::Register | Purpose::Acquire)) {
            return;
        }
        self.checks.count(&[Invariant::Script, Invariant::Events]);
        // The script stores the configuration, with its time (or the fixed origin) as the
        // origin, when absent.
        let own = self.scenario.configured(process);
        let stored = *self.stored.get_or_insert(own);
        self.limits.insert(self.epoch, stored.0);
        let period = NonZeroU128::new(u128::from(stored.1)).unwrap_or(NonZeroU128::MIN);
        let grid = *self.grid.get_or_insert_with(|| {
            Grid::new(
                u128::from(self.scenario.origin.unwrap_or(server_us)),
                period,
            )
        });
        if purpose == Some(Purpose::Register) {
            self.registration_accepted[process as usize] = Some(own == stored);
        }
        if own != stored {
            self.refused(request, caller, server_us, reply);
            return;
        }
        let values = match reply {
            ReplyDigest::Four { values } => values,
            ReplyDigest::Error { .. } => {
                self.report(Invariant::Script, caller, || {
                    format!("request {request}: the script failed with an error")
                });
                return;
            }
            ReplyDigest::Other => {
                self.report(Invariant::Events, caller, || {
                    format!("request {request}: the script answered something it never does")
                });
                return;
            }
        };
        let parsed = ScriptReply::parse(&values);
        let Some(caller) = caller.filter(|_| purpose == Some(Purpose::Acquire)) else {
            self.registration(grid, parsed, server_us);
            return;
        };
        let spec = self.scenario.callers[caller as usize];
        let run = Run {
            request,
            caller,
            key: spec.key,
            server_us,
            grid,
            weight: spec.weight.permits(),
        };
        match parsed {
            Some(ScriptReply::Permitted {
                remaining,
                now,
                window_start,
            }) => {
                self.check_time(caller, now, server_us);
                self.permitted_run(&run, remaining, window_start);
            }
            Some(ScriptReply::Full {
                retry_after,
                now,
                window_start,
            }) => {
                self.check_time(caller, now, server_us);
                self.full_run(&run, retry_after, now, window_start);
            }
            other => self.report(Invariant::Events, Some(caller), || {
                format!("an attempt answered {other:?}")
            }),
        }
    }

    /// A process's registration went through (`accepted`) or was refused: as the server's
    /// answer to its latest registration run says it must.
    pub(super) fn registered(&mut self, process: u16, accepted: bool) {
        self.checks
            .count(&[Invariant::Unavailable, Invariant::Configuration]);
        self.registering[process as usize].clear();
        if accepted {
            self.unregistered[process as usize] = None;
        }
        if self.scenario.processes[process as usize].slow_link() {
            self.report(Invariant::Unavailable, None, || {
                format!("process {process}, whose link is slower than its timeout, got an answer to its registration")
            });
        }
        if self.registration_accepted[process as usize] != Some(accepted) {
            self.report(Invariant::Configuration, None, || {
                if accepted {
                    format!(
                        "process {process} registered, but the server refused its configuration"
                    )
                } else {
                    format!(
                        "process {process} was refused, but the server accepted its configuration"
                    )
                }
            });
        }
    }

    /// A script run by a process configured apart from the stored configuration: the server
    /// must refuse it with the stored one, counting nothing.
    pub(super) fn refused(
        &mut self,
        request: u32,
        caller: Option<u32>,
        server_us: u64,
        reply: ReplyDigest,
    ) {
        self.checks.count(&[Invariant::Configuration]);
        let expected =
            self.grid
                .zip(self.stored)
                .map(|(grid, (limit, period))| ScriptReply::Conflict {
                    period,
                    limit: u64::from(limit),
                    origin: u64::try_from(grid.origin()).unwrap_or(u64::MAX),
                });
        let got = match reply {
            ReplyDigest::Four { values } => ScriptReply::parse(&values),
            _ => None,
        };
        if expected.is_none() || got != expected {
            self.report(Invariant::Configuration, caller, || {
                format!("request {request} of a process configured apart, run at server time {server_us}, answered {got:?}, not the refusal {expected:?}")
            });
        }
    }

    pub(super) fn registration(&mut self, grid: Grid, reply: Option<ScriptReply>, server_us: u64) {
        self.checks.count(&[Invariant::Alignment]);
        let origin = grid.origin();
        match reply {
            Some(ScriptReply::Registered { origin: got, now }) => {
                if u128::from(got) != origin {
                    self.report(Invariant::Alignment, None, || {
                        format!("a registration got origin {got}, not the shared origin {origin}")
                    });
                }
                if now != server_us {
                    self.report(Invariant::Events, None, || {
                        format!("a registration read time {now}, not the server's {server_us}")
                    });
                }
            }
            other => self.report(Invariant::Events, None, || {
                format!("a registration answered {other:?}")
            }),
        }
    }
}
