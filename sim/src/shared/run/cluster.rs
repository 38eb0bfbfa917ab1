//! A run on a simulated cluster: each request routed by its process's map of the slots,
//! `MOVED` followed as redis-rs's cluster client follows it (the slot table read again, the
//! call sent again to the primary named, within the attempt's one timeout), and the faults of
//! the cluster's slots and primaries.
//!
//! Each process has one cluster connection (redis-rs's multiplexes one connection per
//! primary behind one handle); its delay and jitter are the process's link, whichever primary
//! a request goes to. A reset of it, or a crash of the process, makes it read the slot table
//! again. The attempts of one slot are batched as on one node, each slot's batch in a call of
//! its own, all sent together, as the production client sends them.

use std::rc::Rc;

use fixed_window_redis::ScriptCall;

use super::{Owner, Sim, Stage};
use crate::shared::cluster::nodes::{ALL_PRIMARIES, Route, moved_to};
use crate::shared::cluster::{ClusterFault, key_slot};
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{FaultRecord, SharedRecord};
use crate::shared::server::Command;

/// `refused`, an attempt `batch` would not take, back, unless a planted client puts it in
/// the batch anyway because only its slot differs ([`SharedPlantedBug::BatchCrossingSlots`]):
/// then it is kept in `strays`, whose keys go with the batch's call, and `None` comes back.
pub(super) fn stray(
    planted: Option<SharedPlantedBug>,
    batch: &ScriptCall,
    refused: ScriptCall,
    strays: &mut Vec<Rc<ScriptCall>>,
) -> Option<ScriptCall> {
    let slot = |call: &ScriptCall| call.counter_key(0).map(key_slot);
    let crossing = planted == Some(SharedPlantedBug::BatchCrossingSlots)
        && slot(&refused).is_some()
        && slot(&refused) != slot(batch);
    if !crossing {
        return Some(refused);
    }
    strays.push(Rc::new(refused));
    None
}

impl Sim<'_> {
    /// Where `command`, sent by `process` for `owner`, goes: on a cluster, the primary its
    /// first key's slot maps to (every primary for `SCRIPT LOAD`).
    pub(super) fn route(&mut self, process: u16, owner: Owner, command: &Command) -> Route {
        let Some(cluster) = &mut self.cluster else {
            return Route::default();
        };
        match command {
            Command::ScriptLoad(_) => Route {
                node: ALL_PRIMARIES,
                strays: Vec::new(),
            },
            Command::EvalSha { call, .. } => {
                let slot = call.keys().next().map_or(0, key_slot);
                // Strays join only the first group's call (see `stray`).
                let strays = match owner {
                    Owner::Batch(_, 0) => cluster.strays[process as usize].clone(),
                    _ => Vec::new(),
                };
                Route {
                    node: cluster.mapped(process, slot),
                    strays,
                }
            }
        }
    }

    /// Whether `request` goes to a primary that is down now.
    pub(super) fn primary_down(&self, request: u32) -> bool {
        self.cluster
            .as_ref()
            .is_some_and(|c| c.down(self.requests[request as usize].route.node, self.now))
    }

    /// Whether the transport follows an error reply: `MOVED`, unless a planted client takes
    /// it for an outage ([`SharedPlantedBug::RedirectNotFollowed`]).
    pub(super) fn follows(&self, message: &str) -> bool {
        self.cluster.is_some()
            && self.planted != Some(SharedPlantedBug::RedirectNotFollowed)
            && moved_to(message).is_some()
    }

    /// `request` of `owner`'s attempt got `MOVED`: the connection reads the slot table again
    /// and sends the same call to the primary that owns the slot now.
    pub(super) fn follow(&mut self, request: u32, owner: Owner, stage: Stage, message: &str) {
        let process = self.requests[request as usize].process;
        if let Some(cluster) = &mut self.cluster {
            cluster.refresh(process);
        }
        let to = moved_to(message).unwrap_or(0);
        for id in self.ids(request) {
            self.records.push(SharedRecord::Redirected {
                t: self.now,
                request: id,
                to,
            });
        }
        self.resend(owner, stage);
        if let Owner::Batch(process, group) = owner
            && stage == Stage::Eval
            && let Some(Some(batch)) = self.processes[process as usize].batch.get(group as usize)
        {
            let request = batch.request;
            self.number_members(process, group, request);
        }
    }

    /// The cluster fault `index` strikes.
    pub(super) fn cluster_fault(&mut self, index: u32) {
        let Some(&(_, fault)) = self
            .scenario
            .cluster
            .as_ref()
            .and_then(|c| c.faults.get(index as usize))
        else {
            return;
        };
        let t = self.now;
        let Some(cluster) = &mut self.cluster else {
            return;
        };
        let record = match fault {
            ClusterFault::Migrate { first, last, to } => {
                let keys = cluster.migrate(first, last, to);
                FaultRecord::Migrated {
                    first,
                    last,
                    to,
                    keys,
                }
            }
            ClusterFault::Failover {
                node,
                lag,
                keeps_scripts,
                down_ns,
            } => {
                let until = t.saturating_add(down_ns);
                let slots = cluster.slots_of(node);
                let undone = cluster.failover(node, lag, keeps_scripts, until);
                let undone = undone
                    .into_iter()
                    .flat_map(|w| self.undone_ids(w.request, w.key))
                    .collect();
                FaultRecord::ShardFailover {
                    node,
                    lag,
                    keeps_scripts,
                    until,
                    slots,
                    undone,
                }
            }
        };
        self.records.push(SharedRecord::Fault { t, fault: record });
    }
}
