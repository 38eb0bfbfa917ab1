//! An attempt at permits or a drain: how it begins, what the server's reply decides, and what
//! the caller does next.

use core::time::Duration;
use std::sync::Arc;

use fixed_window::Instant;

use super::{Begin, Conclusion, Decision, Protocol, ScriptCall};
use crate::error::SharedError;
use crate::key::{KeyError, check_key};
use crate::lease::{Take, coarse_lease_deadline};
use crate::memory::FullWindow;
use crate::permit::SharedPermit;
use crate::script::ScriptReply;
use crate::unavailable::{Unavailable, UnavailableKind};

/// The first element of the script's reply to a lease call that leased a share.
const LEASED_CODE: i64 = 4;

impl Protocol {
    /// Starts an attempt on `key` at local instant `now`, for a call whose wait must end by
    /// `deadline` (`now` itself for a call that never waits).
    ///
    /// # Errors
    ///
    /// [`KeyError`] if `key` cannot name a counter (see [`check_key`]).
    ///
    /// # Examples
    ///
    /// See [`Protocol`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Config, KeyError, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 1, Duration::from_secs(1))?);
    /// assert_eq!(protocol.begin("", Instant::ZERO, Instant::ZERO), Err(KeyError::Empty));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn begin(&self, key: &str, now: Instant, deadline: Instant) -> Result<Begin, KeyError> {
        self.begin_n(key, 1, now, deadline)
    }

    /// Starts an attempt for `n` permits of `key`'s window at once, as
    /// [`begin`](Protocol::begin) does for one. A key remembered full rejects any `n` from 1
    /// up; `n = 0` always asks the server (it counts nothing there). `n` above the limit in
    /// effect can never be granted: [`Decision::TooMany`], decided here, never waited for
    /// (the limiter refuses it before beginning too, [`RateLimiterError::TooMany`](fixed_window::RateLimiterError::TooMany); a waiting
    /// call meets it here after a lowering).
    ///
    /// # Errors
    ///
    /// [`KeyError`] if `key` cannot name a counter (see [`check_key`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Decision, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let Begin::Call(call) = protocol.begin_n("k", 3, Instant::ZERO, Instant::ZERO)? else {
    ///     panic!("the server decides");
    /// };
    /// assert_eq!(call.weight(0), Some(3));
    /// let t = Instant::ZERO;
    /// assert_eq!(
    ///     protocol.begin_n("k", 6, t, t)?,
    ///     Begin::Decided(Decision::TooMany { requested: 6, limit: 5 })
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn begin_n(
        &self,
        key: &str,
        n: u32,
        now: Instant,
        deadline: Instant,
    ) -> Result<Begin, KeyError> {
        check_key(key)?;
        let limit = self.key_limit(key);
        if n > limit {
            return Ok(Begin::Decided(Decision::TooMany {
                requested: n,
                limit,
            }));
        }
        // Under a lease, a share held is spent first: its permits were counted on the server
        // (a window remembered full may be full of them).
        let mut lease = false;
        if n > 0
            && let Some((shares, _)) = &self.leasing
        {
            match shares.take(key, n, now, self.limit_version()) {
                Take::Granted {
                    left,
                    ends,
                    window_start,
                } => {
                    return Ok(Begin::Decided(Decision::Permitted {
                        remaining: left,
                        reset: ends.saturating_duration_since(now),
                        window_start,
                    }));
                }
                Take::Lease => lease = true,
                Take::Exact => {}
            }
        }
        if n > 0
            && let Some(window) = self.memory.get(key, now)
        {
            if lease {
                self.lease_settled(key);
            }
            return Ok(Begin::Decided(decide_full(window, now, deadline, true)));
        }
        Ok(match self.counting_call(key, lease) {
            Ok(call) => Begin::Call(call.weighing(Some(n))),
            Err(decision) => {
                if lease {
                    self.lease_settled(key);
                }
                Begin::Decided(decision)
            }
        })
    }

    /// The lease call for `key` ended without a share: another may be sent.
    fn lease_settled(&self, key: &str) {
        if let Some((shares, _)) = &self.leasing {
            shares.settled(key);
        }
    }

    /// Drops every share held: a call failed or met a conflict, so what they were counted
    /// against may be gone.
    fn drop_shares(&self) {
        if let Some((shares, _)) = &self.leasing {
            shares.drop_all();
        }
    }

    /// The call counting one attempt on `key`: with the configuration key on one node (and
    /// the origin, if the configuration fixes it), with the registered or fixed origin on a
    /// cluster, or, on a cluster not registered yet, the fail policy's answer.
    /// A lease call (`lease`) is the same with the lease's arguments, in mode "lease" on one
    /// node and "lease-count" on a cluster.
    pub(super) fn counting_call(&self, key: &str, lease: bool) -> Result<ScriptCall, Decision> {
        let lease_args = match &self.leasing {
            Some((_, args)) if lease => Some(Arc::clone(args)),
            _ => None,
        };
        match &self.cluster {
            None => {
                let mode = if lease_args.is_some() {
                    "lease"
                } else {
                    "acquire"
                };
                let mut call = self.call(Some(key), mode);
                call.origin = self.config.origin_arg().cloned();
                call.lease = lease_args;
                Ok(self.deciding(call, key))
            }
            Some(registered) => match registered.get() {
                Some(origin) => {
                    let mode = if lease_args.is_some() {
                        "lease-count"
                    } else {
                        "count"
                    };
                    let mut call = self.call(Some(key), mode);
                    call.origin = Some(Arc::clone(origin));
                    call.lease = lease_args;
                    Ok(self.deciding(call, key))
                }
                None => Err(self.unregistered(&Unavailable::new(
                    UnavailableKind::NotRegistered,
                    "the origin is not known yet",
                ))),
            },
        }
    }

    /// Starts a drain of `key`'s window at local instant `now`: the server takes whatever the
    /// window has left (the attempt's [`weight`](ScriptCall::weight) is `None`), so that it is
    /// full until it ends. Finish it as one permit ([`finish`](Protocol::finish)): its reply
    /// is a permit leaving none, which is remembered as a full window. A key already
    /// remembered full needs no call.
    ///
    /// # Errors
    ///
    /// [`KeyError`] if `key` cannot name a counter (see [`check_key`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let Begin::Call(call) = protocol.begin_drain("k", Instant::ZERO)? else {
    ///     panic!("the server drains");
    /// };
    /// assert_eq!(call.weight(0), None);
    /// assert_eq!(call.args().last(), Some("r"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn begin_drain(&self, key: &str, now: Instant) -> Result<Begin, KeyError> {
        check_key(key)?;
        // A drain leaves the window full for this process too: its own share goes.
        if let Some((shares, _)) = &self.leasing {
            shares.drop_key(key);
        }
        if let Some(window) = self.memory.get(key, now) {
            return Ok(Begin::Decided(decide_full(window, now, now, true)));
        }
        Ok(match self.counting_call(key, false) {
            Ok(call) => Begin::Call(call.weighing(None)),
            Err(decision) => Begin::Decided(decision),
        })
    }

    /// Finishes an attempt on `key`: `sent` is the local reading taken before the call was
    /// sent (the `now` given to [`begin`](Protocol::begin)), `received` the reading after
    /// the outcome, `reply` the script's reply or why there is none.
    ///
    /// A full window (or a permit that left none) is remembered, so that later attempts on
    /// the key are rejected locally until [`DRIFT_ALLOWANCE`](crate::DRIFT_ALLOWANCE) short
    /// of the earliest local instant the window can end at.
    ///
    /// # Examples
    ///
    /// A timeout under the default policy, fail closed.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Config, Decision, Protocol, Unavailable, UnavailableKind};
    ///
    /// let protocol = Protocol::new(Config::of("api", 1, Duration::from_secs(1))?);
    /// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// let t = Instant::ZERO;
    /// assert_eq!(protocol.finish("k", t, t, t, Err(cause.clone())), Decision::Unavailable(cause));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn finish(
        &self,
        key: &str,
        sent: Instant,
        received: Instant,
        deadline: Instant,
        reply: Result<&[i64], Unavailable>,
    ) -> Decision {
        self.finish_n(key, 1, (sent, received, deadline), reply)
    }

    /// Finishes an attempt for `n` permits begun by [`begin_n`](Protocol::begin_n), as
    /// [`finish`](Protocol::finish) does for one; `times` is `(sent, received, deadline)`. A
    /// window too full for `n` may still hold fewer, so it is remembered as full only when it
    /// has none left.
    ///
    /// # Examples
    ///
    /// A window with 2 of 5 left refuses 3 permits, and is not taken to be full.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Decision, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let t = Instant::ZERO;
    /// let decision = protocol.finish_n("k", 3, (t, t, t), Ok(&[0, 400_000, 1_000, 0]));
    /// assert!(matches!(decision, Decision::Rejected { local: false, .. }));
    /// assert_eq!(protocol.remembered(), 0);
    /// assert!(matches!(protocol.begin("k", t, t)?, Begin::Call(_)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_n(
        &self,
        key: &str,
        n: u32,
        times: (Instant, Instant, Instant),
        reply: Result<&[i64], Unavailable>,
    ) -> Decision {
        self.finish_at(key, n, self.limit_version(), times, reply)
    }

    /// [`finish_n`](Protocol::finish_n) for an attempt sent under version `version` of the
    /// limit ([`ScriptCall::limit_version`]): a full window is remembered only if that is
    /// still the version in effect (a reply decided under a limit since changed says nothing
    /// of the window under the new one). The production limiter finishes every attempt so;
    /// a client driving the protocol itself, whose attempts may be in flight while a change
    /// is adopted, does the same.
    ///
    /// # Examples
    ///
    /// A reply that the window is full, to an attempt sent before the process adopted version
    /// 1 of the limit, is not remembered: under the new limit the window may have room.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Config, Decision, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 1, Duration::from_secs(1))?);
    /// let t = Instant::ZERO;
    /// protocol.limit_set(Ok(&[3, 2, 1, 0]))?;
    /// let full = protocol.finish_at("k", 1, 0, (t, t, t), Ok(&[0, 400_000, 1_000, 0]));
    /// assert!(matches!(full, Decision::Rejected { local: false, .. }));
    /// assert_eq!(protocol.remembered(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_at(
        &self,
        key: &str,
        n: u32,
        version: u32,
        (sent, received, deadline): (Instant, Instant, Instant),
        reply: Result<&[i64], Unavailable>,
    ) -> Decision {
        let current = version == self.limit_version();
        let reply = match reply {
            Ok(reply) => reply,
            Err(cause) => {
                // A lost reply, a timeout, a lost connection or a failover: shares counted on
                // a server that may have lost them, or a lease that may have counted, go.
                self.drop_shares();
                return self.unavailable(cause);
            }
        };
        match ScriptReply::parse(reply) {
            Some(ScriptReply::Leased {
                granted,
                now,
                window_start,
            }) => self.leased(
                key,
                (n, version, current),
                (sent, received),
                (granted, now, window_start),
            ),
            Some(ScriptReply::Permitted {
                remaining,
                now,
                window_start,
            }) => {
                let reset = self.window_end_micros(window_start).saturating_sub(now);
                if remaining == 0 && current {
                    self.remember(key, version, (sent, received), reset);
                }
                Decision::Permitted {
                    remaining,
                    reset: Duration::from_micros(reset),
                    window_start,
                }
            }
            Some(ScriptReply::Full { retry_after, .. }) => {
                let window = if n > 1 || !current {
                    FullWindow::new(
                        sent,
                        received,
                        Duration::from_micros(retry_after),
                        self.config.clock_resolution(),
                    )
                } else {
                    self.remember(key, version, (sent, received), retry_after)
                };
                let Some(window) = window else {
                    // The window ends past the local clock's range: it cannot open by any
                    // deadline.
                    return Decision::Rejected {
                        retry_after: Duration::from_micros(retry_after),
                        local: false,
                    };
                };
                decide_full(window, received, deadline, false)
            }
            Some(ScriptReply::Conflict {
                period,
                limit,
                origin,
            }) => {
                self.drop_shares();
                Decision::Conflict(self.conflict(period, limit, origin))
            }
            Some(ScriptReply::KeyConflict {
                period,
                limit,
                origin,
            }) => Decision::Conflict(self.key_conflict(key, period, limit, origin)),
            Some(ScriptReply::Changed { limit, version, .. }) => {
                // A process reading live limits adopts the version only with them: its driver
                // reads them before the attempt is made again.
                let limit = if self.adopt(limit, version) || !self.is_tracking() {
                    self.limit()
                } else {
                    limit
                };
                Decision::LimitChanged { limit }
            }
            Some(ScriptReply::Registered { .. }) | None => {
                self.drop_shares();
                self.unavailable(Unavailable::new(
                    UnavailableKind::Reply,
                    format!("the script never answers {reply:?}"),
                ))
            }
        }
    }

    /// The permit of a lease call's reply granting `granted` at the server's `now` in the
    /// window beginning at `window_start`: the share is held only if the attempt was made under
    /// the limit in force (`current`) by a leasing process.
    fn leased(
        &self,
        key: &str,
        (n, version, current): (u32, u32, bool),
        (sent, received): (Instant, Instant),
        (granted, now, window_start): (u32, u64, u64),
    ) -> Decision {
        let end = self.window_end_micros(window_start);
        let reset = end.saturating_sub(now);
        let left = match &self.leasing {
            Some((shares, _)) if current => {
                // The deadline from the send; a window whose end the local clock
                // cannot represent leaves nothing to spend.
                let deadline =
                    coarse_lease_deadline(sent, now, end, self.config.clock_resolution())
                        .unwrap_or(Instant::ZERO);
                // The latest the window ends: a reading is up to a tick behind.
                let ends = received
                    .max(sent)
                    .saturating_add(Duration::from_micros(reset))
                    .saturating_add(self.config.clock_resolution());
                shares.granted(
                    key,
                    (n, granted, version, window_start),
                    (received, deadline, ends),
                )
            }
            _ => 0,
        };
        Decision::Permitted {
            remaining: left,
            reset: Duration::from_micros(reset),
            window_start,
        }
    }

    /// Finishes a lease call ([`ScriptCall::is_lease`]) for `n` permits of `key`, as
    /// [`finish_at`](Protocol::finish_at) does an attempt: a share granted is held (the
    /// caller's `n` out of it, the rest to be spent before its local deadline,
    /// [`lease_deadline`](crate::lease_deadline)) and its remainder is the permit's
    /// `remaining`; any other outcome lets the key lease again. Every lease call must be
    /// finished so (or the key is counted exactly until the call's timeout has passed).
    ///
    /// # Examples
    ///
    /// A share of 8 for one permit: 7 more are granted in-process, then the key leases again.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Decision, Lease, Protocol};
    ///
    /// let config = Config::of("api", 100, Duration::from_secs(1))?.with_lease(Lease::new(8)?);
    /// let protocol = Protocol::new(config);
    /// let t = Instant::ZERO;
    /// let Begin::Call(call) = protocol.begin("k", t, t)? else { panic!("no share yet") };
    /// // The server: 8 permits leased at 1,000,000 µs, in the window that began then.
    /// let decision = protocol.finish_lease("k", 1, call.limit_version(), (t, t, t), Ok(&[4, 8, 1_000_000, 1_000_000]));
    /// assert!(matches!(decision, Decision::Permitted { remaining: 7, .. }));
    /// for left in (0..7).rev() {
    ///     assert!(matches!(protocol.begin("k", t, t)?, Begin::Decided(Decision::Permitted { remaining, .. }) if remaining == left));
    /// }
    /// assert!(matches!(protocol.begin("k", t, t)?, Begin::Call(call) if call.is_lease()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_lease(
        &self,
        key: &str,
        n: u32,
        version: u32,
        times: (Instant, Instant, Instant),
        reply: Result<&[i64], Unavailable>,
    ) -> Decision {
        let leased = matches!(reply, Ok(reply) if reply.first() == Some(&LEASED_CODE));
        let decision = self.finish_at(key, n, version, times, reply);
        if !leased {
            self.lease_settled(key);
        }
        decision
    }

    /// What the call on `key` does after `decision`, known at local instant `at`: the result and the
    /// event, or a sleep. A call that may not sleep (one that never waits, or whose clock did
    /// not move across its last sleep, which would otherwise sleep forever on a stopped clock)
    /// turns a [`Decision::Wait`] into a rejection with the wait as its `retry_after`.
    ///
    /// # Examples
    ///
    /// A wait for a call whose clock stood still across its last sleep is a rejection.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, RateLimiterError};
    /// use fixed_window_redis::{Conclusion, Config, Decision, Protocol, SharedError};
    ///
    /// let protocol = Protocol::new(Config::of("api", 1, Duration::from_secs(1))?);
    /// let wait = Decision::Wait { until: Instant::from_nanos(300) };
    /// let at = Instant::from_nanos(100);
    /// assert_eq!(protocol.conclude("k", &wait, at, true), Conclusion::Sleep(Duration::from_nanos(200)));
    /// let Conclusion::Done { result: Err(SharedError::Limited(error)), .. } = protocol.conclude("k", &wait, at, false) else {
    ///     panic!("a call that may not sleep is rejected");
    /// };
    /// assert!(matches!(error, RateLimiterError::Rejected { retry_after, .. } if retry_after == Duration::from_nanos(200)));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn conclude(
        &self,
        key: &str,
        decision: &Decision,
        at: Instant,
        may_sleep: bool,
    ) -> Conclusion {
        let name = self.config.name();
        let result = match decision {
            &Decision::Wait { until } => {
                let pause = until.saturating_duration_since(at);
                if may_sleep {
                    return Conclusion::Sleep(pause);
                }
                let rejection = Decision::Rejected {
                    retry_after: pause,
                    local: true,
                };
                return Conclusion::Done {
                    result: Err(self.rejected(key, pause)),
                    event: rejection.event(at, name),
                };
            }
            &Decision::Permitted {
                remaining,
                reset,
                window_start,
            } => Ok(SharedPermit::counted(at, remaining, reset)
                .in_window(Duration::from_micros(window_start))),
            Decision::FailedOpen(cause) => Ok(SharedPermit::failed_open_with(at, cause.clone())),
            &Decision::Rejected { retry_after, .. } => Err(self.rejected(key, retry_after)),
            Decision::Unavailable(cause) => Err(SharedError::Unavailable {
                name,
                cause: cause.clone(),
            }),
            &Decision::Conflict(conflict) => Err(SharedError::Conflict(conflict)),
            Decision::LimitChanged { .. } => Err(self.limit_kept_changing()),
            &Decision::TooMany { requested, limit } => Err(self.too_many(requested, limit)),
        };
        Conclusion::Done {
            result,
            event: decision.event(at, name),
        }
    }
}

/// The decision on a full window at `now`: wait if it may open by the deadline (and the
/// deadline is still ahead), else reject. Waiting until the latest estimate of the opening
/// (capped at the deadline) means a waiter that wakes finds the window open; deciding by the
/// earliest estimate means no call that could get a permit by its deadline is rejected.
fn decide_full(window: FullWindow, now: Instant, deadline: Instant, local: bool) -> Decision {
    if window.opens_by <= deadline && now < deadline {
        Decision::Wait {
            until: window.opens_at.min(deadline),
        }
    } else {
        Decision::Rejected {
            retry_after: window.opens_at.saturating_duration_since(now),
            local,
        }
    }
}
