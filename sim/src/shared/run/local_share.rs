//! A process's answer, under [`FailPolicy::Local`](fixed_window_redis::FailPolicy::Local), to
//! an attempt the server could not decide: the product's [`LocalShare`](fixed_window_redis::LocalShare)
//! decides it again, as the limiter's driver does.

use fixed_window::Instant;
use fixed_window_redis::Decision;

use super::Sim;
use super::digest::decision_digest;
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::SharedRecord;

impl Sim<'_> {
    /// What `caller`'s process makes of `decision`, known at its reading `at`: `None` if it
    /// stands (the server decided, or the policy is not `Local`), else the local share's
    /// decision, recorded.
    pub(super) fn by_local_share(
        &mut self,
        caller: u32,
        decision: &Decision,
        at: Instant,
    ) -> Option<Decision> {
        let Decision::Unavailable(cause) = decision else {
            return None;
        };
        let call = &self.calls[caller as usize];
        let (process, key, deadline) = (call.process, call.key, call.deadline);
        let p = &self.processes[process as usize];
        if !p.share.is_active() {
            return None;
        }
        let weight = self.scenario.callers[caller as usize].weight.permits();
        let name = &self.scenario.keys[key as usize];
        // The key's own limit in force in the process, as the limiter's driver takes it; the
        // planted bug keeps the one the process was configured with.
        let own = if self.planted == Some(SharedPlantedBug::LocalShareBuilt) {
            self.scenario.key_limits.own(process, key)
        } else {
            p.protocol.own_limit(name)
        };
        let shared = if self.planted == Some(SharedPlantedBug::ShareIgnored) && weight.is_some() {
            Decision::FailedOpen(cause.clone())
        } else {
            p.share
                .decide(name, own, weight, at, deadline, cause.clone())
        };
        let version = p.protocol.limit_version();
        self.records.push(SharedRecord::Shared {
            t: self.now,
            caller,
            at: at.as_nanos(),
            decision: decision_digest(&shared),
            version,
        });
        Some(shared)
    }
}
