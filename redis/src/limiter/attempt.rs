//! One attempt of the shared limiter and the loops around it: an attempt sent (or decided
//! locally), made again while it finds the limit changed, its reply read by the protocol, and
//! the waiting call that sleeps between attempts, blocking or async alike.

use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use fixed_window::{Clock, Instant, Interrupt, RateLimiterError};

use crate::error::SharedError;
use crate::key::check_key;
use crate::limiter::SharedRateLimiter;
use crate::limiter::key_limit::read_limits;
use crate::limiter::wait::{Awaiting, Blocking, Wait, block};
use crate::permit::SharedPermit;
use crate::protocol::{Begin, Conclusion, Decision};
use crate::unavailable::Unavailable;

/// How many times an attempt that finds the limit changed (another process changed it
/// through the server) is made again under the new one before the call gives up.
pub(super) const CHANGE_RETRIES: u32 = 3;

impl<C: Clock> SharedRateLimiter<C> {
    /// A waiting call for `n` permits, blocking the thread; `interrupt` ends its sleeps.
    pub(super) fn acquire_blocking(
        &self,
        key: &str,
        n: u32,
        interrupt: Option<&Interrupt>,
    ) -> Result<SharedPermit, SharedError> {
        block(self.acquire_waiting(&Blocking::new(interrupt), key, n))
    }

    /// A waiting call for `n` permits: attempts until one is decided, sleeping between them
    /// as `wait` does.
    pub(super) async fn acquire_waiting(
        &self,
        wait: &impl Wait,
        key: &str,
        n: u32,
    ) -> Result<SharedPermit, SharedError> {
        let mut now = self.clock.now();
        let deadline = now.saturating_add(self.config().max_wait());
        let mut slept_from = None;
        loop {
            let (at, decision) = self.attempt(wait, key, Some(n), now, deadline).await?;
            let pause = match self.step(key, now, at, &decision, slept_from) {
                Step::Done(result) => return result,
                Step::Sleep(pause) => pause,
            };
            wait.sleep(&self.clock, pause)
                .await
                .map_err(|_| self.interrupted())?;
            slept_from = Some(now);
            now = self.clock.now();
        }
    }

    /// One attempt, blocking: the decision and the local instant it was known at.
    pub(super) fn attempt_blocking(
        &self,
        key: &str,
        weight: Option<u32>,
        now: Instant,
        deadline: Instant,
    ) -> Result<(Instant, Decision), SharedError> {
        let wait = Blocking::new(None);
        block(self.attempt(&wait, key, weight, now, deadline))
    }

    /// One attempt, asynchronous.
    pub(super) async fn attempt_async(
        &self,
        key: &str,
        weight: Option<u32>,
        now: Instant,
        deadline: Instant,
    ) -> Result<(Instant, Decision), SharedError> {
        self.attempt(&Awaiting, key, weight, now, deadline).await
    }

    /// One attempt: the server's decision, or, if it could not decide and the fail policy is
    /// [`FailPolicy::Local`](crate::FailPolicy::Local), this process's own.
    pub(super) async fn attempt(
        &self,
        wait: &impl Wait,
        key: &str,
        weight: Option<u32>,
        now: Instant,
        deadline: Instant,
    ) -> Result<(Instant, Decision), SharedError> {
        match self
            .attempt_server(wait, key, weight, now, deadline)
            .await?
        {
            (at, Decision::Unavailable(cause)) if self.local.is_active() => {
                let own = self.protocol.own_limit(key);
                Ok((at, self.local.decide(key, own, weight, at, deadline, cause)))
            }
            decided => Ok(decided),
        }
    }

    /// One attempt on the server, made again (up to [`CHANGE_RETRIES`] times) while it finds
    /// the limit changed: the decision and the local instant it was known at.
    async fn attempt_server(
        &self,
        wait: &impl Wait,
        key: &str,
        weight: Option<u32>,
        now: Instant,
        deadline: Instant,
    ) -> Result<(Instant, Decision), SharedError> {
        self.announce();
        if !self.registrar.is_ready() {
            self.check(key)?;
            let registrar = Arc::clone(&self.registrar);
            if let Err(cause) = wait.register(&self.connection, registrar).await {
                return Ok((self.clock.now(), self.protocol.unregistered(&cause)));
            }
        }
        if let Some(conflict) = self.registrar.refused() {
            return Err(SharedError::Conflict(*conflict));
        }
        self.refresh_limit(now);
        let (mut now, mut tries, mut waited) = (now, 0, false);
        loop {
            tries += 1;
            let (at, decision) = match self.begin(key, weight, now, deadline)? {
                Begin::Decided(decision) => return Ok((now, decision)),
                Begin::Call(call) => {
                    let version = call.limit_version();
                    let lease = call.is_lease();
                    // While another task's lease call for the key is in flight, an attempt
                    // for permits waits for its share (once, at most the timeout) and begins
                    // again, rather than counting on the server.
                    let in_flight = self.in_flight.as_ref();
                    if !lease
                        && !waited
                        && weight.is_some_and(|n| n > 0)
                        && let Some(awaited) = in_flight.and_then(|calls| calls.awaited(key))
                    {
                        let timeout = self.connection.link().timeout();
                        wait.landed(&self.connection, awaited, timeout).await;
                        (waited, tries, now) = (true, tries - 1, self.clock.now());
                        continue;
                    }
                    let landing = in_flight.filter(|_| lease).map(|calls| calls.start(key));
                    let reply = wait.acquire(&self.connection, call).await;
                    let finished = self.finish(key, (weight, version, lease), now, deadline, reply);
                    // The share is held (or the call ended without one) before the waiters
                    // wake.
                    drop(landing);
                    finished
                }
            };
            if !matches!(decision, Decision::LimitChanged { .. }) || tries > CHANGE_RETRIES {
                return Ok((at, decision));
            }
            now = at;
            // The new version's live limits, read before the attempt is made again under it.
            if self.protocol.limits_due() {
                wait.read_limits(&self.connection, &self.protocol).await;
                now = self.clock.now();
            }
        }
    }

    /// When [`Protocol::refresh_due`](crate::Protocol::refresh_due) says (a cluster, or on one node while windows are
    /// remembered full, under a lease, or while live limits are held), reads the
    /// configuration and the live limits again in the background (at most once per
    /// [`LIMIT_REFRESH`](crate::LIMIT_REFRESH) on the clock), adopting a newer limit stored
    /// there, and writing back live limits the server lost. The attempt does not wait for it;
    /// a failed read is simply tried again later.
    pub(super) fn refresh_limit(&self, now: Instant) {
        let last = self.refreshed.load(Ordering::Relaxed);
        if !self.protocol.refresh_due(Instant::from_nanos(last), now)
            || self
                .refreshed
                .compare_exchange(last, now.as_nanos(), Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let link = Arc::clone(self.connection.link());
        let protocol = Arc::clone(&self.protocol);
        drop(self.connection.handle().spawn(async move {
            let _ = read_limits(link, protocol).await;
        }));
    }

    /// A key that cannot name a counter is refused before anything else.
    pub(super) fn check(&self, key: &str) -> Result<(), SharedError> {
        check_key(key).map_err(|error| SharedError::InvalidKey {
            name: self.config().name(),
            error,
        })
    }

    pub(super) fn unavailable(&self, cause: Unavailable) -> SharedError {
        SharedError::Unavailable {
            name: self.config().name(),
            cause,
        }
    }

    /// Begins an attempt for `weight` permits, or a drain (`None`).
    pub(super) fn begin(
        &self,
        key: &str,
        weight: Option<u32>,
        now: Instant,
        deadline: Instant,
    ) -> Result<Begin, SharedError> {
        let begun = match weight {
            Some(n) => self.protocol.begin_n(key, n, now, deadline),
            None => self.protocol.begin_drain(key, now),
        };
        begun.map_err(|error| SharedError::InvalidKey {
            name: self.config().name(),
            error,
        })
    }

    /// Finishes an attempt for `weight` permits (a drain: `None`) sent under `version` of
    /// the limit, a lease call if `lease`.
    pub(super) fn finish(
        &self,
        key: &str,
        (weight, version, lease): (Option<u32>, u32, bool),
        sent: Instant,
        deadline: Instant,
        reply: Result<Vec<i64>, Unavailable>,
    ) -> (Instant, Decision) {
        let received = self.clock.now();
        let times = (sent, received, deadline);
        // A drain's reply is a permit leaving none, read as one permit's.
        let n = weight.unwrap_or(1);
        let reply = match reply {
            Ok(ref reply) => Ok(&reply[..]),
            Err(cause) => Err(cause),
        };
        let decision = if lease {
            self.protocol.finish_lease(key, n, version, times, reply)
        } else {
            self.protocol.finish_at(key, n, version, times, reply)
        };
        (received, decision)
    }

    /// The result of a call that never waits.
    pub(super) fn finish_at_once(
        &self,
        key: &str,
        at: Instant,
        decision: &Decision,
    ) -> Result<SharedPermit, SharedError> {
        match self.conclude(key, at, decision, false) {
            Step::Done(result) => result,
            // A call that may not sleep is never told to; were it, that is a rejection.
            Step::Sleep(retry_after) => Err(SharedError::Limited(RateLimiterError::Rejected {
                name: self.config().name(),
                limit: self.key_limit(key),
                period: self.config().period(),
                max_wait: self.config().max_wait(),
                retry_after,
            })),
        }
    }

    /// What a waiting call does after an attempt started at `now` and decided at `at`:
    /// return, or sleep.
    pub(super) fn step(
        &self,
        key: &str,
        now: Instant,
        at: Instant,
        decision: &Decision,
        slept_from: Option<Instant>,
    ) -> Step {
        // A stopped clock (or one that stepped back across the sleep) would otherwise keep
        // the caller sleeping forever.
        let stalled = slept_from.is_some_and(|before| now <= before);
        self.conclude(key, at, decision, !stalled)
    }

    /// The protocol's conclusion, with its event emitted.
    pub(super) fn conclude(
        &self,
        key: &str,
        at: Instant,
        decision: &Decision,
        may_sleep: bool,
    ) -> Step {
        match self.protocol.conclude(key, decision, at, may_sleep) {
            Conclusion::Sleep(pause) => Step::Sleep(pause),
            Conclusion::Done { result, event } => {
                if let Some(event) = event {
                    self.emit(key, &event);
                }
                Step::Done(result)
            }
        }
    }
}

/// What a waiting call does next.
pub(super) enum Step {
    /// Return this.
    Done(Result<SharedPermit, SharedError>),
    /// Sleep this long, then attempt again.
    Sleep(Duration),
}
