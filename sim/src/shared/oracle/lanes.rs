//! Liveness per node: one primary's trouble costs only its own keys. A process's attempts on
//! different primaries proceed independently, so an attempt that waits for a script call
//! waits only behind a call of its own hash slot (which one primary owns), and goes out the
//! moment that call ends; never behind a call to another primary, which may be stalled,
//! failing or waiting for a stalled replica, and would hold up the keys of the healthy ones.
//!
//! Judged from the trace alone: when each attempt began to wait (`Queued`), when each call
//! carrying attempts ended and for which slot (`CallEnded`), and when the attempt was sent:
//! the first send of a call carrying it, never a call sent again after a redirect or a
//! `NOSCRIPT` (`Sent`'s `again`), which carries attempts taken from the queue before. A
//! caller that gave up on its attempt in such a call (timed out) and queued another is named
//! by the call's later sends too, while its new attempt still waits behind that call, of its
//! own slot, as the product's coalescer keeps a lane's call in flight until it ends.
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
    pub(super) waiting: HashMap<u32, u64>,
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

    /// A request went out at `t` (`again`: a call already sent, sent again): if it is the
    /// first send of a call carrying the attempt `caller` waited with, the attempt went at
    /// once, or the moment a call of its own slot ended. A call sent again carries attempts
    /// taken from the queue before, and may name a caller that has queued another since.
    pub(super) fn lane_sent(
        &mut self,
        t: u64,
        (caller, again): (Option<u32>, bool),
        process: u16,
        purpose: Purpose,
    ) {
        // A peek's call goes in its lane as an attempt's does.
        let Some(caller) =
            caller.filter(|_| matches!(purpose, Purpose::Acquire | Purpose::Peek) && !again)
        else {
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
