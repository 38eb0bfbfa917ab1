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
//! The limit a peek reads its key's window by is the key's limit in force at the version it
//! carries, as an attempt's ([`KeyWindow::decide`](fixed_window_spec::KeyWindow::decide):
//! its live limit, else its own in the process, else the limiter's); where an attempt would
//! meet the key's conflict the peek must be refused so, naming the limit the window is
//! counted by.
//!
//! A peek told of a newer limit is made again under it, at most [`CHANGE_RETRIES`] times (a
//! process reading live limits reads them first, and peeks again under an older version only
//! if that read failed to bring the newer one); one
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
use crate::shared::record::{Purpose, ReplyDigest, SharedRecord};
use crate::shared::run::config;

/// The times a peek is made again while the limit changes under it, as the limiter does.
const CHANGE_RETRIES: usize = 3;

/// What the oracle expects of the peeks whose script ran.
#[derive(Debug, Default)]
pub(super) struct Peeks {
    /// Per request id answered "permitted" by a peek's run: the permits left, the time to
    /// the window's end (nanoseconds) and the key's limit in force the model says.
    expected: HashMap<u32, (u32, u128, u32)>,
    /// Per caller, the requests its peek sent, in order (one or more per try).
    sent: HashMap<u32, Vec<u32>>,
    /// Peeks that failed `Unavailable` with no change of the limit to explain it: the caller,
    /// what must explain the failure, and the record; judged once the trace has ended, as a
    /// late reply is recorded after the failure.
    failed: Vec<(u32, PeekFailure, usize)>,
    /// Per process, the virtual time it last crashed at.
    crashed: HashMap<u16, u64>,
    /// Peeks made again under an older version than the one their last request was told,
    /// where the processes read live limits: the caller, that request and the new one, the
    /// version told and the record; judged once the trace has ended.
    unread: Vec<(u32, (u32, u32), u32, usize)>,
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
            // A process reading live limits adopts the version only with them: it reads them
            // before peeking again, and may still hold the older version if that read failed
            // (judged once the trace has ended, as a late reply is recorded after).
            Some(ScriptReply::Changed { version: told, .. })
                if version < told && !self.scenario.key_live.is_empty() =>
            {
                self.peeks
                    .unread
                    .push((caller, (previous, request), told, self.record));
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
                // Its process crashed while it read the live limits before peeking again.
                let sent_at = self.requests[last as usize].sent_at;
                if self
                    .peeks
                    .crashed
                    .get(&process)
                    .is_some_and(|&at| at >= sent_at)
                {
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

    /// Once the trace has ended: each peek made again under an older version than the one
    /// its last request was told, in a process reading live limits, must have read them in
    /// between (a `limits` call of its process sent from that request on), and that read
    /// must have failed to bring the version: lost, late, or answering an older one.
    fn check_peeks_read_limits(&mut self) {
        for (caller, (previous, again), told, record) in std::mem::take(&mut self.peeks.unread) {
            let process = self.process_of(caller);
            let (from, until) = (
                self.requests[previous as usize].sent_at,
                self.requests[again as usize].sent_at,
            );
            let read_failed = self.requests.iter().any(|info| {
                info.process == process
                    && info.purpose == Some(Purpose::Refresh)
                    && (from..=until).contains(&info.sent_at)
                    && (info.faulted
                        || !matches!(info.reply, Some(ReplyDigest::Four { values })
                            if matches!(ScriptReply::parse(&values), Some(ScriptReply::Changed { version, .. }) if version >= told)))
            });
            if !read_failed && self.violations.len() < MOST_VIOLATIONS {
                let version = self.requests[again as usize].carried.1;
                self.violations.push(Violation {
                    invariant: Invariant::Events,
                    caller: Some(caller),
                    record,
                    detail: format!("a peek made again (request {again}) under version {version} of the limit, after request {previous} was told of version {told}, with no read of the live limits between that failed to bring it"),
                });
            }
        }
    }

    /// `process` crashed at `t`.
    pub(super) fn peek_crash(&mut self, t: u64, process: u16) {
        self.peeks.crashed.insert(process, t);
    }

    /// Once the trace has ended: each peek that failed `Unavailable` must have met a fault: on
    /// its last request, or (its last try unsent) on a request of its process in flight while
    /// it waited.
    pub(super) fn check_failed_peeks(&mut self) {
        self.check_peeks_read_limits();
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
        let (Some(caller), process, carried) = (info.caller, info.process, info.carried.0) else {
            return;
        };
        let ReplyDigest::Four { values } = reply else {
            return;
        };
        self.checks.count(&[Invariant::Events]);
        let key = self.scenario.callers[caller as usize].key;
        // No configuration stored: the peek stores none, and reads a window of its own
        // process's period from the fixed origin, or from its reading. On a cluster it reads
        // its own period's grid whatever is stored: a counter of other settings refuses it.
        let period = self.scenario.configured(process).1;
        let grid = self
            .grid_for(period)
            .unwrap_or_else(|| self.grid_of(period, server_us));
        // The key's limit in force at the version the peek carries (its live limit, else its
        // own in the process, else the limiter's), as the window is counted by it; or the
        // key's conflict an attempt would meet there.
        let settled = self
            .settle_key(request, key, (&grid, server_us), carried)
            .map(|(limit, _)| limit);
        let parsed = ScriptReply::parse(&values);
        let (remaining, now, window_start) = match parsed {
            Some(ScriptReply::Permitted {
                remaining,
                now,
                window_start,
            }) => (remaining, now, window_start),
            // Refused for the key's limit: as an attempt would be, naming the limit the
            // window is counted by.
            Some(ScriptReply::KeyConflict { .. }) => {
                match settled {
                    Err(conflict) => {
                        self.key_conflict_reply((request, caller), (&grid, period), conflict, parsed);
                    }
                    Ok(limit) => self.report(Invariant::Configuration, Some(caller), || {
                        format!("a peek (request {request}) answered {parsed:?}, where key {key}'s window is counted by its limit in force, {limit}")
                    }),
                }
                return;
            }
            // A refusal or a newer limit: the process asks again or fails, and answers nothing.
            Some(ScriptReply::Conflict { .. } | ScriptReply::Changed { .. }) => return,
            other => {
                self.report(Invariant::Events, Some(caller), || {
                    format!("a peek's run answered {other:?}: a peek takes nothing, so it finds no window full and leases nothing")
                });
                return;
            }
        };
        let limit = match settled {
            Ok(limit) => limit,
            Err(conflict) => {
                self.report(Invariant::Configuration, Some(caller), || {
                    format!("a peek (request {request}) answered {parsed:?} where {conflict}: it must be refused as an attempt would")
                });
                return;
            }
        };
        self.checks.count(&[Invariant::Alignment]);
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
        self.peeks
            .expected
            .insert(request, (model, resets_in, limit));
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
        let Some(&(model, model_resets, carried)) = self.peeks.expected.get(&request) else {
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
