//! Peeks (`peek`): a question that counts nothing. The script's read-only run writes nothing
//! (the server says how many keys each peek's call wrote: none), so the model's windows are
//! left as they were, and every later decision is judged as if the peek had not been made: a
//! peek that took a permit shows there as well. Its run happens at one server instant, so the
//! key's window just before it and just after it are one, and the answer must be that
//! window's: the permits the limit the peek carried leaves beside its count, and the time from
//! the server's reading to the window's end on the shared grid (a whole period from the
//! reading where no configuration is stored: nothing is registered for it). A peek answered
//! without a round trip (its window remembered full) answers none left.

use std::collections::HashMap;

use fixed_window_redis::ScriptReply;

use super::Checker;
use crate::oracle::Invariant;
use crate::shared::record::{ReplyDigest, SharedRecord};

/// What the oracle expects of the peeks whose script ran.
#[derive(Debug, Default)]
pub(super) struct Peeks {
    /// Per request id answered "permitted" by a peek's run: the permits left and the time to
    /// the window's end (nanoseconds) the model says.
    expected: HashMap<u32, (u32, u128)>,
}

impl Checker<'_> {
    /// A record of a peek: its answer, or its script call's writes.
    pub(super) fn peek_record(&mut self, record: &SharedRecord) {
        match *record {
            SharedRecord::Peeked {
                caller,
                request,
                remaining,
                limit,
                resets_in,
                ..
            } => self.peeked(caller, request, (remaining, limit, resets_in)),
            SharedRecord::PeekRan {
                request, writes, ..
            } => self.peek_ran(request, writes),
            // Failed: it answered nothing, and its call goes on.
            _ => {}
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
        caller: u32,
        request: Option<u32>,
        (remaining, limit, resets_in): (u32, u32, u128),
    ) {
        self.checks.count(&[Invariant::Events]);
        let Some(request) = request else {
            if remaining != 0 {
                self.report(Invariant::Events, Some(caller), || {
                    format!("a peek answered without a round trip (its window remembered full) found {remaining} left")
                });
            }
            return;
        };
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
