//! The faults a run injects: a server's restart or failover, a script flush, a clock step, a
//! connection reset, a client crash.

use fixed_window_redis::{LocalShare, UnavailableKind};

use super::{Event, Owner, Sim, config, protocol};
use crate::shared::faults::{Fault, Refusal};
use crate::shared::record::{EventDigest, FaultRecord, Loss, SharedOutcome, SharedRecord};
use crate::shared::server::Command;

impl Sim<'_> {
    pub(super) fn fault(&mut self, index: u32) {
        let (_, fault) = self.scenario.faults.planned[index as usize];
        let t = self.now;
        let record = match fault {
            Fault::Reset { process } => {
                self.reset(process);
                FaultRecord::Reset { process }
            }
            Fault::Pause { for_ns } => {
                let until = t + for_ns;
                self.paused_until = Some(self.paused_until.map_or(until, |u| u.max(until)));
                self.queue.push(until, Event::Resume);
                FaultRecord::Pause { until }
            }
            Fault::Restart { for_ns } => self.restart(for_ns),
            Fault::Refuse { refusal, for_ns } => {
                let until = t + for_ns;
                match refusal {
                    Refusal::NoUser => self.refuse_user(until),
                    Refusal::PermissionRevoked => self.revoke_permission(until),
                    Refusal::PasswordRotated => self.rotate_password(until),
                    Refusal::AuthRequired => self.require_auth(until),
                    Refusal::HandshakeRefused => self.refuse_handshake(until),
                }
                FaultRecord::AccessRefused { refusal, until }
            }
            Fault::RestartWithoutUser {
                for_ns,
                provisioned_ns,
            } => {
                let restart = self.restart(for_ns);
                self.records.push(SharedRecord::Fault { t, fault: restart });
                let until = t + for_ns + provisioned_ns;
                self.refuse_user(until);
                FaultRecord::AccessRefused {
                    refusal: Refusal::NoUser,
                    until,
                }
            }
            Fault::Failover { lag, keeps_scripts } => {
                let undone = self.server.failover(usize::from(lag), keeps_scripts, t);
                for process in 0..self.processes.len() {
                    self.reset(u16::try_from(process).unwrap_or(0));
                }
                let undone = undone
                    .into_iter()
                    .flat_map(|w| self.undone_ids(w.request, w.key))
                    .collect();
                FaultRecord::Failover {
                    lag,
                    keeps_scripts,
                    undone,
                }
            }
            Fault::Flush => {
                self.server.flush_scripts();
                if let Some(cluster) = &mut self.cluster {
                    cluster.flush_scripts();
                }
                FaultRecord::Flush
            }
            Fault::ClockStep { delta_ns } => {
                self.server.step_clock(delta_ns);
                if let Some(cluster) = &mut self.cluster {
                    cluster.step_clock(delta_ns);
                }
                FaultRecord::ClockStep { delta_ns }
            }
            Fault::Crash { process, for_ns } => {
                self.crash(process, for_ns);
                FaultRecord::Crash {
                    process,
                    until: t + for_ns,
                }
            }
        };
        self.records.push(SharedRecord::Fault { t, fault: record });
    }

    /// A restart without persistence, down for `for_ns`: what was on every connection is
    /// lost.
    fn restart(&mut self, for_ns: u64) -> FaultRecord {
        let t = self.now;
        self.server.restart();
        if let Some(cluster) = &mut self.cluster {
            cluster.restart();
        }
        self.down_until = t + for_ns;
        self.paused_until = None;
        for request in std::mem::take(&mut self.backlog) {
            self.records.push(SharedRecord::Lost {
                t,
                request,
                loss: Loss::Down,
            });
        }
        for process in 0..self.processes.len() {
            self.reset(u16::try_from(process).unwrap_or(0));
        }
        FaultRecord::Restart { until: t + for_ns }
    }

    /// The trace ids whose permits a write undone by a failover took back: a batch's write
    /// of a counter holds the permits of each of its attempts on that key, given newest
    /// first as the writes are (so the last names the key's state before the batch).
    pub(super) fn undone_ids(&self, request: u32, key: Box<str>) -> Vec<(u32, Box<str>)> {
        let r = &self.requests[request as usize];
        let Some(Command::EvalSha { call, .. }) = &r.command else {
            return vec![(request, key)];
        };
        let mut members: Vec<(u32, Box<str>)> = (request..request + r.ids)
            .zip(0..)
            .filter(|&(_, index)| call.counter_key(index) == Some(&*key))
            .map(|(id, _)| (id, key.clone()))
            .collect();
        members.reverse();
        if members.is_empty() {
            vec![(request, key)]
        } else {
            members
        }
    }

    /// Resets `process`'s connection: what was on it is lost, its attempts fail.
    pub(super) fn reset(&mut self, process: u16) {
        let p = &mut self.processes[process as usize];
        p.connection.generation += 1;
        p.connection.reconnect = true;
        p.connection.last_to_server = 0;
        p.connection.last_to_client = 0;
        p.connection.last_write.clear();
        p.connection.blocked.clear();
        // The connection manager connects again: the server authenticates the new connection.
        p.connection.session += 1;
        p.connection.credentials = p.credentials;
        p.connection.kept = None;
        if let Some(cluster) = &mut self.cluster {
            // The cluster connection reconnects, reading the slot table again.
            cluster.refresh(process);
        }
        let p = &self.processes[process as usize];
        let mut owners = Vec::new();
        if let Some(attempt) = &p.registering {
            owners.push((Owner::Register(process), attempt.request));
        }
        for (group, attempt) in (0_u16..).zip(&p.batch) {
            if let Some(attempt) = attempt {
                owners.push((Owner::Batch(process, group), attempt.request));
            }
        }
        for (change, by) in (0_u32..).zip(self.change_processes()) {
            if by == process
                && let Some(attempt) = &self.limit_calls[change as usize]
            {
                owners.push((Owner::Limit(change), attempt.request));
            }
        }
        for (slot, attempt) in (0_u32..).zip(&self.handing.calls) {
            if let Some(attempt) = attempt
                && self.requests[attempt.request as usize].process == process
            {
                owners.push((Owner::HandBack(process, slot), attempt.request));
            }
        }
        for (caller, call) in (0_u32..).zip(&self.calls) {
            if call.process == process
                && !call.done
                && let Some(attempt) = call.attempt.as_ref().filter(|a| a.own_request())
            {
                owners.push((Owner::Call(caller), attempt.request));
            }
        }
        for (owner, request) in owners {
            self.lose(request, Loss::Reset);
            // The connection manager's call fails at once; the next one reconnects.
            self.failed(owner, UnavailableKind::Connection, "connection reset");
        }
    }

    pub(super) fn crash(&mut self, process: u16, for_ns: u64) {
        let t = self.now;
        let p = &mut self.processes[process as usize];
        if !p.up {
            return;
        }
        p.up = false;
        p.ready = false;
        // Requests already sent still reach the server (and run); their replies find nobody.
        // It connects again as it restarts.
        p.generation += 1;
        p.registering = None;
        p.refreshing = None;
        let awaiting = std::mem::take(&mut p.awaiting_limits);
        p.unregistered = None;
        // A new process knows of no refusal: a registration of its that fails `Unavailable`
        // leaves it with no limiter, its calls answered by its fail policy.
        p.refused = false;
        p.conflict = None;
        // It connects again as it restarts: its new connection has written nothing, and the
        // server authenticates it; its connection layer starts afresh.
        p.connection.last_write.clear();
        p.connection.session += 1;
        p.connection.credentials = p.credentials;
        p.connection.kept = None;
        p.renewing = super::credentials::Renewing::default();
        p.remembered_past_end.clear();
        p.protocol = protocol(self.scenario, process as usize, self.planted);
        // A new process: its local share starts empty.
        p.share = LocalShare::new(&config(self.scenario, process as usize));
        if let Some(cluster) = &mut self.cluster {
            cluster.forget_map(process);
        }
        p.queued.clear();
        p.members.clear();
        for batch in std::mem::take(&mut p.batch).into_iter().flatten() {
            self.lose(batch.request, Loss::Crash);
        }
        self.drop_changes(process);
        self.drop_hand_backs(process);
        self.drop_peeks_reading(&awaiting);
        let mut victims = Vec::new();
        for (caller, call) in (0_u32..).zip(&self.calls) {
            if call.process == process && !call.done && (call.attempts > 0) {
                let request = call
                    .attempt
                    .as_ref()
                    .filter(|a| a.own_request())
                    .map(|a| a.request);
                victims.push((caller, request));
            }
        }
        for (caller, request) in victims {
            if let Some(request) = request {
                self.lose(request, Loss::Crash);
            }
            self.finish_call(caller, SharedOutcome::Crashed, EventDigest::None);
        }
        self.queue.push(t + for_ns, Event::Start(process));
    }
}
