//! The server's access control, and how a process makes its connection anew after a
//! refusal, as the limiter's connection layer does (`redis/src/renewal.rs`).
//!
//! The server authenticates each connection by the first request it reads of it: while the
//! limiter's user does not exist, it refuses it (`WRONGPASS`), and the connection keeps that
//! refusal: every later request on it is answered with it at once, without being sent, as
//! redis-rs's connection manager answers once its reconnection was refused. While the user may
//! not run the limiter's commands, each command is refused (`NOPERM`) over a connection that
//! stays open. Deleting the user closes its connections. While the server's certificate is
//! not trusted, a new connection's TLS handshake fails before any command is read: it keeps
//! that failure as it keeps a refused authentication.
//!
//! A process takes note of each refusal that reaches it: the first while no renewal is due
//! makes one due after the product's [`renewal_wait`] of the refusals before it (on the
//! process's clock, to the nanosecond: the connection layer's time is not the limiter's); any answer that is not an error ends the back-off. The first request sent
//! once the renewal is due and its wait has passed makes a new connection (one more round
//! trip), which the server authenticates afresh.

use fixed_window_redis::renewal_wait;

use super::{Event, Sim};
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::Loss;

/// The server's answer to a connection whose user does not exist.
pub(super) const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// The server's answer to a command on a connection that has not authenticated while the
/// server requires it.
pub(super) const NOAUTH: &str = "NOAUTH Authentication required.";

/// What a connection made while the server's certificate is not trusted fails with: the
/// words of rustls's error in the I/O error redis-rs returns for the failed handshake, which
/// the limiter counts as access denied (`redis/src/unavailable.rs`), as it counts a refused
/// authentication, and renews the connection after the same back-off.
pub(super) const HANDSHAKE: &str = "invalid peer certificate: Expired";

/// The server's answer to a command the user may not run.
pub(super) const NOPERM: &str = "NOPERM User sim has no permissions to run the 'evalsha' command";

/// A process's bookkeeping of refusals, as the limiter's connection layer keeps it.
#[derive(Debug, Default)]
pub(super) struct Renewing {
    /// Refusals since the last answer that was not one: the back-off's exponent.
    refusals: u32,
    /// A new connection is due, once `not_before` has passed.
    due: bool,
    /// The exact reading of the process's clock from which the new connection may be made.
    not_before: fixed_window::Instant,
}

impl Sim<'_> {
    /// Before `process` sends a request: makes a new connection if a renewal is due and its
    /// wait has passed (the request then authenticates it), or returns the refusal its
    /// connection keeps, which answers the request at once.
    pub(super) fn before_send(&mut self, process: u16) -> Option<&'static str> {
        // The connection layer's own time (the standard library's), not the limiter's clock.
        let now = self.exact(process);
        // The planted clients keep their refused connection.
        let p = &mut self.processes[process as usize];
        let renews = match self.planted {
            Some(SharedPlantedBug::NeverRecovers) => false,
            Some(SharedPlantedBug::NoAuthKept) => p.connection.kept != Some(NOAUTH),
            Some(SharedPlantedBug::HandshakeFailureKept) => p.connection.kept != Some(HANDSHAKE),
            _ => true,
        };
        if renews && p.renewing.due && now >= p.renewing.not_before {
            p.renewing.due = false;
            p.connection.session += 1;
            p.connection.credentials = p.credentials;
            p.connection.reconnect = true;
            p.connection.kept = None;
            return None;
        }
        p.connection.kept
    }

    /// Answers `request` at once with the refusal its connection keeps: nothing is sent.
    pub(super) fn refuse_locally(&mut self, request: u32, refusal: &'static str) {
        self.lose(request, Loss::Denied);
        self.requests[request as usize].denied = Some(refusal);
        self.queue.push(self.now, Event::AtClient(request));
    }

    /// At the server, as it reads `request`: the refusal of its access control, if any. The
    /// first request of a connection authenticates it.
    pub(super) fn access_refusal(&mut self, request: u32) -> Option<&'static str> {
        let (process, session) = {
            let r = &self.requests[request as usize];
            (r.process, r.session)
        };
        let user_missing = self.now < self.user_missing_until;
        let auth_required = self.now < self.auth_required_until;
        let handshake_refused = self.now < self.handshake_refused_until;
        let connection = &mut self.processes[process as usize].connection;
        let authenticated = match connection.auth {
            Some((known, accepted)) if known == session => accepted,
            // A connection made before the last one authenticated: it was accepted when made
            // (deleting the user closes every connection).
            Some((known, _)) if known > session => true,
            _ => {
                // A failed handshake comes before any authentication.
                if handshake_refused {
                    connection.handshake_failed = Some(session);
                }
                // Made with a password the server no longer takes: refused as a missing user.
                let accepted =
                    !handshake_refused && !user_missing && connection.credentials == self.password;
                connection.auth = Some((session, accepted));
                if auth_required {
                    connection.unauthenticated = Some(session);
                }
                accepted
            }
        };
        if !authenticated {
            Some(if connection.handshake_failed == Some(session) {
                HANDSHAKE
            } else {
                WRONGPASS
            })
        } else if auth_required && connection.unauthenticated == Some(session) {
            Some(NOAUTH)
        } else if self.now < self.no_perm_until {
            Some(NOPERM)
        } else {
            None
        }
    }

    /// Refuses `request` at the server: nothing runs, the refusal goes back.
    pub(super) fn refuse_at_server(&mut self, request: u32, refusal: &'static str) {
        self.lose(request, Loss::Denied);
        self.requests[request as usize].denied = Some(refusal);
        self.reply(request);
    }

    /// A refusal of `request` reached its process: a refused authentication is kept by its
    /// connection (if it is still the one in use), whether an attempt waits for it or not, as
    /// the connection manager keeps its refused reconnection.
    pub(super) fn keep_refusal(&mut self, request: u32, refusal: &'static str) {
        let (process, session) = {
            let r = &self.requests[request as usize];
            (r.process, r.session)
        };
        let connection = &mut self.processes[process as usize].connection;
        // The planted `NoAuthKept` keeps a `NOAUTH` as a refused reconnection.
        let kept = refusal == WRONGPASS
            || refusal == HANDSHAKE
            || (refusal == NOAUTH && self.planted == Some(SharedPlantedBug::NoAuthKept));
        if kept && session == connection.session {
            connection.kept = Some(refusal);
        }
    }

    /// A refusal of `request` reached the attempt waiting for it: the first while no renewal
    /// is due makes one due after the back-off. (A refusal whose attempt timed out first is
    /// not seen by the connection layer, as the limiter drops a call at its timeout; the
    /// refusal the connection keeps answers the next call, which sees it.)
    pub(super) fn refusal_received(&mut self, request: u32) {
        let process = self.requests[request as usize].process;
        let now = self.exact(process);
        let renewing = &mut self.processes[process as usize].renewing;
        if !renewing.due {
            renewing.not_before = now.saturating_add(renewal_wait(renewing.refusals));
            renewing.refusals = renewing.refusals.saturating_add(1);
            renewing.due = true;
        }
    }

    /// An answer that is not an error reached `process`: the back-off ends.
    pub(super) fn answer_received(&mut self, process: u16) {
        self.processes[process as usize].renewing.refusals = 0;
    }

    /// The server refuses the limiter's user until `until`: a user that does not exist has
    /// its connections closed.
    pub(super) fn refuse_user(&mut self, until: u64) {
        self.user_missing_until = self.user_missing_until.max(until);
        for process in 0..self.processes.len() {
            self.reset(u16::try_from(process).unwrap_or(0));
        }
    }

    /// The server's password changes and the user's connections are closed; every process is
    /// given the new password at `until`.
    pub(super) fn rotate_password(&mut self, until: u64) {
        self.password = self.password.saturating_add(1);
        for process in 0..self.processes.len() {
            self.reset(u16::try_from(process).unwrap_or(0));
        }
        self.queue.push(until, Event::GivePassword);
    }

    /// Every process is given the server's current password, as `set_client` gives a running
    /// limiter a new client: its connection layer makes the next connection with it at once
    /// (`Renewal::replace`: no back-off, the refusals forgotten). The planted
    /// [`SharedPlantedBug::NewClientWaits`] leaves the renewal to the back-off.
    pub(super) fn give_password(&mut self) {
        let password = self.password;
        let waits = self.planted == Some(SharedPlantedBug::NewClientWaits);
        for process in 0..self.processes.len() {
            let now = self.exact(u16::try_from(process).unwrap_or(0));
            let p = &mut self.processes[process];
            p.credentials = password;
            if !waits {
                p.renewing = Renewing {
                    refusals: 0,
                    due: true,
                    not_before: now,
                };
            }
        }
    }

    /// The server requires a password its clients have not given until `until`, and their
    /// connections are closed (as a restart with that configuration closes them).
    pub(super) fn require_auth(&mut self, until: u64) {
        self.auth_required_until = self.auth_required_until.max(until);
        for process in 0..self.processes.len() {
            self.reset(u16::try_from(process).unwrap_or(0));
        }
    }

    /// Every TLS handshake with the server fails until `until`, and the server's connections
    /// are closed (as a restart with the new certificate closes them).
    pub(super) fn refuse_handshake(&mut self, until: u64) {
        self.handshake_refused_until = self.handshake_refused_until.max(until);
        for process in 0..self.processes.len() {
            self.reset(u16::try_from(process).unwrap_or(0));
        }
    }

    /// The server refuses the limiter's commands until `until`.
    pub(super) fn revoke_permission(&mut self, until: u64) {
        self.no_perm_until = self.no_perm_until.max(until);
    }
}
