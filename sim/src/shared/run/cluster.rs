//! A run on a simulated cluster: each request routed by its process's map of the slots,
//! redirections followed as redis-rs 1.8's cluster client follows them, within the attempt's
//! one timeout: `MOVED` (the slot table read again, the call sent again to the primary
//! named), `ASK` (`ASKING`, awaited, then the call, to the primary named, the map unchanged;
//! the call's later retries go there too) and `TRYAGAIN` (the call sent again where it went,
//! after redis-rs's wait: 1,280 ms for its first seven retries, then a draw up to ten times
//! two to the retry's number, in milliseconds), sixteen of them at most, the next answer
//! ending the call; and the faults of the cluster's slots and primaries, a slot migration in
//! steps.
//!
//! Each process has one cluster connection (redis-rs's multiplexes one connection per
//! primary behind one handle); its delay and jitter are the process's link, whichever primary
//! a request goes to. A reset of it, or a crash of the process, makes it read the slot table
//! again. The attempts of one slot are batched as on one node, each slot's batch in a call of
//! its own, all sent together, as the production client sends them.

use core::time::Duration;
use std::rc::Rc;

use fixed_window_redis::{ScriptCall, UnavailableKind};
use rand::RngExt;

use super::{CLUSTER_RETRIES, Event, Owner, Sim, Stage};
use crate::shared::cluster::nodes::{ALL_PRIMARIES, Finished, Redirect, Route, redirect};
use crate::shared::cluster::{ClusterFault, key_slot};
use crate::shared::keyspace::Expired;
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{FaultRecord, RedirectKind, SharedRecord};
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
                asking: None,
            },
            Command::EvalSha { .. } if self.asking.is_some() => {
                let (node, migration) = self.asking.take().unwrap_or_default();
                Route {
                    node,
                    strays: Vec::new(),
                    asking: Some(migration),
                }
            }
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
                    asking: None,
                }
            }
        }
    }

    /// Whether `request` goes to a primary that is down now.
    /// Until when the primary `request` goes to reads nothing, if it is stalled now.
    pub(super) fn primary_stalled(&self, request: u32) -> Option<u64> {
        self.cluster
            .as_ref()?
            .stalled(self.requests[request as usize].route.node, self.now)
    }

    pub(super) fn primary_down(&self, request: u32) -> bool {
        self.cluster
            .as_ref()
            .is_some_and(|c| c.down(self.requests[request as usize].route.node, self.now))
    }

    /// Whether the transport follows an error reply: `MOVED`, `ASK` or `TRYAGAIN`, unless a
    /// planted client takes `MOVED` ([`SharedPlantedBug::RedirectNotFollowed`]) or `ASK`
    /// ([`SharedPlantedBug::AskNotFollowed`]) for an outage.
    pub(super) fn follows(&self, message: &str) -> bool {
        if self.cluster.is_none() {
            return false;
        }
        match (redirect(message), self.planted) {
            (None, _)
            | (Some(Redirect::Moved(_)), Some(SharedPlantedBug::RedirectNotFollowed))
            | (Some(Redirect::Ask(_)), Some(SharedPlantedBug::AskNotFollowed)) => false,
            (Some(_), _) => true,
        }
    }

    /// `request` of `owner`'s attempt got `MOVED`, `ASK` or `TRYAGAIN` in `message`: the
    /// connection follows it, unless the call has used up its retries.
    pub(super) fn follow(&mut self, request: u32, owner: Owner, stage: Stage, message: &str) {
        let Some(answer) = redirect(message) else {
            return;
        };
        let process = self.requests[request as usize].process;
        let node = self.requests[request as usize].route.node;
        let migration = self.requests[request as usize]
            .migration
            .unwrap_or(u32::MAX);
        let Some(attempt) = self.attempt_of(owner) else {
            return;
        };
        if attempt.hops >= CLUSTER_RETRIES {
            self.failed(owner, UnavailableKind::Server, message);
            return;
        }
        attempt.hops += 1;
        let (kind, to) = match answer {
            Redirect::Moved(to) => {
                attempt.asked = None;
                (RedirectKind::Moved, to)
            }
            Redirect::Ask(to) => {
                attempt.asked = Some((to, migration));
                (RedirectKind::Ask, to)
            }
            Redirect::TryAgain => (RedirectKind::TryAgain, node),
        };
        let (number, hops) = (attempt.number, attempt.hops);
        for id in self.ids(request) {
            self.records.push(SharedRecord::Redirected {
                t: self.now,
                request: id,
                to,
                kind,
            });
        }
        match answer {
            Redirect::Moved(_) => {
                if let Some(cluster) = &mut self.cluster {
                    cluster.refresh(process);
                }
                self.send_again(owner, stage);
            }
            Redirect::Ask(to) => {
                self.asking = Some((to, migration));
                self.send_again(owner, stage);
            }
            Redirect::TryAgain => {
                let wait = self.try_again_wait(hops);
                let at = self.after(process, wait);
                self.queue.push(at, Event::TryAgain(owner, number));
            }
        }
    }

    /// How long redis-rs waits before its `retry`th retry of a call answered `TRYAGAIN`:
    /// a draw from 1,280 ms up to (not including) `10 × 2^retry` ms, kept within 1,281 and
    /// 655,360 ms.
    fn try_again_wait(&mut self, retry: u32) -> Duration {
        const LEAST_MS: u64 = 1_280;
        const MOST_MS: u64 = 655_360;
        let base = 2_u64
            .checked_pow(retry)
            .map_or(u64::MAX, |power| power.saturating_mul(10));
        let upper = base.clamp(LEAST_MS + 1, MOST_MS);
        Duration::from_millis(self.waits.random_range(LEAST_MS..upper))
    }

    /// The attempt `number` of `owner`, answered `TRYAGAIN`, sends its call again: where it
    /// went, after `ASKING` again if an `ASK` sent it there.
    pub(super) fn try_again(&mut self, owner: Owner, number: u32) {
        let Some(attempt) = self.attempt_of(owner).filter(|a| a.number == number) else {
            return;
        };
        let (stage, asked) = (attempt.stage, attempt.asked);
        if !matches!(stage, Stage::Eval | Stage::EvalAgain) {
            return;
        }
        self.asking = asked;
        self.send_again(owner, stage);
    }

    /// Sends `owner`'s call again at `stage`, its batch's members numbered anew.
    fn send_again(&mut self, owner: Owner, stage: Stage) {
        self.resend(owner, stage);
        // `resend` took the route; a request it did not send leaves none behind.
        self.asking = None;
        if let Owner::Batch(process, group) = owner
            && stage == Stage::Eval
            && let Some(Some(batch)) = self.processes[process as usize].batch.get(group as usize)
        {
            let request = batch.request;
            self.number_members(process, group, request);
        }
    }

    /// The cluster fault the scenario planned as `index`, if any.
    fn planned_cluster_fault(&self, index: u32) -> Option<ClusterFault> {
        let cluster = self.scenario.cluster.as_ref()?;
        cluster.faults.get(index as usize).map(|&(_, fault)| fault)
    }

    /// The cluster fault `index` strikes.
    pub(super) fn cluster_fault(&mut self, index: u32) {
        let Some(fault) = self.planned_cluster_fault(index) else {
            return;
        };
        let t = self.now;
        let Some(cluster) = &mut self.cluster else {
            return;
        };
        let record = match fault {
            ClusterFault::Migrate {
                first,
                last,
                to,
                moves,
                step_ns,
                ..
            } => {
                let (migration, finished) = cluster.begin_migration(index, first, last, to, t);
                if let Some(finished) = finished {
                    self.finished(finished);
                }
                for step in 1..=moves.max(1) {
                    let at = t.saturating_add(step_ns.saturating_mul(u64::from(step)));
                    self.queue.push(at, Event::MigrationStep(index, step));
                }
                FaultRecord::Migrating {
                    first,
                    last,
                    from: migration.from,
                    to: migration.to,
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
                let undone = cluster.failover(node, (lag, keeps_scripts), t, until);
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
            ClusterFault::Stall { node, stall_ns } => {
                let until = t.saturating_add(stall_ns);
                cluster.stall(node, until);
                FaultRecord::ShardStalled { node, until }
            }
        };
        self.records.push(SharedRecord::Fault { t, fault: record });
    }

    /// Step `step` of the migration that is cluster fault `index`, if it is still under way:
    /// keys move, and at the last step the rest move and the slots' owner changes.
    pub(super) fn migration_step(&mut self, index: u32, step: u8) {
        let Some(ClusterFault::Migrate {
            moves, per_move, ..
        }) = self.planned_cluster_fault(index)
        else {
            return;
        };
        let t = self.now;
        let Some(cluster) = &mut self.cluster else {
            return;
        };
        let Some(migration) = cluster.migrating().filter(|m| m.fault == index) else {
            // Ended early, as the next one began.
            return;
        };
        if step < moves {
            let (keys, expired) = cluster.move_keys(usize::from(per_move.max(1)), t);
            self.found_expired(expired);
            self.records.push(SharedRecord::Fault {
                t,
                fault: FaultRecord::KeysMigrated {
                    to: migration.to,
                    keys,
                },
            });
        } else if let Some(finished) = cluster.finish(t) {
            self.finished(finished);
        }
    }

    /// Records a migration that ended: its last keys moved and the owner changed.
    fn finished(&mut self, finished: Finished) {
        self.found_expired(finished.expired);
        let migration = finished.migration;
        self.records.push(SharedRecord::Fault {
            t: self.now,
            fault: FaultRecord::Migrated {
                first: migration.first,
                last: migration.last,
                to: migration.to,
                keys: finished.keys,
            },
        });
    }

    /// Records keys a primary found expired outside a script.
    fn found_expired(&mut self, expired: Vec<Expired>) {
        for expired in expired {
            self.records.push(SharedRecord::Expired {
                t: self.now,
                key: expired.key,
                expires_at_ms: expired.expires_at_ms,
            });
        }
    }
}
