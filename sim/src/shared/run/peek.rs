//! A caller's peek before its call, as the limiter's `peek` makes it: `begin_peek` (answered
//! from the process's memory of full windows, or a read-only script call to send), the call
//! queued in its lane and batched with the other peeks there as the coalescer does, then
//! `finish_peek` with its part of the reply or the cause of its absence; made again (at most
//! [`CHANGE_RETRIES`] times) while the limit changes under it. Where processes read live
//! limits, a reply telling of a version whose live limits its process has not read
//! (`Protocol::limits_due`) makes it read them first, as the limiter does (waiting for a read
//! already under way, and reading again if that one did not bring the version). Whatever it
//! answers, the call then arrives as if it had not peeked.

use fixed_window::Peek;
use fixed_window_redis::{PeekBegin, ScriptCall, SharedError, Unavailable};

use super::{Attempt, CHANGE_RETRIES, Sim};
use crate::shared::peeks::Peeks;
use crate::shared::planted::SharedPlantedBug;
use crate::shared::record::SharedRecord;
use crate::shared::scenario::SharedScenario;

/// The peeks of a run: which callers peek, and where each one's peek is.
#[derive(Debug)]
pub(super) struct Peeking {
    /// The callers that peek before their call.
    drawn: Peeks,
    /// Per caller, where its peek is.
    callers: Vec<PeekState>,
}

/// Where a caller's peek is.
#[derive(Debug, Clone, Copy, Default)]
struct PeekState {
    /// It has begun (the call goes on once it ends).
    begun: bool,
    /// The caller's attempt in flight is the peek's call.
    in_flight: bool,
    /// Its tries: one more each time the limit changed under it.
    tries: u32,
    /// The read of the live limits it waits for before its next try, if any.
    reading: Option<Reading>,
}

/// A read of the live limits a peek waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// One under way already when its reply told it of the version.
    Joined,
    /// One begun after that.
    Fresh,
}

impl Peeking {
    /// The peeks of a run of `scenario`: none begun.
    pub(super) fn of(scenario: &SharedScenario) -> Peeking {
        Peeking {
            drawn: Peeks::draw(scenario.id.seed),
            callers: vec![PeekState::default(); scenario.callers.len()],
        }
    }

    /// Whether `caller`'s attempt in flight is its peek's call.
    pub(super) fn is_peeking(&self, caller: u32) -> bool {
        self.callers[caller as usize].in_flight
    }
}

/// Whether a peek's `error` is a refusal of the configuration or of the key's limit.
fn is_conflict(error: &SharedError) -> bool {
    matches!(error, SharedError::Conflict(_))
}

/// Whether `call` is a peek's: the script's read-only modes.
pub(super) fn is_peek(call: &ScriptCall) -> bool {
    matches!(call.args().nth(3), Some("peek" | "peek-count"))
}

impl Sim<'_> {
    /// If `caller` peeks before its call and has not yet: begins the peek and says so (the
    /// call waits for it).
    pub(super) fn peek_first(&mut self, caller: u32) -> bool {
        let spec = &self.scenario.callers[caller as usize];
        let state = &mut self.peeks.callers[caller as usize];
        if state.begun || !self.peeks.drawn.before(spec) {
            return false;
        }
        state.begun = true;
        self.peek(caller);
        true
    }

    /// One try of `caller`'s peek, at its process's reading now.
    fn peek(&mut self, caller: u32) {
        let number = self.next_attempt;
        self.next_attempt += 1;
        self.peeks.callers[caller as usize].tries += 1;
        let call = &self.calls[caller as usize];
        let (process, key) = (call.process, call.key);
        let now = self.local(process);
        let name = &self.scenario.keys[key as usize];
        match self.processes[process as usize]
            .protocol
            .begin_peek(name, now)
        {
            Ok(PeekBegin::Known(peek)) => self.peeked(caller, None, &peek),
            Ok(PeekBegin::Call(call)) => {
                self.calls[caller as usize].attempt = Some(Attempt::queued(number, now, call));
                self.peeks.callers[caller as usize].in_flight = true;
                self.processes[process as usize].queued.push(caller);
                self.records.push(SharedRecord::Queued {
                    t: self.now,
                    caller,
                });
                self.arm_timeout(process, super::Owner::Call(caller), number, self.now);
                self.pump(process);
            }
            Err(error) => self.peek_failed(caller, is_conflict(&error)),
        }
    }

    /// `caller`'s peek call is over: `reply` is its part of the script's reply (of `request`),
    /// or why there is none.
    pub(super) fn peek_replied(
        &mut self,
        caller: u32,
        reply: &Result<Vec<i64>, Unavailable>,
        request: Option<u32>,
    ) {
        self.peeks.callers[caller as usize].in_flight = false;
        let call = &mut self.calls[caller as usize];
        let Some(attempt) = call.attempt.take() else {
            return;
        };
        let protocol = &self.processes[call.process as usize].protocol;
        let name = &self.scenario.keys[call.key as usize];
        let reply = match reply {
            Ok(values) => Ok(&values[..]),
            Err(cause) => Err(cause.clone()),
        };
        match protocol.finish_peek(name, attempt.call.limit_version(), reply) {
            Ok(Some(peek)) => self.peeked(caller, request, &peek),
            Ok(None)
                if self.peeks.callers[caller as usize].tries <= CHANGE_RETRIES
                    && self.planted != Some(SharedPlantedBug::PeekGivesUp) =>
            {
                // Told of a version its process has not read the live limits of: read them
                // first, as the limiter does.
                let process = self.calls[caller as usize].process;
                let due = self.processes[process as usize].protocol.limits_due();
                if due
                    && self.reads_live_limits()
                    && self.planted != Some(SharedPlantedBug::PeekLimitsUnread)
                {
                    let joined = self.processes[process as usize].refreshing.is_some();
                    self.peeks.callers[caller as usize].reading = Some(if joined {
                        Reading::Joined
                    } else {
                        Reading::Fresh
                    });
                    self.await_limits(caller, process);
                } else {
                    self.peek(caller);
                }
            }
            // The limit kept changing: `Unavailable`.
            Ok(None) => self.peek_failed(caller, false),
            Err(error) => self.peek_failed(caller, is_conflict(&error)),
        }
    }

    /// A read of the live limits `caller` waited for is over: if it is a peek's, the peek is
    /// made again (and its call does not attempt), and so said. A read that was under way
    /// before the reply told the peek of the version may have run before the change: if it
    /// did not bring the version, the peek reads again, as the limiter makes its own read.
    pub(super) fn peek_after_read(&mut self, caller: u32) -> bool {
        let Some(reading) = self.peeks.callers[caller as usize].reading else {
            return false;
        };
        let process = self.calls[caller as usize].process;
        if reading == Reading::Joined && self.processes[process as usize].protocol.limits_due() {
            self.peeks.callers[caller as usize].reading = Some(Reading::Fresh);
            self.await_limits(caller, process);
            return true;
        }
        self.peeks.callers[caller as usize].reading = None;
        self.peek(caller);
        true
    }

    /// `callers` waited for a read of the live limits when their process crashed: those
    /// peeking fail, their calls arriving all the same (in the process as it starts again).
    pub(super) fn drop_peeks_reading(&mut self, callers: &[u32]) {
        for &caller in callers {
            if self.peeks.callers[caller as usize].reading.take().is_some() {
                self.peek_failed(caller, false);
            }
        }
    }

    /// `caller`'s peek answered `peek` (from `request`'s reply, or locally): its call arrives.
    fn peeked(&mut self, caller: u32, request: Option<u32>, peek: &Peek) {
        self.records.push(SharedRecord::Peeked {
            t: self.now,
            caller,
            request,
            remaining: peek.remaining(),
            limit: peek.limit(),
            resets_in: peek.resets_in().as_nanos(),
        });
        self.arrive(caller);
    }

    /// `caller`'s peek failed, with `Conflict` or not: its call arrives all the same.
    fn peek_failed(&mut self, caller: u32, conflict: bool) {
        self.records.push(SharedRecord::PeekFailed {
            t: self.now,
            caller,
            conflict,
        });
        self.arrive(caller);
    }
}
