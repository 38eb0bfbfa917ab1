//! Limits per key (`docs/rules.md`, "Limits per key" under the shared limiter): each window
//! of a key is counted by the limit its first count was made under (the spec's
//! [`KeyWindow::settle`]), the key's own limit in the process that counted it, or the
//! limiter's. An attempt that would decide the window by another limit must be answered a
//! key conflict, counting nothing, never a permit; one deciding it by the settled limit is
//! decided by it, never refused as a conflict.
//!
//! The model ties a window's settled limit to the model's counter of the key: the server
//! records it in the counter, so a counter the server forgot (lost, expired, or of a window
//! that has ended) settles nothing, and the next count settles the window afresh.

use fixed_window_redis::ScriptReply;
use fixed_window_spec::{Grid, KeyConflict, KeyWindow};

use super::Checker;
use crate::oracle::Invariant;

impl Checker<'_> {
    /// The limit `request`'s attempt on `key` at `server_us` proposes: its process's own
    /// limit for the key, else the limiter's limit in force (`default`).
    fn proposed(&self, request: u32, key: u16, default: u32) -> u32 {
        let process = self.requests[request as usize].process;
        self.scenario
            .key_limits
            .own(process, key)
            .unwrap_or(default)
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

    /// The limit `key`'s window `index` is full at, for `process`: the one it is counted by,
    /// else the one the process would count it by (its own for the key, else `default`).
    pub(super) fn full_at(&self, (process, key): (u16, u16), index: u128, default: u32) -> u32 {
        if self.scenario.key_limits.is_empty() {
            return default;
        }
        self.key_window_at(key, index)
            .limit()
            .or_else(|| self.scenario.key_limits.own(process, key))
            .unwrap_or(default)
    }

    /// What `request`'s attempt on `key` at `server_us` must be decided by: `Ok` with the
    /// limit (the window's, or the one the attempt proposes where none is settled) and the
    /// window as it would settle, or the conflict the server must answer.
    pub(super) fn settle_key(
        &self,
        request: u32,
        key: u16,
        (grid, server_us): (&Grid, u64),
        default: u32,
    ) -> Result<(u32, KeyWindow), KeyConflict> {
        // Without limits of their own, every attempt of a version of the limiter's limit
        // proposes that limit: the stored configuration's rules say it all.
        if self.scenario.key_limits.is_empty() {
            return Ok((default, KeyWindow::default()));
        }
        let mut window = self.key_window(key, grid, server_us);
        let limit = window.settle(self.proposed(request, key, default))?;
        Ok((limit, window))
    }

    /// After an attempt on `key` at `server_us` decided by `window`'s limit: if the model's
    /// counter now holds that window, the window is settled, by its first count or as it was
    /// (an attempt that found the counter forgotten, and counted nothing, settles nothing:
    /// the counter is still absent).
    pub(super) fn key_decided(
        &mut self,
        key: u16,
        (grid, server_us): (&Grid, u64),
        window: KeyWindow,
    ) {
        let index = grid.index_of(u128::from(server_us));
        if let Some(count) = self.counts[key as usize]
            && !self.scenario.key_limits.is_empty()
            && count.index() >= index
        {
            self.key_windows[key as usize] = Some((count.index(), window));
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
