//! The simulated Redis server: a keyspace, a script cache and a clock, executing the commands
//! the shared limiter's client sends (`EVALSHA`, `SCRIPT LOAD`) by running the scripts' own
//! text in the [engine](crate::shared::engine).
//!
//! It models what the shared limiter meets in production: `TIME` answers the server's clock,
//! which the simulation can step; `EVALSHA` of a script the cache lacks answers `NOSCRIPT`
//! (the cache is emptied by `SCRIPT FLUSH`, a restart or a failover); a restart without
//! persistence loses the keyspace; a failover promotes a replica that lacks the latest writes.
//! Requests are executed one at a time, in the order they arrive, and take no virtual time.

use core::cell::RefCell;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;

use fixed_window_redis::ScriptCall;

use crate::shared::engine::{Reply, sha1_hex, with_engine};
use crate::shared::keyspace::{Expired, Keyspace, Write};
use crate::shared::replication::Replication;

/// The server's clock at virtual time zero, in nanoseconds since the Unix epoch: the first
/// of November 2023, so that times are of the size Redis's `TIME` gives.
pub(crate) const SERVER_EPOCH_NS: u64 = 1_698_796_800_000_000_000;

/// A script a client knows by text and SHA-1.
#[derive(Debug, PartialEq, Eq)]
pub struct Script {
    /// The Lua text.
    pub text: &'static str,
    /// Its SHA-1, in hex.
    pub sha: Box<str>,
}

impl Script {
    /// The script of `text`.
    pub fn new(text: &'static str) -> Script {
        Script {
            text,
            sha: known_sha(text),
        }
    }
}

thread_local! {
    /// The SHA-1s of the scripts made on this thread: every run makes its scripts anew, and
    /// hashing a script's text costs as much as a hundred simulated calls.
    static SHAS: RefCell<Vec<(&'static str, Box<str>)>> = const { RefCell::new(Vec::new()) };
}

/// The SHA-1 of `text`, hashed once per thread.
fn known_sha(text: &'static str) -> Box<str> {
    SHAS.with(|shas| {
        let mut shas = shas.borrow_mut();
        if let Some((_, sha)) = shas.iter().find(|(known, _)| *known == text) {
            return sha.clone();
        }
        let sha = sha1_hex(text);
        shas.push((text, sha.clone()));
        sha
    })
}

/// A command a client sends.
#[derive(Debug, Clone)]
pub(crate) enum Command {
    /// `EVALSHA sha numkeys keys… args…`: the call's keys and arguments, then `extra`
    /// arguments a planted client adds.
    EvalSha {
        /// The script, called by its SHA-1.
        script: Rc<Script>,
        /// Its keys and first arguments.
        call: Rc<ScriptCall>,
        /// Arguments after the call's own.
        extra: Vec<String>,
    },
    /// `SCRIPT LOAD text`.
    ScriptLoad(Rc<Script>),
}

/// What one executed request did, besides its reply.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    /// The server's time when it ran, in microseconds.
    pub(crate) server_us: u64,
    /// The first thing the script used that the simulation does not model.
    pub(crate) refused: Option<String>,
    /// Keys found expired while it ran.
    pub(crate) expired: Vec<Expired>,
    /// Whether it ran a script (rather than answering `NOSCRIPT` or loading one).
    pub(crate) ran_script: bool,
    /// If the script wrote and the server has a replica, when the replica acknowledges its
    /// writes (virtual time).
    pub(crate) acknowledged_at: Option<u64>,
    /// The writes its script made.
    pub(crate) writes: u64,
}

/// The server.
#[derive(Debug, Default)]
pub(crate) struct Server {
    keyspace: Keyspace,
    /// SHA-1s of the loaded scripts.
    scripts: BTreeSet<Box<str>>,
    /// The server's clock minus virtual time, in nanoseconds (steps move it).
    offset_ns: i64,
    /// Its replica, if the scenario's processes wait for one: the writes it has not
    /// acknowledged are those a failover loses.
    replication: Option<Rc<Replication>>,
    /// The script calls that wrote and that the replica had not acknowledged when last
    /// looked at: the replication offset before it and after it, and when the replica
    /// acknowledges it.
    unacknowledged: VecDeque<(u64, u64, u64)>,
    /// Bumped at every failover and restart: a connection to the server before it is gone.
    epoch: u32,
}

impl Server {
    /// A server whose replica receives its writes as `replication` says.
    pub(crate) fn replicated(replication: Rc<Replication>) -> Server {
        Server {
            keyspace: Keyspace::replicated(),
            replication: Some(replication),
            ..Server::default()
        }
    }

    /// Bumped at every failover and restart.
    pub(crate) fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The replica has acknowledged what it had by `t`: those writes are no longer undone.
    fn catch_up(&mut self, t: u64) {
        let mut offset = None;
        while let Some(&(_, reached, at)) = self.unacknowledged.front()
            && at <= t
        {
            offset = Some(reached);
            self.unacknowledged.pop_front();
        }
        if let Some(offset) = offset {
            self.keyspace.acknowledged(offset);
        }
    }

    /// The server's clock at virtual time `t`, in microseconds since the Unix epoch.
    pub(crate) fn now_us(&self, t: u64) -> u64 {
        let ns = i128::from(SERVER_EPOCH_NS) + i128::from(t) + i128::from(self.offset_ns);
        u64::try_from(ns.max(0) / 1_000).unwrap_or(u64::MAX)
    }

    /// Steps the server's clock by `delta_ns` (forward if positive).
    pub(crate) fn step_clock(&mut self, delta_ns: i64) {
        self.offset_ns = self.offset_ns.saturating_add(delta_ns);
    }

    /// Executes `command` of `request` at virtual time `t`.
    pub(crate) fn execute(&mut self, request: u32, command: &Command, t: u64) -> (Reply, Effects) {
        let server_us = self.now_us(t);
        let mut effects = Effects {
            server_us,
            ..Effects::default()
        };
        let reply = match command {
            Command::ScriptLoad(script) => with_engine(|engine| {
                engine.compile(&script.sha, script.text)?;
                self.scripts.insert(script.sha.clone());
                Ok(Reply::Bulk(script.sha.clone()))
            })
            .unwrap_or_else(|error| error),
            Command::EvalSha {
                script,
                call,
                extra,
            } => {
                if self.scripts.contains(&script.sha) {
                    effects.ran_script = true;
                    let written = self.keyspace.written();
                    if let Some(time_key) = call.time_key() {
                        // A time key reads the server's clock, as a test that sets it keeps it.
                        self.keyspace.keep(time_key, &server_us.to_string());
                    }
                    let keyspace = &mut self.keyspace;
                    let (reply, refused) = with_engine(|engine| {
                        engine.run(
                            &script.sha,
                            keyspace,
                            server_us,
                            request,
                            call.keys(),
                            call.args().chain(extra.iter().map(String::as_str)),
                        )
                    });
                    effects.refused = refused;
                    effects.writes = self.keyspace.written() - written;
                    if let Some(replication) = &self.replication
                        && self.keyspace.written() > written
                    {
                        let at = replication.acknowledged_at(t);
                        self.unacknowledged
                            .push_back((written, self.keyspace.written(), at));
                        effects.acknowledged_at = Some(at);
                        self.catch_up(t);
                    }
                    if self.keyspace.has_expired() {
                        effects.expired = self.keyspace.take_expired();
                    }
                    reply
                } else {
                    Reply::Error("NOSCRIPT No matching script. Please use EVAL.".into())
                }
            }
        };
        (reply, effects)
    }

    /// The keyspace, for a cluster's slot migration.
    pub(crate) fn keyspace_mut(&mut self) -> &mut Keyspace {
        &mut self.keyspace
    }

    /// `SCRIPT FLUSH`.
    pub(crate) fn flush_scripts(&mut self) {
        self.scripts.clear();
    }

    /// A restart without persistence: no keys, no scripts.
    pub(crate) fn restart(&mut self) {
        self.keyspace.clear();
        self.scripts.clear();
        self.unacknowledged.clear();
        self.epoch += 1;
    }

    /// A failover at virtual time `t` to a replica lagging by `lag` writes (if the server has
    /// a replica whose delay is modelled: lacking exactly the writes it had not acknowledged by
    /// `t`), which has the scripts if `keeps_scripts`; the writes it lacks, newest first.
    pub(crate) fn failover(&mut self, lag: usize, keeps_scripts: bool, t: u64) -> Vec<Write> {
        if !keeps_scripts {
            self.scripts.clear();
        }
        self.epoch += 1;
        if self.replication.is_none() {
            return self.keyspace.undo(lag);
        }
        self.catch_up(t);
        // Every write before the first call it has not acknowledged.
        let received = self
            .unacknowledged
            .front()
            .map_or(self.keyspace.written(), |&(before, _, _)| before);
        self.unacknowledged.clear();
        self.keyspace.undo_after(received)
    }

    /// The live keys at virtual time `t`, with the last millisecond each lives in.
    pub(crate) fn live_keys(&self, t: u64) -> Vec<(Box<str>, Option<u64>)> {
        self.keyspace.live(self.now_us(t) / 1_000)
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use fixed_window::Instant;
    use fixed_window_redis::{Begin, Config, Protocol, SCRIPT, ScriptReply};

    use super::*;

    fn script_call(protocol: &Protocol, key: &str) -> ScriptCall {
        match protocol.begin(key, Instant::ZERO, Instant::ZERO) {
            Ok(Begin::Call(call)) => call,
            other => panic!("expected a call, got {other:?}"),
        }
    }

    fn eval(script: &Rc<Script>, call: ScriptCall) -> Command {
        Command::EvalSha {
            script: Rc::clone(script),
            call: Rc::new(call),
            extra: Vec::new(),
        }
    }

    #[test]
    fn the_production_script_counts_on_the_servers_clock_and_sets_the_shared_origin() {
        let mut server = Server::default();
        let script = Rc::new(Script::new(SCRIPT));
        let protocol =
            Protocol::new(Config::of("api", 2, Duration::from_millis(10)).expect("valid"));
        let register = eval(&script, protocol.register_call());
        let (reply, _) = server.execute(0, &register, 0);
        assert!(
            matches!(&reply, Reply::Error(m) if m.starts_with("NOSCRIPT")),
            "{reply:?}"
        );
        server.execute(1, &Command::ScriptLoad(Rc::clone(&script)), 0);
        let (reply, effects) = server.execute(2, &register, 5_000);
        let origin = effects.server_us;
        assert_eq!(
            reply
                .integers()
                .ok()
                .as_deref()
                .and_then(ScriptReply::parse),
            Some(ScriptReply::Registered {
                origin,
                now: origin
            })
        );
        let acquire = eval(&script, script_call(&protocol, "alice"));
        let replies: Vec<_> = [1_000_000, 2_000_000, 3_000_000, 10_005_000]
            .into_iter()
            .zip(3..)
            .map(|(t, request)| {
                let (reply, effects) = server.execute(request, &acquire, t);
                assert!(effects.ran_script && effects.refused.is_none());
                reply
                    .integers()
                    .ok()
                    .as_deref()
                    .and_then(ScriptReply::parse)
            })
            .collect();
        assert_eq!(
            replies,
            [
                Some(ScriptReply::Permitted {
                    remaining: 1,
                    now: origin + 995,
                    window_start: origin
                }),
                Some(ScriptReply::Permitted {
                    remaining: 0,
                    now: origin + 1_995,
                    window_start: origin
                }),
                Some(ScriptReply::Full {
                    retry_after: 7_005,
                    now: origin + 2_995,
                    window_start: origin
                }),
                // Exactly at the next window's start: the new window is in effect.
                Some(ScriptReply::Permitted {
                    remaining: 1,
                    now: origin + 10_000,
                    window_start: origin + 10_000
                }),
            ]
        );
        // The counter expires at its window's end plus the margin; the configuration never.
        let live = server.live_keys(10_005_000);
        assert_eq!(live.len(), 2);
        assert_eq!(live[0], ("fixed-window:{api}".into(), None));
        assert_eq!(live[1].1, Some((origin + 20_000) / 1_000 + 1_000));
    }

    #[test]
    fn a_flushed_cache_answers_noscript_and_a_lagging_replica_forgets() {
        let mut server = Server::default();
        let script = Rc::new(Script::new(SCRIPT));
        let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1)).expect("valid"));
        server.execute(0, &Command::ScriptLoad(Rc::clone(&script)), 0);
        let acquire = eval(&script, script_call(&protocol, "k"));
        server.execute(1, &acquire, 0);
        server.execute(2, &acquire, 0);
        let undone = server.failover(1, true, 0);
        assert_eq!(undone.iter().map(|w| w.request).collect::<Vec<_>>(), [2]);
        let (reply, _) = server.execute(3, &acquire, 0);
        assert!(matches!(
            reply
                .integers()
                .ok()
                .as_deref()
                .and_then(ScriptReply::parse),
            Some(ScriptReply::Permitted { remaining: 3, .. })
        ));
        server.flush_scripts();
        let (reply, effects) = server.execute(4, &acquire, 0);
        assert!(matches!(&reply, Reply::Error(m) if m.starts_with("NOSCRIPT")));
        assert!(!effects.ran_script);
        server.step_clock(-1_000_000_000);
        assert_eq!(server.now_us(1_000_000_000), SERVER_EPOCH_NS / 1_000);
        server.restart();
        assert_eq!(server.live_keys(0), []);
    }
}
