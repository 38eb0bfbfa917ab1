//! Limits per key (`docs/rules.md`, "Limits per key" under the shared limiter): each window
//! of a key is counted by the limit its counter was written under (the spec's
//! [`KeyWindow::decide`]), the key's own limit in the process that counted it, or the
//! limiter's, whatever that limit is now. An attempt that would decide the window by another
//! limit must be answered a key conflict, counting nothing, never a permit; one deciding it
//! by the window's limit is decided by it, never refused as a conflict.
//!
//! The model ties a window's limit to the model's counter of the key: the server records it
//! in the counter, so a counter the server forgot (lost, expired, or of a window that has
//! ended) settles nothing, and the next count settles the window afresh. Each write of the
//! counter records its writer's limits: where the limiter's limit changes, a key with a limit
//! of its own keeps it, and one without follows the limiter's; on a cluster, where counters
//! record the version of the limiter's limit, an attempt of a newer version rewrites a
//! counter of an older one with its own limits, counting or not.

use core::fmt::Write as _;

use fixed_window_redis::ScriptReply;
use fixed_window_spec::{Grid, KeyConflict, KeyProposal, KeyWindow};

use super::{Checker, KeyWindowBefore};
use crate::oracle::Invariant;
use crate::shared::record::SharedRecord;

impl Checker<'_> {
    /// What `request`'s attempt on `key` proposes: the key's live limit at the version it
    /// carries, else its process's own limit for the key, else the limiter's limit in force
    /// (`default`), at the version it carries where its counter records one: on a cluster
    /// always, on one node only under a live limit (`=own/version`; every attempt reaching
    /// the counters holds the version stored, and other counters record none).
    fn proposal(&self, request: u32, key: u16, default: u32) -> KeyProposal {
        let info = &self.requests[request as usize];
        let version = info.carried.1;
        let live = self.live_at(version, key);
        KeyProposal {
            own: live.or_else(|| self.scenario.key_limits.own(info.process, key)),
            limiter: default,
            version: if self.scenario.cluster.is_some() || live.is_some() {
                version
            } else {
                0
            },
        }
    }

    /// `proposal`, of an attempt holding version `carried`, as `window` decides it. On one
    /// node a counter written under a live limit records that version, and one written
    /// otherwise none (read as the attempt's own): an attempt without a live limit for the
    /// key meeting a counter of a live limit (cleared since, so of an older version) rewrites
    /// it with its own limit, count kept, whichever process makes it; one meeting a counter
    /// recording no version is refused on another limit (a process configured apart stays
    /// apart once the live limit is gone).
    fn against(&self, window: &KeyWindow, proposal: KeyProposal, carried: u32) -> KeyProposal {
        if self.scenario.cluster.is_none() && !window.older_than(1) {
            KeyProposal {
                version: carried,
                ..proposal
            }
        } else {
            proposal
        }
    }

    /// Whether some key has a limit of its own, configured or set live.
    fn keyed(&self) -> bool {
        !self.scenario.key_limits.is_empty() || !self.scenario.key_live.is_empty()
    }

    /// The live limit of `key` at version `version` of the limit, if it has one.
    pub(super) fn live_at(&self, version: u32, key: u16) -> Option<u32> {
        let at = self.live.partition_point(|&(v, _)| v <= version);
        let (_, keys) = self.live.get(at.checked_sub(1)?)?;
        keys.iter()
            .find(|&&(k, _)| k == key)
            .map(|&(_, limit)| limit)
    }

    /// A script run at virtual time `t` made live change `live` (an index into the
    /// scenario's), storing version `version`: the key's live limits from that version on
    /// are the latest ones with the change. The change writes no counter: the key's counter
    /// keeps what it was written under, and the first attempt of the new version (or a
    /// later one) that meets it under another limit rewrites it with its own, its count kept
    /// (on one node every attempt of a live limit does, and one without meets a counter of
    /// a live limit as of an older version: `Checker::against`; on a cluster a counter of
    /// an older version, in [`KeyWindow::decide`]). So the key's current window is counted by
    /// the new limit from the change on, and after a removal by the limit of the first
    /// process to write it, whatever it configured: one configured apart for the key
    /// disagrees again from then on. A process remembering the key full may find room it
    /// does not know of: excused as a raise.
    pub(super) fn changed_live(&mut self, t: u64, live: u32, version: u32) {
        let Some(spec) = self.scenario.key_live.get(live as usize).copied() else {
            return;
        };
        let mut keys = self
            .live
            .last()
            .map(|(_, keys)| keys.clone())
            .unwrap_or_default();
        keys.retain(|&(k, _)| k != spec.key);
        if let Some(limit) = spec.limit {
            keys.push((spec.key, limit));
        }
        self.live.push((version, keys));
        self.last_raise = Some(t);
    }

    /// A record of the live changes of keys' limits: a read of the live limits, or how a
    /// change ended (judged as a change of the limiter's limit is).
    pub(super) fn key_live_record(&mut self, record: &SharedRecord) {
        match *record {
            SharedRecord::LiveLimitsRead {
                request, ref text, ..
            } => self.live_limits_read(request, text.as_deref()),
            SharedRecord::KeyLimitSet {
                change,
                limit,
                outcome,
                ..
            } => {
                // Never 0: a removal is checked as a change to the limiter's limit.
                let limit = limit.unwrap_or(self.scenario.limit).max(1);
                let first = self.scenario.first_live_change();
                self.limit_set(first.saturating_add(change), limit, outcome);
            }
            _ => {}
        }
    }

    /// `request`'s script run answered the live limits `text`: those the changes made so far
    /// stored, in the order the script keeps them (a key changed again moves to the end);
    /// none stored (`None`) only before the first change.
    pub(super) fn live_limits_read(&mut self, request: u32, text: Option<&str>) {
        self.checks.count(&[Invariant::Configuration]);
        let Some(text) = text else {
            if !self.live.is_empty() {
                self.report(Invariant::Configuration, None, || {
                    format!("request {request} read no live limits after a change stored them")
                });
            }
            return;
        };
        let mut expected = String::new();
        for &(key, limit) in self.live.last().map_or(&[][..], |(_, keys)| &keys[..]) {
            let name = &self.scenario.keys[key as usize];
            let _ = write!(expected, "{limit} {}:{name}", name.len());
        }
        if text != expected {
            self.report(Invariant::Configuration, None, || {
                format!("request {request} read the live limits {text:?}, not {expected:?}")
            });
        }
    }

    /// The key's window at `server_us` as the model's counter settles it: the one recorded
    /// if the counter holds that window, else a window not settled yet.
    fn key_window(&self, key: u16, grid: &Grid, server_us: u64) -> KeyWindow {
        self.key_window_at(key, grid.index_of(u128::from(server_us)))
    }

    /// The key's window `index` as the model's counter settles it. A counter of a later
    /// window (the server's clock stepped back) counts against the current one, its limit
    /// with it.
    fn key_window_at(&self, key: u16, index: u128) -> KeyWindow {
        match (self.counts[key as usize], self.key_windows[key as usize]) {
            (Some(count), Some((settled, window)))
                if count.index() >= index && settled == count.index() =>
            {
                window
            }
            _ => KeyWindow::default(),
        }
    }

    /// The limit `key`'s window `index` is full at, for `process`: the one an attempt of the
    /// process at the latest version would be decided by, else (it would be refused, or on
    /// a cluster) the one the window is counted by, else the one the process would count it
    /// by (the key's live limit, else its own for the key, else `default`).
    pub(super) fn full_at(&self, (process, key): (u16, u16), index: u128, default: u32) -> u32 {
        if !self.keyed() {
            return default;
        }
        // Where keys' limits change live, the process's own is taken at the latest version.
        let latest = self.live.last().map_or(0, |&(version, _)| version);
        let window = self.key_window_at(key, index);
        let live = self.live_at(latest, key);
        let own = live.or_else(|| self.scenario.key_limits.own(process, key));
        if self.scenario.cluster.is_none() {
            let proposal = KeyProposal {
                own,
                limiter: default,
                version: if live.is_some() { latest } else { 0 },
            };
            if let Ok(limit) = window.decide(self.against(&window, proposal, latest)) {
                return limit;
            }
        }
        window.limit_under(default).or(own).unwrap_or(default)
    }

    /// What `request`'s attempt on `key` at `server_us` must be decided by: `Ok` with the
    /// limit (the window's, or the one the attempt proposes where none is settled) and what
    /// the attempt proposes, or the conflict the server must answer.
    pub(super) fn settle_key(
        &self,
        request: u32,
        key: u16,
        (grid, server_us): (&Grid, u64),
        default: u32,
    ) -> Result<(u32, KeyProposal), KeyConflict> {
        let proposal = self.proposal(request, key, default);
        // Without limits of their own, every attempt of a version of the limiter's limit
        // proposes that limit: the stored configuration's rules say it all.
        if !self.keyed() {
            return Ok((default, proposal));
        }
        let window = self.key_window(key, grid, server_us);
        let carried = self.requests[request as usize].carried.1;
        let limit = window.decide(self.against(&window, proposal, carried))?;
        Ok((limit, proposal))
    }

    /// After `request`'s attempt on `key` at `server_us`, decided by the limit `proposal`
    /// proposes: if it wrote the key's counter (it counted, or on a cluster rewrote the
    /// settings of a counter of an older version) and the model's counter now holds that
    /// window, the counter records its limits (an attempt that wrote nothing leaves the
    /// window as it was).
    pub(super) fn key_decided(
        &mut self,
        (request, key): (u32, u16),
        (grid, server_us): (&Grid, u64),
        proposal: KeyProposal,
    ) {
        if !self.keyed() {
            return;
        }
        let index = grid.index_of(u128::from(server_us));
        let Some(count) = self.counts[key as usize].filter(|count| count.index() >= index) else {
            return;
        };
        let mut window = self.key_window_at(key, count.index());
        // On one node an attempt decided by another limit than its counter's (a live change
        // came between) rewrites the counter with its own, counting or not.
        let rewrote = self.scenario.cluster.is_none()
            && window
                .limit_under(proposal.limiter)
                .is_some_and(|was| was != proposal.limit());
        if !(self.requests[request as usize].counted.is_some()
            || self.settings_written(request, key)
            || rewrote)
        {
            return;
        }
        // A counter of an older version rewritten under a higher limit for the key (after a
        // live change): a process remembering it full may find room it does not know of, as
        // after a raise of the limiter's limit.
        let carried = self.requests[request as usize].carried.1;
        if window.older_than(self.against(&window, proposal, carried).version)
            && window
                .limit_under(proposal.limiter)
                .is_some_and(|was| proposal.limit() > was)
        {
            let ran_at = self.requests[request as usize].ran_at;
            self.last_raise = self.last_raise.max(Some(ran_at));
        }
        window.written_by(proposal);
        let before = self.key_windows[key as usize].replace((count.index(), window));
        self.requests[request as usize].key_window_before = Some(KeyWindowBefore(before));
    }

    /// A failover undid `request`'s write of its key's counter: the limit its window is
    /// counted by is what it was before it.
    pub(super) fn undo_key_window(&mut self, request: u32, key: u16) {
        if let Some(KeyWindowBefore(before)) =
            self.requests[request as usize].key_window_before.take()
        {
            self.key_windows[key as usize] = before;
        }
    }

    /// The run of `request` on `key` had to answer the key `conflict` (the period, the
    /// written limit and the shared origin), counting nothing; whether it did.
    pub(super) fn key_conflict_reply(
        &mut self,
        (request, caller): (u32, u32),
        (grid, period): (&Grid, u64),
        conflict: KeyConflict,
        reply: Option<ScriptReply>,
    ) {
        self.checks
            .count(&[Invariant::Configuration, Invariant::WindowLimit]);
        let expected = ScriptReply::KeyConflict {
            period,
            limit: u64::from(conflict.written),
            origin: u64::try_from(grid.origin()).unwrap_or(u64::MAX),
        };
        if reply != Some(expected) {
            let key = self.key_of(caller);
            self.report(Invariant::Configuration, Some(caller), || {
                format!("request {request} decided key {key} by {} where {conflict}: it answered {reply:?}, not {expected:?}", conflict.proposed)
            });
        }
    }
}
