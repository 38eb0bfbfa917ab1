//! Which grid a window lies on. On one node every window of an epoch lies on the stored
//! configuration's grid: every attempt reads it, and one of another period is refused. On a
//! cluster no attempt reads the configuration: each counter records the settings that began
//! it, and a process with other settings is refused by that counter only. So once the
//! configuration key is lost (a restart, or a failover of its primary) and a process of
//! another period registers afresh, both periods count, each key's window on the grid of
//! whichever process began it (`redis/README.md`: a cluster's configuration key lost), and a
//! key's grid changes only when its counter is gone. A cluster's origin is fixed, so each
//! period's grid is known: the fixed origin's, reduced as the client reduces it.

use fixed_window_spec::Grid;

use super::Checker;
use super::limits::Expect;

impl Checker<'_> {
    /// The grid windows of `period` µs lie on: on a cluster that period's own; on one node
    /// the epoch's (`None` before anything is stored).
    pub(super) fn grid_for(&self, period: u64) -> Option<Grid> {
        if self.scenario.cluster.is_some() {
            Some(self.grid_of(period, 0))
        } else {
            self.grid
        }
    }

    /// The grid of `key`'s counter: on a cluster that of the settings it records (the
    /// epoch's while there is none), on one node the epoch's.
    pub(super) fn key_grid(&self, key: u16) -> Option<Grid> {
        match self.settings.get(key as usize).copied().flatten() {
            Some(settings) if self.scenario.cluster.is_some() => self.grid_for(settings.period),
            _ => self.grid,
        }
    }

    /// The grid a script run of `request` is judged on, once the run's check of the
    /// configuration (`expect`) is known: that of the settings it is refused or told of, or
    /// else of the period it carries (which, decided, is the one stored or its counter's).
    pub(super) fn run_grid(&self, request: u32, expect: Expect) -> Option<Grid> {
        let period = match expect {
            Expect::Refuse(stored) | Expect::Changed(stored) => stored.period,
            Expect::Decide => {
                let process = self.requests[request as usize].process;
                self.scenario.configured(process).1
            }
        };
        self.grid_for(period)
    }
}
