//! The stored configuration and its versions: what each script run must do with it (store it,
//! refuse a conflicting one, tell a process of an older version the limit in force, or write
//! a change of the limit), what a failover undoing a write of it restores, and how each
//! process's `set_limit` may end.

use core::num::NonZeroU128;

use fixed_window_redis::ScriptReply;
use fixed_window_spec::{Count, Grid};

use super::{Checker, Stored};
use crate::oracle::{Invariant, Violation};
use crate::shared::record::{LimitOutcome, Purpose, ReplyDigest};

/// A write of a counter's settings on a cluster, as a failover undoing it must restore.
#[derive(Debug, Clone, Copy)]
pub(super) struct SettingsWrite {
    request: u32,
    key: u16,
    /// The settings it replaced.
    before: Option<Stored>,
    /// The count it replaced, if it rewrote a counter whose window had ended.
    count: Option<Count>,
}

/// What a script run must do, by the configuration stored and the one its request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    /// Refuse it (another period, or another limit under the same version) with these
    /// settings, the stored configuration's or, counting on a cluster, the counter's: counting
    /// nothing.
    Refuse(Stored),
    /// Answer the limit in force and its version ("changed"), counting nothing: the request
    /// carries an older version, or it is a change of the limit, which stored this.
    Changed(Stored),
    /// Decide (count, or register) under the limit in force.
    Decide,
}

impl Checker<'_> {
    /// What the script run of `request` (at virtual time `t`, server time `server_us`) must do,
    /// with the model of the stored configuration brought up to what that run stores.
    pub(super) fn configure(
        &mut self,
        t: u64,
        request: u32,
        purpose: Purpose,
        server_us: u64,
    ) -> Expect {
        let info = &self.requests[request as usize];
        let (limit, version) = info.carried;
        let period = self.scenario.configured(info.process).1;
        let carried = Stored {
            limit,
            period,
            version,
        };
        if self.scenario.cluster.is_some() && purpose == Purpose::Acquire {
            return self.configure_counter(request, carried, server_us);
        }
        let expect = match (purpose, self.stored) {
            (_, Some(stored)) if stored.period != period => Expect::Refuse(stored),
            // A change of the limit stores the next version, keeping the origin (or storing
            // one, if nothing is stored). A live change of a key's limit keeps the limiter's
            // limit stored (the one it carries if none is).
            (Purpose::Limit, stored) => {
                let version = stored.map_or(version, |s| s.version.max(version)) + 1;
                let live = self.requests[request as usize]
                    .change
                    .and_then(|change| self.scenario.live_change(change));
                let limit = match (live, stored) {
                    (Some(_), Some(stored)) => stored.limit,
                    _ => limit,
                };
                let changed = Stored {
                    limit,
                    version,
                    ..carried
                };
                self.write_config(t, request, changed);
                if let Some(live) = live {
                    self.changed_live(t, live, version);
                }
                Expect::Changed(changed)
            }
            (_, None) => {
                self.write_config(t, request, carried);
                Expect::Decide
            }
            (_, Some(stored)) if stored.version > version => Expect::Changed(stored),
            (_, Some(stored)) if stored.version == version && stored.limit != limit => {
                Expect::Refuse(stored)
            }
            // Stored anew (lost) by a process that had not learnt the change: the newer
            // version the request carries is written back.
            (_, Some(stored)) if stored.version < version => {
                self.write_config(t, request, carried);
                Expect::Decide
            }
            _ => Expect::Decide,
        };
        if self.grid.is_none()
            && let Some(stored) = self.stored
        {
            self.grid = Some(self.grid_of(stored.period, server_us));
        }
        expect
    }

    /// The grid of `period` µs through the fixed origin, or else from `server_us`. A fixed
    /// origin is a boundary of a grid that has boundaries whole periods before it too, and is
    /// stored as the first of them after the epoch (`docs/rules.md`: The origin): the grid is
    /// numbered from there.
    pub(super) fn grid_of(&self, period: u64, server_us: u64) -> Grid {
        let period = NonZeroU128::new(u128::from(period)).unwrap_or(NonZeroU128::MIN);
        let origin = self
            .scenario
            .origin
            .map_or(u128::from(server_us), |origin| u128::from(origin) % period);
        Grid::new(origin, period)
    }

    /// What an attempt counting on a cluster must do, by the settings its key's counter
    /// records (no configuration is read there): answer "changed" from a counter of a newer
    /// version, refuse one of the same version and another limit, and otherwise decide under
    /// the limit the request carries, writing its settings over those of an older version
    /// (whether or not the attempt counts: a counter of a window that has ended is written as
    /// the current window's, with nothing counted yet). A cluster scenario's origin is fixed,
    /// so its grid is known from the first attempt.
    fn configure_counter(&mut self, request: u32, carried: Stored, server_us: u64) -> Expect {
        if self.grid.is_none() {
            self.grid = Some(self.grid_of(carried.period, 0));
        }
        let key = self.requests[request as usize]
            .caller
            .map_or(0, |caller| self.scenario.callers[caller as usize].key);
        match self.settings[key as usize] {
            Some(counter) if counter.period != carried.period => Expect::Refuse(counter),
            Some(counter) if counter.version > carried.version => Expect::Changed(counter),
            Some(counter)
                if counter.version == carried.version && counter.limit != carried.limit =>
            {
                Expect::Refuse(counter)
            }
            Some(counter) if counter.version < carried.version => {
                let count = self.counts[key as usize];
                self.write_settings(request, key, carried);
                if let (Some(before), Some(grid)) = (count, self.grid_for(carried.period)) {
                    let (index, used) = before.at(&grid, u128::from(server_us));
                    self.counts[key as usize] = Some(Count::stored(index, used));
                    if let Some(write) = self.settings_writes.last_mut() {
                        write.count = Some(before);
                    }
                }
                Expect::Decide
            }
            _ => Expect::Decide,
        }
    }

    /// `request` wrote `settings` into `key`'s counter on a cluster.
    pub(super) fn write_settings(&mut self, request: u32, key: u16, settings: Stored) {
        let before = self.settings[key as usize];
        // A process remembering the key's window full may go on rejecting it locally until
        // it learns of a raise, as on one node.
        if before.is_some_and(|b| settings.limit > b.limit) {
            self.last_raise = Some(self.requests[request as usize].ran_at);
        }
        // Kept even when it changes nothing: a failover undoing a run of writes restores what
        // the oldest of them found, which the settings forgotten with a key found expired
        // among them would otherwise hide.
        self.settings_writes.push(SettingsWrite {
            request,
            key,
            before,
            count: None,
        });
        self.settings[key as usize] = Some(settings);
    }

    /// Whether `request`, the script run being judged, wrote the settings of `key`'s counter
    /// (on a cluster): its writes are the latest.
    pub(super) fn settings_written(&self, request: u32, key: u16) -> bool {
        self.settings_writes
            .iter()
            .rev()
            .take_while(|w| w.request == request)
            .any(|w| w.key == key)
    }

    /// A failover undid `request`'s writes of counters' settings: each counter records what
    /// it did before them, and holds the count it held if the write moved it to a new window.
    pub(super) fn undo_settings(&mut self, request: u32) {
        while let Some(at) = self
            .settings_writes
            .iter()
            .rposition(|w| w.request == request)
        {
            let write = self.settings_writes.remove(at);
            self.settings[write.key as usize] = write.before;
            self.undo_key_window(write.request, write.key);
            if let Some(count) = write.count {
                self.counts[write.key as usize] = Some(count);
            }
        }
    }

    /// `request` writes `stored` as the configuration at virtual time `t`.
    fn write_config(&mut self, t: u64, request: u32, stored: Stored) {
        let before = self.stored;
        if before.is_some_and(|b| stored.limit > b.limit) {
            self.last_raise = Some(t);
        }
        if stored.version > 0 {
            self.changed_limits.push(stored.limit);
        }
        self.config_writes.push((request, before));
        self.stored = Some(stored);
    }

    /// A failover undid `request`'s write of the configuration at virtual time `t`: the
    /// configuration it replaced is back, or, if there was none, everything of the epoch is
    /// lost.
    ///
    /// On a cluster the configuration is one key among many: losing it begins no epoch (the
    /// origin is fixed and every counter keeps its count), it is only not stored.
    pub(super) fn undo_config(&mut self, t: u64, request: u32) {
        let cluster = self.scenario.cluster.is_some();
        let Some(at) = self.config_writes.iter().rposition(|&(r, _)| r == request) else {
            if !cluster {
                self.new_epoch();
            }
            return;
        };
        let (_, before) = self.config_writes[at];
        self.config_writes.truncate(at);
        match before {
            None if cluster => self.stored = None,
            None => self.new_epoch(),
            Some(before) => {
                if before.limit > self.limit() {
                    self.last_raise = Some(t);
                }
                self.stored = Some(before);
            }
        }
    }

    /// The run of `request` had to answer "changed" with `stored` (and the shared origin);
    /// whether it did.
    pub(super) fn changed_reply(
        &mut self,
        request: u32,
        caller: Option<u32>,
        grid: Grid,
        stored: Stored,
        reply: Option<ScriptReply>,
    ) -> bool {
        self.checks.count(&[Invariant::Configuration]);
        let expected = ScriptReply::Changed {
            limit: stored.limit,
            version: stored.version,
            origin: u64::try_from(grid.origin()).unwrap_or(u64::MAX),
        };
        if reply == Some(expected) {
            return true;
        }
        let carried = self.requests[request as usize].carried;
        self.report(Invariant::Configuration, caller, || {
            format!("request {request}, carrying limit {} of version {}, answered {reply:?}, not {expected:?}: version {} is stored", carried.0, carried.1, stored.version)
        });
        false
    }

    /// A process's `set_limit(limit)`, change `change`, ended with `outcome`: 0 is refused
    /// with nothing sent, any other limit sent; a change ends set, refused or unavailable as
    /// the server's answer to it (or its absence) says.
    pub(super) fn limit_set(&mut self, change: u32, limit: u32, outcome: LimitOutcome) {
        self.checks
            .count(&[Invariant::Events, Invariant::Configuration]);
        let requests: Vec<u32> = (0_u32..)
            .zip(&self.requests)
            .filter(|(_, info)| info.change == Some(change))
            .map(|(request, _)| request)
            .collect();
        let replies: Vec<Option<ScriptReply>> = requests
            .iter()
            .filter_map(|&r| match self.requests[r as usize].reply {
                Some(ReplyDigest::Four { values }) => Some(ScriptReply::parse(&values)),
                _ => None,
            })
            .collect();
        let refused = outcome == LimitOutcome::Refused;
        let crashed = outcome == LimitOutcome::Crashed;
        if (!crashed && refused != (limit == 0)) || (limit == 0 && !requests.is_empty()) {
            self.report(Invariant::Events, None, || {
                format!(
                    "set_limit({limit}) (change {change}) ended {outcome:?} after {} requests",
                    requests.len()
                )
            });
            return;
        }
        let answered = match outcome {
            LimitOutcome::Set { .. } => replies
                .iter()
                .any(|reply| matches!(reply, Some(ScriptReply::Changed { .. }))),
            LimitOutcome::Conflict => replies
                .iter()
                .any(|reply| matches!(reply, Some(ScriptReply::Conflict { .. }))),
            LimitOutcome::Unavailable => {
                self.failed_changes.push((change, self.record));
                true
            }
            LimitOutcome::Refused | LimitOutcome::Crashed => true,
        };
        if !answered {
            self.report(Invariant::Configuration, None, || {
                format!("set_limit({limit}) (change {change}) ended {outcome:?}, which no reply of the server's to it says ({replies:?})")
            });
        }
    }

    /// Each change that ended `Unavailable` must have met a fault on one of its requests.
    pub(super) fn check_failed_changes(&mut self) {
        for (change, record) in std::mem::take(&mut self.failed_changes) {
            let explained = self
                .requests
                .iter()
                .any(|info| info.change == Some(change) && info.faulted);
            if !explained && self.violations.len() < super::MOST_VIOLATIONS {
                self.violations.push(Violation {
                    invariant: Invariant::Unavailable,
                    caller: None,
                    record,
                    detail: format!("set_limit (change {change}) ended unavailable with no fault on its requests"),
                });
            }
        }
    }
}
