//! What each request did at the server: sent, run by the script, refused; registrations.

use fixed_window_redis::ScriptReply;
use fixed_window_spec::Grid;

use super::limits::Expect;
use super::{Checker, Run, Stored};
use crate::oracle::Invariant;
use crate::shared::record::{DecisionDigest, SharedRecord};
use crate::shared::record::{Purpose, ReplyDigest};
use crate::shared::replication::wait_ns;
use crate::shared::run::config;

impl Checker<'_> {
    /// The `WAIT` after `request`'s script call answered at `t`, counting `replicas`. Fewer
    /// than the processes ask for must have a real cause: it answered at its timeout, and the
    /// replica's delay outlasts that timeout, or the replica was down meanwhile. Such a
    /// request counts as touched by a fault (its attempt may end `Unavailable`, and it may
    /// have counted).
    pub(super) fn acknowledged(&mut self, record: &SharedRecord) {
        let (
            &SharedRecord::Acknowledged {
                t,
                request,
                replicas,
            },
            Some(replication),
        ) = (record, &self.scenario.replication)
        else {
            return;
        };
        let wanted = replication.replicas;
        let info = self.request(request);
        info.acknowledged = Some(replicas);
        if replicas >= wanted {
            return;
        }
        let (ran_at, process, caller) = (info.ran_at, info.process, info.caller);
        let timeout = config(self.scenario, process as usize).timeout();
        let wait = wait_ns(timeout);
        self.checks.count(&[Invariant::Unavailable]);
        if t == ran_at + wait && replication.may_lack(ran_at, wait) {
            self.request(request).faulted = true;
        } else {
            self.report(Invariant::Unavailable, caller, || {
                format!("request {request}: WAIT counted {replicas} of {wanted} replicas at {t}, with no slow replication nor replica down to explain it")
            });
        }
    }

    /// Whether `decision` reads the reply of `request` as the client must: a `WAIT` that
    /// counted fewer replicas than asked for makes it `Unavailable` (or a fail-open permit),
    /// whatever the script answered.
    pub(super) fn check_acknowledged(
        &mut self,
        caller: u32,
        request: Option<u32>,
        decision: DecisionDigest,
    ) {
        let Some(replication) = &self.scenario.replication else {
            return;
        };
        let wanted = replication.replicas;
        let Some(acknowledged) = request
            .and_then(|r| self.requests.get(r as usize))
            .and_then(|info| info.acknowledged)
        else {
            return;
        };
        self.checks.count(&[Invariant::Events]);
        let failed = matches!(
            decision,
            DecisionDigest::Unavailable { .. } | DecisionDigest::FailedOpen { .. }
        );
        if acknowledged < wanted && !failed {
            self.report(Invariant::Events, Some(caller), || {
                format!("{decision:?} on a reply whose WAIT counted {acknowledged} of the {wanted} replicas asked for")
            });
        }
    }

    /// A request sent for `caller`'s attempt or a change of the limit (`for_what`), or for
    /// `process` itself, carrying a limit and a version of it.
    pub(super) fn sent(
        &mut self,
        request: u32,
        (caller, change): (Option<u32>, Option<u32>),
        process: u16,
        purpose: Purpose,
        carried: (u32, u32),
    ) {
        self.learn(process, carried.1);
        let info = self.request(request);
        info.caller = caller;
        info.process = process;
        info.purpose = Some(purpose);
        info.carried = carried;
        info.change = change;
        // A peek is no attempt of its caller's call, which begins after it.
        if let Some(caller) = caller.filter(|_| purpose == Purpose::Peek) {
            self.peek_sent(caller, request, carried.1);
        } else if let Some(caller) = caller {
            self.calls[caller as usize].attempt.push(request);
        } else if purpose == Purpose::Register {
            self.registering[process as usize].push(request);
            self.started_processes[process as usize] = true;
        }
    }

    /// The server executed a request (a script ran, or it answered `NOSCRIPT`, or loaded
    /// one).
    pub(super) fn executed_record(&mut self, record: &SharedRecord) {
        let &SharedRecord::Executed {
            t,
            request,
            server_us,
            ran_script,
            reply,
        } = record
        else {
            return;
        };
        let info = self.request(request);
        info.ran_at = t;
        // A flushed script cache costs the attempt two more round trips.
        info.faulted |= matches!(reply, ReplyDigest::Error { noscript: true });
        if ran_script {
            info.reply = Some(reply);
            self.executed(t, request, server_us, reply);
        }
    }

    /// A script run on the server at `server_us`.
    pub(super) fn executed(&mut self, t: u64, request: u32, server_us: u64, reply: ReplyDigest) {
        let info = &self.requests[request as usize];
        let (caller, process, purpose) = (info.caller, info.process, info.purpose);
        match purpose {
            Some(Purpose::Peek) => return self.peek_executed(request, server_us, reply),
            Some(Purpose::HandBack) => return self.hand_back_ran(request, server_us, reply),
            _ => {}
        }
        let Some(purpose) = purpose.filter(|p| {
            matches!(
                p,
                Purpose::Register | Purpose::Refresh | Purpose::Acquire | Purpose::Limit
            )
        }) else {
            return;
        };
        self.checks.count(&[Invariant::Script, Invariant::Events]);
        // What the server must do with the configuration it stores (storing it, with its time
        // or the fixed origin as the origin, when absent).
        let expect = self.configure(t, request, purpose, server_us);
        if self.grid.is_none() {
            return;
        }
        let Some(grid) = self.run_grid(request, expect) else {
            return;
        };
        if purpose == Purpose::Register {
            self.registration_accepted[process as usize] =
                Some(!matches!(expect, Expect::Refuse(_)));
        }
        if self.counted_apart((t, request, purpose), expect, reply) {
            return;
        }
        if let Expect::Refuse(stored) = expect {
            self.refused(request, caller, (server_us, stored, grid), reply);
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
            ReplyDigest::Two { .. } | ReplyDigest::Other => {
                self.report(Invariant::Events, caller, || {
                    format!("request {request}: the script answered something it never does")
                });
                return;
            }
        };
        let parsed = ScriptReply::parse(&values);
        // An attempt that the server decided all the same is judged below by the limit in
        // force.
        if let Expect::Changed(stored) = expect
            && (self.changed_reply(request, caller, grid, stored, parsed)
                || purpose != Purpose::Acquire)
        {
            return;
        }
        let Some(caller) = caller.filter(|_| purpose == Purpose::Acquire) else {
            self.registration(grid, parsed, server_us);
            return;
        };
        let spec = self.scenario.callers[caller as usize];
        let in_force = self.limit_in_force(request, spec.key);
        let (limit, proposal) =
            match self.settle_key(request, spec.key, (&grid, server_us), in_force) {
                Ok(settled) => settled,
                Err(conflict) => {
                    let period = self.scenario.configured(process).1;
                    self.key_conflict_reply((request, caller), (&grid, period), conflict, parsed);
                    return;
                }
            };
        let run = Run {
            request,
            caller,
            key: spec.key,
            server_us,
            grid,
            weight: spec.weight.permits(),
            limit,
        };
        self.judge_attempt(t, &run, parsed);
        self.key_decided((request, spec.key), (&grid, server_us), proposal);
    }

    /// Judges the reply `parsed` to the script run `run`, of an attempt decided by the limit
    /// in force for it.
    fn judge_attempt(&mut self, t: u64, run: &Run, parsed: Option<ScriptReply>) {
        let (caller, server_us) = (run.caller, run.server_us);
        match parsed {
            Some(ScriptReply::Permitted {
                remaining,
                now,
                window_start,
            }) => {
                self.check_time(caller, now, server_us);
                self.permitted_run(run, remaining, window_start);
            }
            Some(ScriptReply::Full {
                retry_after,
                now,
                window_start,
            }) => {
                self.check_time(caller, now, server_us);
                self.full_run(run, retry_after, now, window_start);
            }
            Some(ScriptReply::Leased {
                granted,
                now,
                window_start,
            }) => {
                self.check_time(caller, now, server_us);
                self.leased_run(t, run, granted, now, window_start);
            }
            Some(ScriptReply::KeyConflict { limit: written, .. }) => {
                self.checks.count(&[Invariant::Configuration]);
                let (key, limit) = (run.key, run.limit);
                self.report(Invariant::Configuration, Some(caller), || {
                    format!("an attempt deciding key {key} by {limit}, the limit its window is counted by (or none yet), was refused as a conflict with {written}")
                });
            }
            other => self.report(Invariant::Events, Some(caller), || {
                format!("an attempt answered {other:?}, carrying the version of the limit in force")
            }),
        }
    }

    /// The limit an attempt of `request` on `key` is decided under: the stored one, or on a
    /// cluster the one its key's counter records after the run's check of it (the request's
    /// own where the counter holds none). A run that counts by another is judged by this one.
    fn limit_in_force(&self, request: u32, key: u16) -> u32 {
        if self.scenario.cluster.is_none() {
            return self.limit();
        }
        self.settings[key as usize].map_or(self.requests[request as usize].carried.0, |s| s.limit)
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

    /// A script run by a process configured apart from the settings `stored` (the stored
    /// configuration's, or a counter's on a cluster), run at server time `server_us`: the
    /// server must refuse it with them, counting nothing.
    pub(super) fn refused(
        &mut self,
        request: u32,
        caller: Option<u32>,
        (server_us, stored, grid): (u64, Stored, Grid),
        reply: ReplyDigest,
    ) {
        self.checks.count(&[Invariant::Configuration]);
        let expected = Some(ScriptReply::Conflict {
            period: stored.period,
            limit: u64::from(stored.limit),
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
