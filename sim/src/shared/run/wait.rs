//! `WAIT` after each script call, in the scenarios whose processes wait for replicas: the
//! server answers it once the replica acknowledged the connection's writes, or at its timeout
//! (half the process's, in whole milliseconds), and reads nothing more of that connection
//! meanwhile; the reply of the pipeline goes back then, and the client reads too few
//! acknowledgements as `Unavailable` of kind `Unreplicated` by the protocol's rule
//! ([`Protocol::replicated`](fixed_window_redis::Protocol::replicated)), as the production
//! client does.

use super::{Event, Owner, Sim};
use crate::shared::cluster::nodes::ALL_PRIMARIES;
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::{Loss, SharedRecord};
use crate::shared::replication::wait_ns;

impl Sim<'_> {
    /// The epoch of the server, or of the cluster's primary `node`.
    fn epoch_of(&self, node: u8) -> u32 {
        match &self.cluster {
            Some(cluster) => cluster.epoch(node),
            None => self.server.epoch(),
        }
    }

    /// Until when a `WAIT` of `request`'s connection blocks it at the primary it goes to (at
    /// every primary, for one sent to all): 0 if none does.
    pub(super) fn blocked_until(&self, request: u32) -> u64 {
        let r = &self.requests[request as usize];
        let node = r.route.node;
        self.processes[r.process as usize]
            .connection
            .blocked
            .iter()
            .filter(|&&(n, _)| n == node || node == ALL_PRIMARIES)
            .map(|&(_, until)| until)
            .max()
            .unwrap_or(0)
    }

    /// After `request`'s script call ran (the script's effects acknowledged at
    /// `acknowledged_at` if it wrote), its `WAIT`: when it answers and with how many replicas,
    /// the connection blocked until then. Whether a `WAIT` followed (the reply then goes back
    /// when it answers).
    pub(super) fn wait_after(&mut self, request: u32, acknowledged_at: Option<u64>) -> bool {
        let Some(replication) = self.replication.clone() else {
            return false;
        };
        let t = self.now;
        let (process, node) = {
            let r = &self.requests[request as usize];
            (r.process, r.route.node)
        };
        let epoch = self.epoch_of(node);
        let timeout = self.processes[process as usize].protocol.config().timeout();
        let connection = &mut self.processes[process as usize].connection;
        if let Some(at) = acknowledged_at {
            connection.last_write.retain(|&(n, _)| n != node);
            connection.last_write.push((node, at));
        }
        let last = connection
            .last_write
            .iter()
            .find(|&&(n, _)| n == node)
            .map_or(0, |&(_, at)| at);
        let (answer, replicas) = replication.wait(t, last, wait_ns(timeout));
        connection.blocked.retain(|&(n, _)| n != node);
        connection.blocked.push((node, answer));
        let r = &mut self.requests[request as usize];
        r.acknowledged = Some(replicas);
        r.epoch = epoch;
        self.queue.push(answer, Event::Acknowledged(request));
        true
    }

    /// `request`'s `WAIT` answered: its reply goes back, unless its primary failed over or
    /// restarted meanwhile (the connection went with it) or the reply is lost.
    pub(super) fn acknowledged(&mut self, request: u32) {
        let r = &self.requests[request as usize];
        if self.epoch_of(r.route.node) != r.epoch {
            self.lose(request, Loss::Reset);
            return;
        }
        let replicas = r.acknowledged.unwrap_or(0);
        for id in self.ids(request) {
            self.records.push(SharedRecord::Acknowledged {
                t: self.now,
                request: id,
                replicas,
            });
        }
        if self.lost(self.scenario.faults.reply_loss_ppm) {
            self.lose(request, Loss::Reply);
            return;
        }
        self.reply(request);
    }

    /// Whether `request`'s script reply stands: its `WAIT` counted the replicas asked for (or
    /// none followed). Otherwise its owner's attempt ends `Unavailable` (`Unreplicated`),
    /// except in a planted client that ignores the count.
    pub(super) fn replicated_enough(&mut self, owner: Owner, request: u32) -> bool {
        if self.replication.is_none() {
            return true;
        }
        let r = &self.requests[request as usize];
        let mut acknowledged = r.acknowledged.unwrap_or(0);
        if self.planted == Some(SharedPlantedBug::WaitCountOffByOne) {
            // `>` for `>=`: exactly the replicas asked for reads as one too few.
            acknowledged = acknowledged.saturating_sub(1);
        }
        // The protocol's rule, as the production client reads `WAIT`'s answer.
        let Err(unreplicated) = self.processes[r.process as usize]
            .protocol
            .replicated(acknowledged)
        else {
            return true;
        };
        if self.planted == Some(SharedPlantedBug::WaitIgnored) {
            return true;
        }
        self.failed(owner, unreplicated.kind(), unreplicated.message());
        false
    }
}
