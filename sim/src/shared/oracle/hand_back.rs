//! Hand-backs of unspent shares as the oracle judges them. What a process sends back is at
//! most what it leased and did not spend, of the window it leased the share in, and it grants
//! nothing more from that share after (the share's rest is zero to the checks of permits
//! granted without a round trip). A hand-back is the server's operation: the spec's
//! [`hand_back`] says what the script takes off the key's count (only while the counter is of
//! the window the share was leased in, never below zero), the model's count follows what the
//! server did, so every later decision on the key is judged against the count as the server
//! holds it, and the window's ledger still bounds the permits granted in it by its limit.
//!
//! A share whose lease the server forgot (a failover that undid it, a restart, an expiry) is
//! not in the count any more: what its hand-back takes off then are permits the server counted
//! for others, and the ledger records them forgotten, as it records what a failover undoes.

use std::collections::HashMap;

use fixed_window_spec::{Count, hand_back};

use super::{Checker, Counted, LedgerOp};
use crate::oracle::Invariant;
use crate::shared::record::{ReplyDigest, SharedRecord};

/// A hand-back call, as the oracle follows it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sent {
    process: u16,
    key: u16,
    /// The lease call whose share's rest it carries, if the process held one.
    lease: Option<u32>,
    window_start: u64,
    permits: u32,
    /// The permits the script took off, once it ran.
    taken: Option<u32>,
}

/// The hand-back calls of a run, by request.
#[derive(Debug, Default)]
pub(super) struct HandBacks {
    sent: HashMap<u32, Sent>,
    /// The permits a hand-back took off a count its share's lease was no longer in: permits
    /// counted for others, which the server forgot.
    forgotten: HashMap<u32, u32>,
    /// Per key, the last time (virtual) a hand-back took permits off its count: a process
    /// that remembers the window full from before rejects locally until its end all the same
    /// (`docs/rules.md`: Handing back).
    last_taken: HashMap<u16, u64>,
}

impl Checker<'_> {
    /// A record of a hand-back: its call sent, or ended.
    pub(super) fn handing(&mut self, record: &SharedRecord) {
        match *record {
            SharedRecord::HandBack {
                request,
                process,
                key,
                window_start,
                permits,
                again,
                ..
            } => self.hand_back_sent(request, (process, key), (window_start, permits), again),
            SharedRecord::HandedBack { request, taken, .. } => self.handed_back(request, taken),
            _ => {}
        }
    }

    /// `process` took `permits` of its share of `key`, leased in the window starting at
    /// `window_start`, out of its hands, and sent them back in `request`: at most what it
    /// leased and did not spend, of the window it leased in; nothing more is granted from
    /// that share.
    /// A call sent `again` carries what its first sending did, taken out once.
    fn hand_back_sent(
        &mut self,
        request: u32,
        (process, key): (u16, u16),
        (window_start, permits): (u64, u32),
        again: bool,
    ) {
        if again {
            // The latest sending of the same share's rest.
            let first = self
                .hand_backs
                .sent
                .iter()
                .filter(|(_, sent)| {
                    (sent.process, sent.key, sent.window_start, sent.permits)
                        == (process, key, window_start, permits)
                })
                .max_by_key(|&(&request, _)| request)
                .map(|(_, sent)| *sent);
            if let Some(first) = first {
                self.hand_backs.sent.insert(
                    request,
                    Sent {
                        taken: None,
                        ..first
                    },
                );
                return;
            }
        }
        self.checks
            .count(&[Invariant::WindowLimit, Invariant::Events]);
        let lease = self.held.get(&(process, key)).copied();
        self.hand_backs.sent.insert(
            request,
            Sent {
                process,
                key,
                lease,
                window_start,
                permits,
                taken: None,
            },
        );
        let Some(lease) = lease else {
            self.report(Invariant::Events, None, || {
                format!("process {process} handed back {permits} of key {key} (request {request}) without a share of it")
            });
            return;
        };
        let leased_in = match self
            .requests
            .get(lease as usize)
            .and_then(|info| info.reply)
        {
            Some(ReplyDigest::Four { values }) => u64::try_from(values[3]).ok(),
            _ => None,
        };
        let Some(share) = self.leases.get_mut(&lease) else {
            return;
        };
        let unspent = share.left;
        // Nothing more comes out of this share: a permit granted from it after is one the
        // process handed back.
        share.left = 0;
        if permits > unspent {
            self.report(Invariant::WindowLimit, None, || {
                format!("process {process} handed back {permits} of its share of key {key} (request {lease}), which had {unspent} unspent")
            });
        }
        if leased_in != Some(window_start) {
            self.report(Invariant::WindowLimit, None, || {
                format!("process {process} handed back its share of key {key} into the window starting at {window_start}, leased in the one starting at {leased_in:?}")
            });
        }
    }

    /// Hand-back `request` ran on the server at `server_us` and answered `reply`: as the
    /// spec's rule says, on the model's count, which then follows what the server did.
    pub(super) fn hand_back_ran(&mut self, request: u32, server_us: u64, reply: ReplyDigest) {
        self.checks
            .count(&[Invariant::WindowLimit, Invariant::Script]);
        let Some(sent) = self.hand_backs.sent.get(&request).copied() else {
            self.report(Invariant::Events, None, || {
                format!("hand-back request {request} ran, but nothing was handed back in it")
            });
            return;
        };
        let taken = match reply {
            ReplyDigest::Two { values: [5, taken] } => u32::try_from(taken).ok(),
            ReplyDigest::Error { .. } => {
                self.report(Invariant::Script, None, || {
                    format!("hand-back request {request}: the script failed with an error")
                });
                return;
            }
            _ => None,
        };
        let Some(taken) = taken else {
            self.report(Invariant::Events, None, || {
                format!("hand-back request {request} was answered {reply:?}, which the script never gives it")
            });
            return;
        };
        if let Some(entry) = self.hand_backs.sent.get_mut(&request) {
            entry.taken = Some(taken);
        }
        let key = sent.key;
        let before = self.counts[key as usize];
        // The window the share was leased in, on the grid in force: none if its start is not
        // a boundary of it (the origin changed since), and no counter can be of it.
        let leased_in = self.grid.and_then(|grid| {
            let index = grid.index_of(u128::from(sent.window_start));
            (grid.start(index) == u128::from(sent.window_start)).then_some(index)
        });
        let mut model = before.unwrap_or_default();
        let expected = match (before, leased_in) {
            (Some(_), Some(index)) => hand_back(&mut model, index, sent.permits),
            _ => 0,
        };
        if taken != expected {
            let (index, used) = before.map_or((None, 0), |c| (Some(c.index()), c.used()));
            self.report(Invariant::WindowLimit, None, || {
                format!("hand-back request {request} of {} permits of key {key}, leased in the window starting at {} (index {leased_in:?}), took off {taken} at server time {server_us}; the counter held {used} in window {index:?}: the rule takes off {expected}", sent.permits, sent.window_start)
            });
        }
        if taken == 0 {
            return;
        }
        let ran_at = self.requests[request as usize].ran_at;
        self.hand_backs.last_taken.insert(key, ran_at);
        // The server took them off, whatever the model expected: the count follows it.
        let Some(count) = before else {
            return;
        };
        let index = count.index();
        self.counts[key as usize] = Some(Count::stored(index, count.used().saturating_sub(taken)));
        let epoch = self.epoch;
        // A failover that undoes this write puts the count back as it was.
        self.requests[request as usize].counted = Some(Counted {
            epoch,
            key,
            window: index,
            before,
        });
        if !self.lease_counted(sent.lease, (epoch, key, index)) {
            self.hand_backs.forgotten.insert(request, taken);
            self.mark_granted(request);
            self.ledgers
                .entry((epoch, key, index))
                .or_default()
                .push(LedgerOp::Forget(request));
        }
    }

    /// Whether `lease`'s share is still counted in `window` (epoch, key, index): the server
    /// counted it there and has not forgotten it.
    fn lease_counted(&self, lease: Option<u32>, window: (u32, u16, u128)) -> bool {
        let Some(lease) = lease else {
            return false;
        };
        let counted = self
            .requests
            .get(lease as usize)
            .and_then(|info| info.counted)
            .is_some_and(|c| (c.epoch, c.key, c.window) == window);
        counted
            && !self.ledgers.get(&window).is_some_and(|ops| {
                ops.iter()
                    .any(|op| matches!(op, LedgerOp::Forget(r) if *r == lease))
            })
    }

    /// The last time a hand-back took permits off `key`'s count, if one did.
    pub(super) fn last_hand_back(&self, key: u16) -> Option<u64> {
        self.hand_backs.last_taken.get(&key).copied()
    }

    /// The permits hand-back `request` made the server forget (see [`HandBacks`]).
    pub(super) fn hand_back_units(&self, request: u32) -> Option<u32> {
        self.hand_backs.forgotten.get(&request).copied()
    }

    /// `process` read `taken` from its hand-back call `request` (`None`: no reply): what the
    /// script answered.
    fn handed_back(&mut self, request: u32, taken: Option<u32>) {
        self.checks.count(&[Invariant::Events]);
        let Some(taken) = taken else {
            return;
        };
        let ran = self
            .hand_backs
            .sent
            .get(&request)
            .and_then(|sent| sent.taken);
        if ran != Some(taken) {
            self.report(Invariant::Events, None, || {
                format!("hand-back request {request} ended with {taken} taken off, but the script took off {ran:?}")
            });
        }
    }
}
