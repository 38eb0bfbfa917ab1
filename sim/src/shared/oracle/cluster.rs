//! What the oracle adds for a cluster, and the bound the documentation states for failovers.
//!
//! On a cluster a primary's failover forgets only the writes of that primary: each undone
//! permit is forgotten as on one node, and so are the settings a counter recorded, but the
//! configuration key being among them begins no new epoch (every process keeps its registered
//! origin, and a cluster scenario's origin is fixed, so a process that registers afterwards
//! stores the same grid): the configuration is back to what it was, or not stored. A slot
//! migration moves counters with their counts and settings: the model changes nothing.
//!
//! The stated bound (README, "failover to a replica that lags"): the new primary forgets the
//! permits it had not received, at most `limit` per failover, so each key's window grants at
//! most `limit × (1 + F)` permits, `F` the failovers of the key's primary (of the one server,
//! off a cluster) during that window. It is checked wherever nothing else makes the server
//! forget a window it still serves: not after a restart or a step back of the server's clock
//! (each documented to forget more), in every scenario else, healthy ones included (there it
//! is the window limit itself). Where the processes wait for replicas
//! (`Config::with_wait_for_replicas`), a permit is granted only once the replica acknowledged
//! it, so a failover forgets none that was granted: the bound is `limit`, failovers or not.

use std::collections::BTreeMap;

use super::Checker;
use crate::oracle::Invariant;
use crate::shared::cluster::key_slot;
use crate::shared::record::{FaultRecord, SharedRecord};
use crate::shared::run::{SharedRun, config};

/// A failover as the bound counts it.
#[derive(Debug, Clone)]
pub(super) struct FailoverSeen {
    epoch: u32,
    /// The window it happened in, on the epoch's grid (`None`: no grid yet).
    window: Option<u128>,
    /// When it happened, on the server's clock (µs): on a cluster a key's window may lie on
    /// the grid of another period than the epoch's (`grids.rs`).
    at: u128,
    /// The slots of the primary that failed; `None` for the one server.
    slots: Option<Vec<(u16, u16)>>,
}

impl Checker<'_> {
    /// A failover at virtual time `t` of the server, or of the primary owning `slots`.
    pub(super) fn failover_seen(&mut self, t: u64, slots: Option<Vec<(u16, u16)>>) {
        let now = self.server_us(t);
        let window = self.grid.map(|grid| grid.index_of(now));
        self.failovers.push(FailoverSeen {
            epoch: self.epoch,
            window,
            at: now,
            slots,
        });
    }

    /// A fault only a cluster has.
    pub(super) fn cluster_fault(&mut self, t: u64, fault: &FaultRecord) {
        let FaultRecord::ShardFailover { slots, undone, .. } = fault else {
            // A migration moves each counter with its count.
            return;
        };
        // A key its replica lacked counts too: one being imported lives on the primary
        // before its slot does.
        let mut slots = slots.clone();
        slots.extend(undone.iter().map(|(_, key)| {
            let slot = key_slot(key);
            (slot, slot)
        }));
        self.failover_seen(t, Some(slots));
        for (request, key) in undone {
            if **key == *self.config_key {
                self.undo_config(t, *request);
            } else {
                self.forget(*request);
                self.undo_settings(*request);
            }
        }
        self.last_excuse = Some(t);
    }

    /// Each key's window against `limit × (1 + F)` (see the module's documentation).
    pub(super) fn check_failover_bound(
        &mut self,
        run: &SharedRun,
        limits: &BTreeMap<(u32, u16, u128), u32>,
    ) {
        let forgets_more = run.records.iter().any(|record| {
            matches!(
                record,
                SharedRecord::Fault {
                    fault: FaultRecord::Restart { .. },
                    ..
                }
            ) || matches!(
                record,
                SharedRecord::Fault { fault: FaultRecord::ClockStep { delta_ns }, .. } if *delta_ns < 0
            )
        });
        if forgets_more {
            return;
        }
        self.checks.count(&[Invariant::WindowLimit]);
        // Each window's units, and the period of the settings they were counted under.
        let mut granted: BTreeMap<(u32, u16, u128), (u64, u64)> = BTreeMap::new();
        for (request, info) in (0_u32..).zip(&self.requests) {
            if let Some(counted) = info.counted
                && self.is_granted(request)
            {
                let period = self.scenario.configured(info.process).1;
                granted
                    .entry((counted.epoch, counted.key, counted.window))
                    .or_insert((0, period))
                    .0 += u64::from(self.units(request));
            }
        }
        let probe = config(self.scenario, 0);
        let slot_of =
            |key: u16| key_slot(&probe.cluster_counter_key(&self.scenario.keys[key as usize]));
        let waiting = self.scenario.replication.is_some();
        let mut reports = Vec::new();
        for ((epoch, key, window), (units, period)) in granted {
            // The largest limit a grant of the window was decided under (the stored one, which
            // a change or a process configured apart may have made other than the scenario's).
            let limit = u64::from(
                limits
                    .get(&(epoch, key, window))
                    .copied()
                    .unwrap_or(self.scenario.limit),
            );
            let slot = self.scenario.cluster.as_ref().map(|_| slot_of(key));
            let failovers = self
                .failovers
                .iter()
                .filter(|f| f.epoch == epoch && self.failover_window(f, period) == Some(window))
                .filter(|f| match (&f.slots, slot) {
                    (Some(slots), Some(slot)) => {
                        slots.iter().any(|&(a, b)| (a..=b).contains(&slot))
                    }
                    _ => true,
                })
                .count();
            // Processes waiting for replicas are granted only permits the replica has: a
            // failover forgets none of them.
            let forgetting = if waiting { 0 } else { failovers };
            let bound = limit * (1 + u64::try_from(forgetting).unwrap_or(u64::MAX));
            if units > bound {
                reports.push((key, window, units, failovers, bound));
            }
        }
        for (key, window, units, failovers, bound) in reports {
            self.report(Invariant::WindowLimit, None, || {
                if waiting {
                    format!("{units} permits granted in window {window} of key {key} to processes waiting for replicas, more than the limit {bound} ({failovers} failovers of its primary in the window forget none of them)")
                } else {
                    format!("{units} permits granted in window {window} of key {key}, more than the stated bound {bound} (limit × (1 + {failovers} failovers of its primary in the window))")
                }
            });
        }
    }

    /// The window of a key counted under settings of `period` µs that failover `f` happened
    /// in: on a cluster on that period's grid, on one node on the epoch's.
    fn failover_window(&self, f: &FailoverSeen, period: u64) -> Option<u128> {
        if self.scenario.cluster.is_some() {
            self.grid_for(period).map(|grid| grid.index_of(f.at))
        } else {
            f.window
        }
    }
}
