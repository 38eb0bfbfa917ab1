//! Peeks (`peek`): a question that counts nothing. The script's read-only run writes nothing
//! (the server says how many keys each peek's call wrote: none), so the model's windows are
//! left as they were, and every later decision is judged as if the peek had not been made: a
//! peek that took a permit shows there as well. Its run happens at one server instant, so the
//! key's window just before it and just after it are one, and the answer must be that
//! window's: the permits the limit the peek carried leaves beside its count, and the time from
//! the server's reading to the window's end on the shared grid (a whole period from the
//! reading where no configuration is stored: nothing is registered for it). A peek answered
//! without a round trip (its window remembered full) answers none left, for the time to the
//! remembered window's end, judged as a local rejection is.
//!
//! A peek told of a newer limit is made again under it, at most [`CHANGE_RETRIES`] times; one
//! refused (the configuration, or the key's limit) fails `Conflict` and is made no more. A
//! peek fails only for a cause: `Conflict` exactly when the server refused its last request
//! (or, with none sent, its process was refused); otherwise `Unavailable`, when a fault
//! touched its last request (lost, late, refused, reset, held: the rules of `Unavailable`
//! for an attempt, judged once the trace has ended) or the limit changed under every one of
//! its tries; never when an answer it could give arrived.

use std::collections::HashMap;

use fixed_window_redis::ScriptReply;

use super::calls::LocalAnswer;
use super::{Checker, MOST_VIOLATIONS};
use crate::oracle::{Invariant, Violation};
use crate::shared::record::{ReplyDigest, SharedRecord};
use crate::shared::run::config;

/// The times a peek is made again while the limit changes under it, as the limiter does.
const CHANGE_RETRIES: usize = 3;

/// What the oracle expects of the peeks whose script ran.
#[derive(Debug, Default)]
pub(super) struct Peeks {
    /// Per request id answered "permitted" by a peek's run: the permits left and the time to
    /// the window's end (nanoseconds) the model says.
    expected: HashMap<u32, (u32, u128)>,
    /// Per caller, the requests its peek sent, in order (one or more per try).
    sent: HashMap<u32, Vec<u32>>,
    /// Peeks that failed `Unavailable` with no change of the limit to explain it: the caller,
    /// what must explain the failure, and the record; judged once the trace has ended, as a
    /// late reply is recorded after the failure.
    failed: Vec<(u32, PeekFailure, usize)>,
    /// Per process, the virtual time it last crashed at.
    crashed: HashMap<u16, u64>,
}

/// A peek that failed `Unavailable`, by what a fault must have touched.
#[derive(Debug, Clone, Copy)]
enum PeekFailure {
    /// Its last try sent `request`, after `changes` tries told the limit changed.
    Sent { request: u32, changes: usize },
    /// Its last try waited unsent in its lane: a call of `process` sent from `since` (one
    /// timeout before it queued) to `until` (its failure) held it up.
    Queued {
        process: u16,
        since: u64,
        until: u64,
    },
}

impl Checker<'_> {
    /// A record of a peek: its answer, or its script call's writes.
    pub(super) fn peek_record(&mut self, record: &SharedRecord) {
        match *record {
            SharedRecord::Peeked {
                t,
                caller,
                request,
                remaining,
                limit,
                resets_in,
            } => self.peeked(t, caller, request, (remaining, limit, resets_in)),
            SharedRecord::PeekRan {
                request, writes, ..
            } => self.peek_ran(request, writes),
            SharedRecord::PeekFailed {
                t,
                caller,
                conflict,
            } => self.peek_failed(t, caller, conflict),
            _ => {}
        }
    }

    /// `caller`'s peek sent `request`, carrying version `version` of the limit: made again
    /// after its last request, it must have been told a newer limit (and carry it), never a
    /// refusal.
    pub(super) fn peek_sent(&mut self, caller: u32, request: u32, version: u32) {
        let previous = self
            .peeks
            .sent
            .get(&caller)
            .and_then(|sent| sent.last().copied());
        self.peeks.sent.entry(caller).or_default().push(request);
        let Some(previous) = previous else {
            return;
        };
        self.checks.count(&[Invariant::Events]);
        match self.script_reply(Some(previous)) {
            Some(ScriptReply::Conflict { .. } | ScriptReply::KeyConflict { .. }) => {
                self.report(Invariant::Events, Some(caller), || {
                    format!("a peek made again (request {request}) after the server refused its request {previous}: a refused peek fails Conflict")
                });
            }
            Some(ScriptReply::Changed { version: told, .. }) if version < told => {
                self.report(Invariant::Events, Some(caller), || {
                    format!("a peek made again (request {request}) under version {version} of the limit, after request {previous} was told of version {told}")
                });
            }
            _ => {}
        }
    }

    /// How many of `caller`'s peek's requests were answered a newer limit, or a window under
    /// a limit the process had since replaced: its tries the limit changed under.
    fn peek_changes(&self, caller: u32) -> usize {
        let Some(sent) = self.peeks.sent.get(&caller) else {
            return 0;
        };
        sent.iter()
            .filter(|&&request| self.stale_peek_reply(request))
            .count()
    }

    /// Whether `request`, a peek's, was answered a newer limit, or a window under a version
    /// older than one its process holds (which the limiter reads as a change: peek again).
    fn stale_peek_reply(&self, request: u32) -> bool {
        let info = &self.requests[request as usize];
        match self.script_reply(Some(request)) {
            Some(ScriptReply::Changed { .. }) => true,
            Some(ScriptReply::Permitted { .. }) => {
                info.carried.1 < self.learnt[info.process as usize]
            }
            _ => false,
        }
    }

    /// `caller`'s peek failed at `t`, `Conflict` or else `Unavailable`: only for a cause.
    fn peek_failed(&mut self, t: u64, caller: u32, conflict: bool) {
        self.checks
            .count(&[Invariant::Events, Invariant::Unavailable]);
        let changes = self.peek_changes(caller);
        let sent = self.peeks.sent.remove(&caller).unwrap_or_default();
        let process = self.process_of(caller);
        // Its last try still waited in its lane, unsent, when its timeout ended it.
        let unsent = self.lanes.waiting.get(&caller).copied();
        if conflict {
            let refused = match (unsent, sent.last()) {
                (None, Some(&last)) => matches!(
                    self.script_reply(Some(last)),
                    Some(ScriptReply::Conflict { .. } | ScriptReply::KeyConflict { .. })
                ),
                // Refused before anything was sent.
                _ => sent.is_empty() && self.refused_processes[process as usize],
            };
            if !refused {
                self.report(Invariant::Events, Some(caller), || {
                    format!("a peek failed Conflict after its requests {sent:?}, the server refusing none of them")
                });
            }
            return;
        }
        let failure = match (unsent, sent.last()) {
            (Some(queued), _) => {
                // On a cluster with no origin yet nothing is sent (not registered).
                if sent.is_empty() && self.scenario.cluster.is_some() {
                    return;
                }
                // A crash of its process drops its queue; a fault on a call in its lane
                // holds it up.
                if self
                    .peeks
                    .crashed
                    .get(&process)
                    .is_some_and(|&at| at >= queued)
                {
                    return;
                }
                let timeout = config(self.scenario, process as usize).timeout();
                let since =
                    queued.saturating_sub(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX));
                PeekFailure::Queued {
                    process,
                    since,
                    until: t,
                }
            }
            (None, Some(&last)) => {
                // Made again after each change, as often as allowed: the limit kept changing.
                if changes > CHANGE_RETRIES && self.stale_peek_reply(last) {
                    return;
                }
                PeekFailure::Sent {
                    request: last,
                    changes,
                }
            }
            (None, None) => {
                self.report(Invariant::Events, Some(caller), || {
                    "a peek failed Unavailable with nothing sent nor queued".to_owned()
                });
                return;
            }
        };
        self.peeks.failed.push((caller, failure, self.record));
    }

    /// `process` crashed at `t`.
    pub(super) fn peek_crash(&mut self, t: u64, process: u16) {
        self.peeks.crashed.insert(process, t);
    }

    /// Once the trace has ended: each peek that failed `Unavailable` must have met a fault: on
    /// its last request, or (its last try unsent) on a request of its process in flight while
    /// it waited.
    pub(super) fn check_failed_peeks(&mut self) {
        for (caller, failure, record) in std::mem::take(&mut self.peeks.failed) {
            let process = self.process_of(caller);
            if self.scenario.processes[process as usize].slow_link() {
                continue;
            }
            let detail = match failure {
                PeekFailure::Sent { request, changes } => {
                    if self.requests[request as usize].faulted {
                        continue;
                    }
                    let reply = self.script_reply(Some(request));
                    format!(
                        "a peek failed Unavailable with no fault on its last request {request}, answered {reply:?} (after {changes} changes of the limit)"
                    )
                }
                PeekFailure::Queued {
                    process,
                    since,
                    until,
                } => {
                    let held = self.requests.iter().any(|info| {
                        info.process == process
                            && info.faulted
                            && (since..=until).contains(&info.sent_at)
                    });
                    if held {
                        continue;
                    }
                    format!(
                        "a peek failed Unavailable waiting unsent in its lane, with no fault on a request of process {process} sent from {since} to {until}"
                    )
                }
            };
            if self.violations.len() < MOST_VIOLATIONS {
                self.violations.push(Violation {
                    invariant: Invariant::Unavailable,
                    caller: Some(caller),
                    record,
                    detail,
                });
            }
        }
    }

    /// A peek's script call (`request`, its first id) ran, writing `writes` keys: it must
    /// write none.
    pub(super) fn peek_ran(&mut self, request: u32, writes: u64) {
        self.checks.count(&[Invariant::Events]);
        if writes > 0 {
            let caller = self.request(request).caller;
            self.report(Invariant::Events, caller, || {
                format!(
                    "the script call of peek {request} wrote {writes} keys: a peek writes nothing"
                )
            });
        }
    }

    /// The script ran `request`, a peek's, at `server_us`, answering `reply`: judged against
    /// the model's window of the caller's key, which it leaves as it was.
    pub(super) fn peek_executed(&mut self, request: u32, server_us: u64, reply: ReplyDigest) {
        let info = &self.requests[request as usize];
        let (Some(caller), process) = (info.caller, info.process) else {
            return;
        };
        let limit = self.peek_limit(request);
        let ReplyDigest::Four { values } = reply else {
            return;
        };
        self.checks.count(&[Invariant::Events]);
        let (remaining, now, window_start) = match ScriptReply::parse(&values) {
            Some(ScriptReply::Permitted {
                remaining,
                now,
                window_start,
            }) => (remaining, now, window_start),
            // A refusal or a newer limit: the process asks again or fails, and answers nothing.
            Some(
                ScriptReply::Conflict { .. }
                | ScriptReply::KeyConflict { .. }
                | ScriptReply::Changed { .. },
            ) => return,
            other => {
                self.report(Invariant::Events, Some(caller), || {
                    format!("a peek's run answered {other:?}: a peek takes nothing, so it finds no window full and leases nothing")
                });
                return;
            }
        };
        self.checks.count(&[Invariant::Alignment]);
        let key = self.scenario.callers[caller as usize].key;
        // No configuration stored: the peek stores none, and reads a window of its own
        // process's period from the fixed origin, or from its reading. On a cluster it reads
        // its own period's grid whatever is stored: a counter of other settings refuses it.
        let period = self.scenario.configured(process).1;
        let grid = self
            .grid_for(period)
            .unwrap_or_else(|| self.grid_of(period, server_us));
        let at = u128::from(server_us);
        let (index, used) =
            self.counts[key as usize].map_or((grid.index_of(at), 0), |count| count.at(&grid, at));
        let model = limit.saturating_sub(used);
        self.check_time(caller, now, server_us);
        self.check_window_start(caller, window_start, grid.start(index));
        if remaining != model {
            self.report(Invariant::Events, Some(caller), || {
                format!("a peek at server time {server_us} found {remaining} of {limit} left in window {index} of key {key}, which holds {used}: expected {model}")
            });
        }
        let resets_in = grid.end(index).map_or(u128::MAX, |end| {
            end.saturating_sub(at).saturating_mul(1_000)
        });
        self.peeks.expected.insert(request, (model, resets_in));
    }

    /// The limit `request`, a peek's, reads its key's window by: the key's own in its
    /// process, else the limiter's it carries.
    fn peek_limit(&self, request: u32) -> u32 {
        self.requests.get(request as usize).map_or(0, |info| {
            info.caller
                .and_then(|caller| {
                    let key = self.scenario.callers[caller as usize].key;
                    self.scenario.key_limits.own(info.process, key)
                })
                .unwrap_or(info.carried.0)
        })
    }

    /// `caller`'s peek answered `remaining` of `limit` for `resets_in` ns, from `request`'s
    /// reply or (with none) from its process's memory of full windows.
    pub(super) fn peeked(
        &mut self,
        t: u64,
        caller: u32,
        request: Option<u32>,
        (remaining, limit, resets_in): (u32, u32, u128),
    ) {
        self.checks.count(&[Invariant::Events]);
        let changes = self.peek_changes(caller);
        let sent = self.peeks.sent.remove(&caller).unwrap_or_default();
        let Some(request) = request else {
            if remaining != 0 {
                self.report(Invariant::Events, Some(caller), || {
                    format!("a peek answered without a round trip (its window remembered full) found {remaining} left")
                });
            }
            self.local_decision(t, caller, LocalAnswer::Peek(resets_in));
            return;
        };
        if sent.last() != Some(&request) || changes > CHANGE_RETRIES {
            self.report(Invariant::Events, Some(caller), || {
                format!("a peek answered from request {request}, after its requests {sent:?}, {changes} of them told the limit changed: at most {CHANGE_RETRIES} tries more, the last one answering")
            });
        }
        let carried = self.peek_limit(request);
        let Some(&(model, model_resets)) = self.peeks.expected.get(&request) else {
            let reply = self.script_reply(Some(request));
            self.report(Invariant::Events, Some(caller), || {
                format!("a peek answered {remaining} left from request {request}, whose reply {reply:?} answers no peek")
            });
            return;
        };
        if (remaining, limit, resets_in) != (model, carried, model_resets) {
            self.report(Invariant::Events, Some(caller), || {
                format!("a peek answered {remaining} of {limit} left for {resets_in} ns from request {request}: the window held {model} of {carried} for {model_resets} ns")
            });
        }
    }
}
