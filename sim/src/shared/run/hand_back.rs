//! Hand-backs of unspent shares: a process calls `hand_back` as the limiter does. The
//! protocol's [`hand_back_calls`](fixed_window_redis::Protocol::hand_back_calls) take each
//! share's rest out of the process's hands and give one script call per key; each goes as its
//! own call over the process's connection (not batched with attempts), bounded by the
//! timeout, and is finished by [`finish_hand_back`](fixed_window_redis::Protocol::finish_hand_back).
//!
//! A process with no limiter when its hand-back is due (not started, registering, its
//! registration failed, or crashed) hands back nothing; a crash ends the calls in flight.

use core::time::Duration;
use std::collections::HashMap;
use std::rc::Rc;

use fixed_window_redis::{Decision, ScriptCall, Unavailable};

use super::{Attempt, Event, Owner, Sim};
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{Loss, SharedRecord};
use crate::shared::server::Command;

/// The hand-back calls of a run.
#[derive(Debug, Default)]
pub(super) struct Handing {
    /// Each hand-back call's round trip, while it is under way (one per key handed back).
    pub(super) calls: Vec<Option<Attempt>>,
    /// Under the planted `SpendsHandedBack`, the rests each process handed back and still
    /// spends, per (process, key).
    spent: HashMap<(u16, u16), u32>,
}

impl Sim<'_> {
    /// Plans the scenario's hand-backs, each at its time.
    pub(super) fn plan_hand_backs(&mut self) {
        for (index, hand_back) in (0_u32..).zip(&self.scenario.hand_backs) {
            self.queue.push(hand_back.at, Event::HandBack(index));
        }
    }

    /// The scenario's hand-back `index` is due: its process calls `hand_back`.
    pub(super) fn hand_back(&mut self, index: u32) {
        let process = self.scenario.hand_backs[index as usize].process;
        let p = &self.processes[process as usize];
        if !(p.up && p.ready) {
            return;
        }
        let mut calls = p.protocol.hand_back_calls();
        // In the order of their keys: the protocol gives them in its map's order, which
        // varies from run to run.
        calls.sort_by(|a, b| a.counter_key(0).cmp(&b.counter_key(0)));
        let now = self.local(process);
        for call in calls {
            self.keep_handed_back(process, &call);
            let slot = u32::try_from(self.handing.calls.len()).unwrap_or(u32::MAX);
            self.handing.calls.push(None);
            let number = self.next_attempt;
            self.next_attempt += 1;
            let owner = Owner::HandBack(process, slot);
            let attempt = self.eval(process, owner, Rc::new(call), number, now);
            self.handing.calls[slot as usize] = Some(attempt);
            self.arm_timeout(process, owner, number, self.now);
        }
    }

    /// What hand-back `call` of `process`, sent (`again`) as `request`, carries, as the trace
    /// records it; `None` for any other command.
    pub(super) fn hand_back_record(
        &self,
        (owner, process): (Owner, u16),
        command: &Command,
        request: u32,
        again: bool,
    ) -> Option<SharedRecord> {
        let (Owner::HandBack(..), Command::EvalSha { call, .. }) = (owner, command) else {
            return None;
        };
        let (key, window_start, permits) = self.handed_back_args(process, call)?;
        Some(SharedRecord::HandBack {
            t: self.now,
            request,
            process,
            key,
            window_start,
            permits,
            again,
        })
    }

    /// The key (its index in the scenario), the window start and the permits a hand-back
    /// call of `process` carries.
    fn handed_back_args(&self, process: u16, call: &ScriptCall) -> Option<(u16, u64, u32)> {
        let counter = call.counter_key(0)?;
        let config = super::config(self.scenario, process as usize);
        let key = self.scenario.keys.iter().position(|key| {
            let own = if self.scenario.cluster.is_some() {
                config.cluster_counter_key(key)
            } else {
                config.counter_key(key)
            };
            own == counter
        })?;
        let mut args = call.args().skip(8);
        let window_start = args.next()?.parse().ok()?;
        let permits = args.next()?.parse().ok()?;
        Some((u16::try_from(key).ok()?, window_start, permits))
    }

    /// The round trip of hand-back call `slot` of `process` is over: `reply` is the script's,
    /// or why there is none.
    pub(super) fn hand_back_replied(
        &mut self,
        process: u16,
        slot: u32,
        reply: &Result<Vec<i64>, Unavailable>,
    ) {
        let Some(attempt) = self.handing.calls[slot as usize].take() else {
            return;
        };
        let protocol = &self.processes[process as usize].protocol;
        let taken = protocol
            .finish_hand_back(reply.as_deref().map_err(Clone::clone))
            .ok();
        self.records.push(SharedRecord::HandedBack {
            t: self.now,
            request: attempt.request,
            taken,
        });
    }

    /// `process` crashed: its hand-back calls in flight end with it.
    pub(super) fn drop_hand_backs(&mut self, process: u16) {
        self.handing.spent.retain(|&(p, _), _| p != process);
        for slot in 0..self.handing.calls.len() {
            let mine = self.requests.get(
                self.handing.calls[slot]
                    .as_ref()
                    .map_or(u32::MAX, |attempt| attempt.request) as usize,
            );
            if mine.is_none_or(|request| request.process != process) {
                continue;
            }
            if let Some(attempt) = self.handing.calls[slot].take() {
                self.lose(attempt.request, Loss::Crash);
                self.records.push(SharedRecord::HandedBack {
                    t: self.now,
                    request: attempt.request,
                    taken: None,
                });
            }
        }
    }

    /// Under the planted `SpendsHandedBack`, keeps the rest hand-back `call` of `process`
    /// carries to spend it still.
    fn keep_handed_back(&mut self, process: u16, call: &ScriptCall) {
        if self.planted != Some(SharedPlantedBug::SpendsHandedBack) {
            return;
        }
        if let Some((key, _, permits)) = self.handed_back_args(process, call) {
            self.handing.spent.insert((process, key), permits);
        }
    }

    /// Under the planted `SpendsHandedBack`, a permit for `n` of `key` from the rest `process`
    /// handed back, as a client that goes on spending it grants one.
    pub(super) fn spend_handed_back(&mut self, process: u16, key: u16, n: u32) -> Option<Decision> {
        if self.planted != Some(SharedPlantedBug::SpendsHandedBack) || n == 0 {
            return None;
        }
        let left = self
            .handing
            .spent
            .get_mut(&(process, key))
            .filter(|left| **left >= n)?;
        *left -= n;
        Some(Decision::Permitted {
            remaining: *left,
            reset: Duration::ZERO,
            window_start: 0,
        })
    }
}
