//! The planted lease bugs' client side: a deadline measured from another instant, and a
//! share kept apart from the protocol's across a change of the limit.

use core::time::Duration;

use fixed_window::Instant;
use fixed_window_redis::{Decision, ScriptReply, Unavailable, coarse_lease_deadline};

use super::Sim;
use crate::shared::planted::SharedPlantedBug;

impl Sim<'_> {
    /// The instants a lease call is finished with: the real ones, or a planted client's.
    pub(super) fn lease_times(
        &self,
        lease: bool,
        (sent, received, deadline): (Instant, Instant, Instant),
    ) -> (Instant, Instant, Instant) {
        match self.planted {
            Some(SharedPlantedBug::DeadlineFromReply) if lease => (received, received, deadline),
            Some(SharedPlantedBug::SharePastDeadline) if lease => {
                let late = Duration::from_micros(self.scenario.period_us);
                (sent.saturating_add(late), received, deadline)
            }
            _ => (sent, received, deadline),
        }
    }

    /// Under the planted `ShareKeptAfterChange`, keeps apart the share a lease call sent at
    /// `sent` installed on `key`.
    pub(super) fn keep_share(
        &mut self,
        process: u16,
        key: u16,
        sent: Instant,
        decision: &Decision,
        reply: &Result<Vec<i64>, Unavailable>,
    ) {
        if self.planted != Some(SharedPlantedBug::ShareKeptAfterChange) {
            return;
        }
        let (Decision::Permitted { remaining, .. }, Ok(values)) = (decision, reply) else {
            return;
        };
        let Some(ScriptReply::Leased {
            now, window_start, ..
        }) = ScriptReply::parse(values)
        else {
            return;
        };
        let (_, period_us) = self.scenario.configured(process);
        let end = window_start.saturating_add(period_us);
        let p = &mut self.processes[process as usize];
        let version = p.protocol.limit_version();
        let resolution = p.protocol.config().clock_resolution();
        if let Some(deadline) = coarse_lease_deadline(sent, now, end, resolution) {
            p.kept_shares.insert(key, (*remaining, deadline, version));
        }
    }

    /// Under the planted `ShareKeptAfterChange`, what the process decides on `n` permits of
    /// `key` at `now` from the share it kept: the protocol's decision mirrored into it, or,
    /// once the process holds a newer limit, a permit from the old share.
    pub(super) fn kept_share(
        &mut self,
        process: u16,
        key: u16,
        n: u32,
        now: Instant,
    ) -> Option<Decision> {
        if self.planted != Some(SharedPlantedBug::ShareKeptAfterChange) {
            return None;
        }
        let p = &mut self.processes[process as usize];
        let version = p.protocol.limit_version();
        let kept = p.kept_shares.get_mut(&key)?;
        let (left, deadline, leased_under) = *kept;
        if leased_under == version || now >= deadline || left < n || n == 0 {
            return None;
        }
        kept.0 = left - n;
        Some(Decision::Permitted {
            remaining: left - n,
            reset: Duration::ZERO,
            window_start: 0,
        })
    }

    /// A permit from the protocol's share left `remaining` of it: the kept one follows.
    pub(super) fn spent_kept(&mut self, process: u16, key: u16, remaining: u32) {
        if let Some(kept) = self.processes[process as usize].kept_shares.get_mut(&key) {
            kept.0 = remaining;
        }
    }
}
