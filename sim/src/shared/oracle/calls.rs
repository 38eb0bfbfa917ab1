//! Each call judged by what its process saw: its decisions against the script's replies, its
//! local memory of full windows, its outcome against its deadline and the faults that touched it.

use fixed_window_redis::{FailPolicy, ScriptReply};

use super::{Checker, Remembered};
use crate::oracle::Invariant;
use crate::shared::record::{DecisionDigest, EventDigest, ReplyDigest, SharedOutcome};
use crate::shared::scenario::Weight;

/// What a process answered from its memory of full windows, without a round trip.
#[derive(Debug, Clone, Copy)]
pub(super) enum LocalAnswer {
    /// A wait for the window's end.
    Wait,
    /// A rejection, with its `retry_after` (nanoseconds).
    Rejection(u128),
    /// A peek's answer of none left, with its `resets_in` (nanoseconds).
    Peek(u128),
}

impl Checker<'_> {
    pub(super) fn process_of(&self, caller: u32) -> u16 {
        self.scenario.callers[caller as usize].process
    }

    pub(super) fn key_of(&self, caller: u32) -> u16 {
        self.scenario.callers[caller as usize].key
    }

    /// A decision judged by rules of its own: a refused started process's, a local share's,
    /// or one on a refusal of the configuration. Whether it was.
    fn decided_apart(
        &mut self,
        t: u64,
        caller: u32,
        (request, decision): (Option<u32>, DecisionDigest),
        reply: Option<ScriptReply>,
    ) -> bool {
        if self.decided_when_refused(caller, request, decision)
            || self.share_decision(t, caller, (request, decision), reply)
        {
            return true;
        }
        let refusal = matches!(
            reply,
            Some(ScriptReply::Conflict { .. } | ScriptReply::KeyConflict { .. })
        );
        if refusal || decision == DecisionDigest::Conflict {
            self.refused_decision(caller, decision, refusal);
            return true;
        }
        false
    }

    pub(super) fn decided(
        &mut self,
        t: u64,
        caller: u32,
        local: u64,
        at: u64,
        request: Option<u32>,
        decision: DecisionDigest,
    ) {
        self.check_acknowledged(caller, request, decision);
        let attempt = std::mem::take(&mut self.calls[caller as usize].attempt);
        let deadline = self.calls[caller as usize].deadline;
        self.calls[caller as usize].last = Some((decision, request));
        let (process, key) = (self.process_of(caller), self.key_of(caller));
        let reply = self.script_reply(request);
        if self.decided_apart(t, caller, (request, decision), reply) {
            return;
        }
        self.checks.count(&[
            Invariant::Events,
            Invariant::FalseRejection,
            Invariant::Deadline,
        ]);
        match (decision, request) {
            (DecisionDigest::Permitted { remaining }, Some(request)) => {
                if !matches!(reply, Some(ScriptReply::Permitted { remaining: r, .. }) if r == remaining)
                {
                    self.report(Invariant::Events, Some(caller), || {
                        format!("permitted with {remaining} remaining on the reply {reply:?} of request {request}")
                    });
                }
                if remaining == 0 {
                    self.remember(process, key, request, local, at);
                }
            }
            (
                DecisionDigest::Rejected {
                    retry_after,
                    local: false,
                }
                | DecisionDigest::Wait { until: retry_after },
                Some(request),
            ) => {
                let Some(ScriptReply::Full {
                    retry_after: server,
                    ..
                }) = reply
                else {
                    self.report(Invariant::Events, Some(caller), || {
                        format!("rejected or waiting on the reply {reply:?} of request {request}")
                    });
                    return;
                };
                self.remember_full(caller, request, local, at);
                let server_ns = u128::from(server) * 1_000;
                let opens_by = u128::from(local) + server_ns;
                if let DecisionDigest::Rejected { .. } = decision {
                    // On a coarse clock the limiter adds its tick: the window opens by then
                    // although the reading of the reply's arrival may be a tick behind.
                    let server_ns = server_ns + self.resolution_ns(process);
                    if retry_after != server_ns {
                        self.report(Invariant::Events, Some(caller), || {
                            format!("rejected with retry_after {retry_after} ns, the server said {server_ns}")
                        });
                    }
                    if opens_by <= u128::from(deadline) && at < deadline {
                        self.report(Invariant::FalseRejection, Some(caller), || {
                            format!("rejected at {at} although the window opens by {opens_by}, before its deadline {deadline}")
                        });
                    }
                } else {
                    let until = retry_after;
                    if until > u128::from(deadline) {
                        self.report(Invariant::Deadline, Some(caller), || {
                            format!("waits until {until}, past its deadline {deadline}")
                        });
                    }
                    if opens_by > u128::from(deadline) {
                        self.report(Invariant::Deadline, Some(caller), || {
                            format!("waits although the window opens at {opens_by}, after its deadline {deadline}")
                        });
                    }
                }
            }
            (
                DecisionDigest::Rejected {
                    retry_after,
                    local: true,
                }
                | DecisionDigest::Wait { until: retry_after },
                None,
            ) => {
                let is_wait = matches!(decision, DecisionDigest::Wait { .. });
                self.decided_locally(t, caller, is_wait, retry_after);
            }
            (DecisionDigest::FailedOpen { .. } | DecisionDigest::Unavailable { .. }, _) => {
                self.failed_decision(caller, decision, attempt);
            }
            (DecisionDigest::LimitChanged { limit }, Some(request)) => {
                self.told_changed(caller, limit, request, reply);
            }
            // Refused before sending: the call's weight is above the limit its process holds.
            (DecisionDigest::TooMany { limit }, None) => self.above_lowered_limit(caller, limit),
            (other, request) => self.report(Invariant::Events, Some(caller), || {
                format!("decided {other:?} (request {request:?})")
            }),
        }
    }

    /// A rejection (`retry_after`) or a wait (until `retry_after`) decided without a round
    /// trip at virtual time `t`.
    fn decided_locally(&mut self, t: u64, caller: u32, is_wait: bool, retry_after: u128) {
        let server_us = self.server_us(t);
        self.refusal(self.key_of(caller), server_us);
        let deadline = self.calls[caller as usize].deadline;
        if is_wait && retry_after > u128::from(deadline) {
            self.report(Invariant::Deadline, Some(caller), || {
                format!("waits until {retry_after}, past its deadline {deadline}")
            });
        }
        let answer = if is_wait {
            LocalAnswer::Wait
        } else {
            LocalAnswer::Rejection(retry_after)
        };
        self.local_decision(t, caller, answer);
    }

    /// Told of a newer limit by the reply to `request`: the process adopts it (or a newer one
    /// it learnt meanwhile) and makes the attempt again.
    fn told_changed(&mut self, caller: u32, limit: u32, request: u32, reply: Option<ScriptReply>) {
        // A share may have been dropped early.
        self.share_dropped = true;
        self.calls[caller as usize].changes += 1;
        // A process reading live limits adopts the version only with them, read after.
        if let Some(ScriptReply::Changed { version, .. }) = reply
            && self.scenario.key_live.is_empty()
        {
            self.learn(self.process_of(caller), version);
        }
        let told = matches!(reply, Some(ScriptReply::Changed { .. }));
        if !told || !self.changed_limits.contains(&limit) {
            self.report(Invariant::Events, Some(caller), || {
                format!("decided the limit changed to {limit} on the reply {reply:?} of request {request}")
            });
        }
    }

    /// Whether `caller`, of `process`, ending `TooMany` or not is right: `TooMany` exactly when
    /// it asks more than its limit, which, once the limit has changed, is whichever the process
    /// had learnt: one of those stored, or the one it was configured with.
    fn too_many_consistent(&self, caller: u32, process: u16, outcome: SharedOutcome) -> bool {
        let spec = self.scenario.callers[caller as usize];
        let (weight, limit) = (spec.weight, self.scenario.key_limit(process, spec.key));
        let refused = outcome == SharedOutcome::TooMany;
        // A key's live limits, where they change, are any the process may hold.
        let live = self
            .scenario
            .key_live
            .iter()
            .filter(|c| c.key == spec.key)
            .filter_map(|c| c.limit);
        match weight {
            Weight::Units(n) if live.clone().any(|l| (n > l) == refused) => true,
            Weight::Units(n) if !self.changed_limits.is_empty() => {
                (n > limit) == refused || self.changed_limits.iter().any(|&l| (n > l) == refused)
            }
            Weight::Units(n) => (n > limit) == refused,
            Weight::One | Weight::Rest => !refused,
        }
    }

    /// `Unavailable` or a fail-open permit, decided after sending `attempt`: it must be the
    /// process's policy, and a fault on those requests must explain it, checked when the
    /// trace has ended.
    pub(super) fn failed_decision(
        &mut self,
        caller: u32,
        decision: DecisionDigest,
        attempt: Vec<u32>,
    ) {
        // A share may have been dropped early.
        self.share_dropped = true;
        self.checks.count(&[Invariant::Unavailable]);
        let process = self.process_of(caller);
        let policy = self.scenario.processes[process as usize].fail_policy;
        let open = matches!(decision, DecisionDigest::FailedOpen { .. });
        if open != (policy == FailPolicy::Open) {
            self.report(Invariant::Unavailable, Some(caller), || {
                format!("{decision:?} under the {policy:?} policy")
            });
        }
        // Answered without a round trip by a process that has no limiter: explained by what
        // made its registration fail.
        let explaining = match &self.unregistered[process as usize] {
            Some(registration) if attempt.is_empty() => registration.clone(),
            _ => attempt,
        };
        self.failed.push((caller, explaining, open, self.record));
    }

    /// The script's reply to `request`, if it ran and answered as the script does.
    pub(super) fn script_reply(&self, request: Option<u32>) -> Option<ScriptReply> {
        match self.requests.get(request? as usize)?.reply? {
            ReplyDigest::Four { values } => ScriptReply::parse(&values),
            _ => None,
        }
    }

    /// A decision on a refusal, or a refusal decided: only the one on the other.
    pub(super) fn refused_decision(
        &mut self,
        caller: u32,
        decision: DecisionDigest,
        refusal: bool,
    ) {
        // A share may have been dropped early.
        self.share_dropped = true;
        self.checks.count(&[Invariant::Configuration]);
        if refusal != (decision == DecisionDigest::Conflict) {
            self.report(Invariant::Configuration, Some(caller), || {
                if refusal {
                    format!(
                        "the server refused the configuration, but the call decided {decision:?}"
                    )
                } else {
                    "the call decided a configuration error the server never answered".to_owned()
                }
            });
        }
    }

    /// The memory of a window `request` found full for `caller`: none if the caller asked
    /// several permits, since the window may hold fewer.
    pub(super) fn remember_full(&mut self, caller: u32, request: u32, sent: u64, received: u64) {
        let spec = self.scenario.callers[caller as usize];
        if spec.weight.permits().is_none_or(|n| n <= 1) {
            self.remember(spec.process, spec.key, request, sent, received);
        }
    }

    pub(super) fn remember(
        &mut self,
        process: u16,
        key: u16,
        request: u32,
        sent: u64,
        received: u64,
    ) {
        let (ran_at, (limit, version)) = self
            .requests
            .get(request as usize)
            .map_or((0, (0, 0)), |r| (r.ran_at, r.carried));
        // A reply under a limit the process has since replaced says nothing of the window
        // under the new one: the process does not remember it.
        if version < self.learnt[process as usize] {
            return;
        }
        self.remembered.insert(
            (process, key),
            Remembered {
                ran_at,
                sent,
                received,
                limit,
                version,
            },
        );
    }

    /// `process` holds version `version` of the limit (or a newer one).
    pub(super) fn learn(&mut self, process: u16, version: u32) {
        if let Some(learnt) = self.learnt.get_mut(process as usize) {
            *learnt = (*learnt).max(version);
        }
    }

    /// A decision or a peek's answer from the local memory at virtual time `t`: the key's
    /// window must be full on the server then, unless the documentation allows a late one,
    /// and a rejection's `retry_after` or a peek's `resets_in` the time to its end.
    pub(super) fn local_decision(&mut self, t: u64, caller: u32, answer: LocalAnswer) {
        self.checks
            .count(&[Invariant::Events, Invariant::FalseRejection]);
        let (process, key) = (self.process_of(caller), self.key_of(caller));
        let Some(source) = self.remembered.get(&(process, key)).copied() else {
            self.report(Invariant::Events, Some(caller), || {
                "decided locally with no full window remembered".to_owned()
            });
            return;
        };
        // Learning a change of the limit forgets every window remembered full: under a raised
        // limit it may have room.
        let learnt = self.learnt[process as usize];
        if source.version < learnt {
            let limit = self.limit();
            let invariant = if limit > source.limit {
                Invariant::FalseRejection
            } else {
                Invariant::Events
            };
            self.report(invariant, Some(caller), || {
                format!("decided locally that key {key} is full from a reply under version {} of the limit ({}), after the process learnt version {learnt} (the limit is {limit})", source.version, source.limit)
            });
            return;
        }
        // A raise of the limit since the reply it remembers may have made room, and so may a
        // hand-back on the key: the process learns it from its next round trip.
        if self
            .last_excuse
            .max(self.last_raise)
            .max(self.last_hand_back(key))
            .is_some_and(|excuse| excuse >= source.ran_at)
        {
            return;
        }
        let Some(grid) = self.key_grid(key) else {
            return;
        };
        let now = self.server_us(t);
        let count = self.counts[key as usize].unwrap_or_default();
        let (index, used) = count.at(&grid, now);
        // On a cluster, the limit its counter was last counted under.
        let limit = self.settings[key as usize].map_or_else(|| self.limit(), |s| s.limit);
        let limit = self.full_at((process, key), index, limit);
        if used < limit {
            self.report(Invariant::FalseRejection, Some(caller), || {
                format!("decided locally at server time {now} that key {key} is full, but window {index} has {} of {limit} permits free", limit - used)
            });
            return;
        }
        let (retry_after, what) = match answer {
            LocalAnswer::Wait => return,
            LocalAnswer::Rejection(retry_after) => (retry_after, "a local rejection's retry_after"),
            LocalAnswer::Peek(resets_in) => (resets_in, "a local peek's resets_in"),
        };
        let Some(end) = grid.end(index) else {
            return;
        };
        if self.last_step.is_some_and(|step| step >= source.ran_at) {
            return;
        }
        // The wait to the window's end, as the process's clock measures it, with the
        // rounding of server microseconds and the process's rate error.
        let remaining = (end - now) * 1_000;
        let ppm = u128::from(
            self.scenario.processes[process as usize]
                .clock
                .ppm
                .unsigned_abs(),
        );
        let elapsed = u128::from(t.saturating_sub(source.ran_at));
        let slack = (remaining + elapsed) * ppm / 1_000_000 + 2_000;
        let round_trip = u128::from(source.received.saturating_sub(source.sent));
        // On a coarse clock the limiter adds its tick to a retry, and two readings each up to a
        // tick behind (the reply's arrival against the decision's time, and now) may lengthen
        // it by up to a tick each.
        let coarse = self.resolution_ns(process)
            + 2 * u128::from(self.scenario.processes[process as usize].clock.tick - 1);
        if retry_after + slack < remaining || retry_after > remaining + round_trip + slack + coarse
        {
            self.report(Invariant::Events, Some(caller), || {
                format!("{what} {retry_after} ns, but the window ends in {remaining} ns (round trip {round_trip} ns)")
            });
        }
    }

    /// The resolution `process`'s limiter is configured with, in nanoseconds (zero for a
    /// clock that reads exact nanoseconds).
    fn resolution_ns(&self, process: u16) -> u128 {
        self.scenario.processes[process as usize]
            .clock
            .resolution()
            .as_nanos()
    }

    /// `caller` sleeps until its reading `until`: as its last decision's wait planned.
    pub(super) fn slept(&mut self, caller: u32, until: u64) {
        self.checks.count(&[Invariant::Events, Invariant::Deadline]);
        let call = &self.calls[caller as usize];
        let deadline = call.deadline;
        if !matches!(call.last, Some((DecisionDigest::Wait { until: planned }, _)) if planned == u128::from(until))
        {
            self.report(Invariant::Events, Some(caller), || {
                format!("sleeps until {until} without a wait decided for then")
            });
        }
        if until > deadline {
            self.report(Invariant::Deadline, Some(caller), || {
                format!("sleeps until {until}, past its deadline {deadline} (local)")
            });
        }
    }

    pub(super) fn finish(
        &mut self,
        caller: u32,
        local: u64,
        outcome: SharedOutcome,
        event: EventDigest,
    ) {
        self.checks
            .count(&[Invariant::Deadline, Invariant::Liveness, Invariant::Events]);
        let process = self.process_of(caller);
        let call = &mut self.calls[caller as usize];
        call.finished = true;
        let last = call.last;
        if !matches!(outcome, SharedOutcome::Crashed | SharedOutcome::Unfinished) {
            self.ended_in_time(caller, local);
        }
        let weight = self.scenario.callers[caller as usize].weight;
        if !self.too_many_consistent(caller, process, outcome) {
            let limit = self.scenario.key_limit(process, self.key_of(caller));
            self.report(Invariant::Events, Some(caller), || {
                format!("{weight:?} of a limit of {limit} ended {outcome:?}")
            });
        }
        let drain = weight == Weight::Rest;
        let consistent = match (outcome, event, last) {
            (
                SharedOutcome::Drained,
                EventDigest::None,
                Some((
                    DecisionDigest::Permitted { .. }
                    | DecisionDigest::Rejected { .. }
                    | DecisionDigest::Wait { .. },
                    _,
                )),
            )
            | (
                SharedOutcome::Unavailable,
                EventDigest::None,
                Some((DecisionDigest::Unavailable { .. } | DecisionDigest::FailedOpen { .. }, _)),
            ) => drain,
            (
                SharedOutcome::Permitted { remaining: Some(r) },
                EventDigest::Permitted { remaining: e },
                Some((DecisionDigest::Permitted { remaining: d }, request)),
            ) => {
                if let Some(request) = request {
                    self.mark_granted(request);
                }
                r == e && r == d
            }
            (
                SharedOutcome::Permitted { remaining: None },
                EventDigest::Unavailable { failed_open: true },
                Some((DecisionDigest::FailedOpen { .. }, _)),
            )
            | (
                SharedOutcome::Unavailable,
                EventDigest::Unavailable { failed_open: false },
                Some((DecisionDigest::Unavailable { .. }, _)),
            )
            | (SharedOutcome::Conflict, EventDigest::None, Some((DecisionDigest::Conflict, _)))
            // The limit found changed again on each retry: the call fails.
            | (
                SharedOutcome::Unavailable,
                EventDigest::None,
                Some((DecisionDigest::LimitChanged { .. }, _)),
            )
            | (SharedOutcome::Crashed, EventDigest::None, _)
            // Refused before any attempt, or at one after a lowering passed its weight.
            | (
                SharedOutcome::TooMany,
                EventDigest::None,
                None | Some((DecisionDigest::TooMany { .. }, None)),
            ) => true,
            (
                SharedOutcome::Rejected {
                    retry_after,
                    fields_match,
                },
                EventDigest::Rejected { retry_after: e },
                Some((DecisionDigest::Rejected { retry_after: d, .. }, _)),
            ) => fields_match && retry_after == e && retry_after == d,
            (
                SharedOutcome::Rejected {
                    retry_after,
                    fields_match,
                },
                EventDigest::Rejected { retry_after: e },
                // A waiter whose clock did not move across its sleep.
                Some((DecisionDigest::Wait { .. }, _)),
            ) => fields_match && retry_after == e,
            (SharedOutcome::Unfinished, ..) => {
                self.report(Invariant::Liveness, Some(caller), || {
                    "the call never ended".to_owned()
                });
                true
            }
            _ => false,
        };
        if !consistent {
            self.report(Invariant::Events, Some(caller), || {
                format!("ended {outcome:?} with event {event:?} after deciding {last:?}")
            });
        }
        self.slow_link_outcome(caller, outcome);
    }

    /// `caller`, ending at its reading `local`, ends by its deadline plus one round trip, and
    /// one more for each attempt made again because the limit had changed (two where the
    /// processes read live limits: the read, then the attempt).
    fn ended_in_time(&mut self, caller: u32, local: u64) {
        let process = &self.scenario.processes[self.process_of(caller) as usize];
        let call = &self.calls[caller as usize];
        let (start, deadline) = (call.start, call.deadline);
        // Where the processes read live limits, an attempt told of a newer version reads
        // them (bounded by the timeout) before it is made again.
        let per_change = if self.scenario.key_live.is_empty() {
            1
        } else {
            2
        };
        let timeout = u64::try_from(process.timeout.as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_mul(1 + per_change * call.changes);
        // A clock running fast skips readings: a timer fires at the first reading at or past
        // its target, which may be a nanosecond past it. On a coarse clock the call ends at
        // the first reading (a whole tick) at or after that.
        let skip = u64::from(process.clock.ppm > 0);
        let latest = deadline
            .max(start)
            .saturating_add(timeout)
            .saturating_add(skip);
        if local > crate::resolution::first_reading_from(latest, process.clock.tick) {
            self.report(Invariant::Deadline, Some(caller), || {
                format!("ended at {local}, past its deadline {deadline} and one timeout")
            });
        }
    }

    /// A refusal, before sending, of more permits at once than `limit`, the limit the process
    /// holds: a lowering put it in force after the call began (the call was checked against
    /// the limit then).
    pub(super) fn above_lowered_limit(&mut self, caller: u32, limit: u32) {
        let spec = self.scenario.callers[caller as usize];
        let weight = spec.weight;
        // The key's own limit in its process is never changed.
        let own = self.scenario.key_limits.own(spec.process, spec.key);
        // A live change of the key's limit changes it in every process.
        let live = self
            .scenario
            .key_live
            .iter()
            .any(|c| c.key == spec.key && c.limit == Some(limit));
        let lowered = matches!(weight, Weight::Units(n) if n > limit)
            && (self.changed_limits.contains(&limit) || own == Some(limit) || live);
        if !lowered {
            self.report(Invariant::Events, Some(caller), || {
                format!("{weight:?} refused as more than {limit}, which no change put in force")
            });
        }
    }

    /// A call of a process whose link is slower than its timeout: no answer from the server
    /// can come in time, so the call is answered by the fail policy, or its process crashed.
    pub(super) fn slow_link_outcome(&mut self, caller: u32, outcome: SharedOutcome) {
        let process = &self.scenario.processes[self.process_of(caller) as usize];
        if !process.slow_link() {
            return;
        }
        self.checks.count(&[Invariant::Unavailable]);
        let policy = process.fail_policy;
        let expected = match (policy, self.scenario.callers[caller as usize].weight) {
            // A drain takes no permit: it fails whatever the policy.
            (FailPolicy::Closed, _) | (_, Weight::Rest) => outcome == SharedOutcome::Unavailable,
            (FailPolicy::Open, _) => outcome == SharedOutcome::Permitted { remaining: None },
            // The local share decides: a permit it counts, a rejection by its window, or
            // `Unavailable` for more than the share at once (the bound is its own rule).
            (FailPolicy::Local { .. }, _) => matches!(
                outcome,
                SharedOutcome::Permitted { remaining: None }
                    | SharedOutcome::Rejected { .. }
                    | SharedOutcome::Unavailable
            ),
            // Not drawn by the simulator.
            (_, _) => outcome == SharedOutcome::Unavailable,
        };
        // Too many permits at once are refused before the server is asked.
        if !expected && !matches!(outcome, SharedOutcome::Crashed | SharedOutcome::TooMany) {
            self.report(Invariant::Unavailable, Some(caller), || {
                format!("ended {outcome:?}, but its process's link is slower than its timeout: it can only fail {policy:?}")
            });
        }
    }
}
