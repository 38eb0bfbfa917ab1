//! Liveness per node: one primary's trouble costs only its own keys. A process's attempts on
//! different primaries proceed independently, so an attempt that waits for a script call
//! waits only behind a call of its own hash slot (which one primary owns), and goes out the
//! moment that call ends; never behind a call to another primary, which may be stalled,
//! failing or waiting for a stalled replica, and would hold up the keys of the healthy ones.
//!
//! Judged from the trace alone: when each attempt began to wait (`Queued`), when each call
//! carrying attempts ended and for which slot (`CallEnded`), and when the attempt was sent.
//! The slot of a caller's key is computed here from the key (Redis's rule, `key_slot`), not
//! taken from the client. On one node every attempt is of the one lane, and the rule says
//! that an attempt waits only while a call is in flight.

use std::collections::HashMap;

use super::Checker;
use crate::oracle::Invariant;
use crate::shared::cluster::key_slot;
use crate::shared::record::Purpose;
use crate::shared::run::config;
use crate::shared::scenario::SharedScenario;

/// What the rule follows through the trace.
#[derive(Debug, Default)]
pub(super) struct Lanes {
    /// Each key's slot on a cluster; `None` on one node.
    slots: Vec<Option<u16>>,
    /// Per caller whose attempt waits unsent: when it began to wait.
    waiting: HashMap<u32, u64>,
    /// Per process and slot, when its last call of that slot ended.
    ended: HashMap<(u16, Option<u16>), u64>,
}

impl Lanes {
    pub(super) fn of(scenario: &SharedScenario) -> Lanes {
        let probe = config(scenario, 0);
        Lanes {
            slots: scenario
                .keys
                .iter()
                .map(|key| {
                    scenario
                        .cluster
                        .as_ref()
                        .map(|_| key_slot(&probe.cluster_counter_key(key)))
                })
                .collect(),
            ..Lanes::default()
        }
    }
}

impl Checker<'_> {
    /// `caller`'s attempt began to wait for a call at `t`.
    pub(super) fn attempt_queued(&mut self, t: u64, caller: u32) {
        self.lanes.waiting.insert(caller, t);
    }

    /// A call of `process` carrying attempts of `slot` ended at `t`.
    pub(super) fn call_ended(&mut self, t: u64, process: u16, slot: Option<u16>) {
        self.lanes.ended.insert((process, slot), t);
    }

    /// A request went out at `t`: if it carries the attempt `caller` waited with, the attempt
    /// went at once, or the moment a call of its own slot ended.
    pub(super) fn lane_sent(
        &mut self,
        t: u64,
        caller: Option<u32>,
        process: u16,
        purpose: Purpose,
    ) {
        let Some(caller) = caller.filter(|_| purpose == Purpose::Acquire) else {
            return;
        };
        let Some(since) = self.lanes.waiting.remove(&caller) else {
            return;
        };
        self.checks.count(&[Invariant::Liveness]);
        let key = self.scenario.callers[caller as usize].key;
        let slot = self.lanes.slots.get(key as usize).copied().flatten();
        let released = self.lanes.ended.get(&(process, slot)) == Some(&t);
        if t > since && !released {
            self.report(Invariant::Liveness, Some(caller), || match slot {
                Some(slot) => format!(
                    "an attempt on slot {slot} waited from {since} to {t}, behind calls to other slots (another primary's trouble held it up)"
                ),
                None => format!("an attempt waited from {since} to {t} with no call in flight"),
            });
        }
    }
}
