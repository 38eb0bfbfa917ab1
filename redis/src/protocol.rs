//! The sans-IO client: what to send for an attempt, and what a reply (or its absence) means.
//!
//! The production client drives it over redis-rs; a simulator can drive it over a simulated
//! network and server, running [`SCRIPT`](crate::SCRIPT) itself. Both then exercise the same
//! decisions: the local memory of full windows, the mapping of server time to the local
//! clock, the wait-or-reject choice against the deadline, and the fail policy.

use core::time::Duration;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use redis::cluster_routing::Slot;

use fixed_window::{Instant, RateLimiterError, RateLimiterEvent};

use crate::config::{Config, ConfigError, FailPolicy};
use crate::error::{Conflict, SharedError};
use crate::event::SharedEvent;
use crate::key::{KeyError, check_key};
use crate::memory::{FullWindow, FullWindows};
use crate::permit::SharedPermit;
use crate::script::ScriptReply;
use crate::unavailable::{Unavailable, UnavailableKind};

/// [`EXPIRY_MARGIN_MILLIS`](crate::EXPIRY_MARGIN_MILLIS) as the script's argument.
const EXPIRY_MARGIN_ARG: &str = "1000";

/// The most attempts one script call carries: a driver coalescing attempts into one call
/// sends at most this many in it, and the rest in the next. Large enough that a process's
/// waiting attempts go in the next call whatever its concurrency, short of an overload; its
/// keys and reply stay a few tens of kilobytes.
pub const MAX_BATCH: usize = 512;

/// One call of [`SCRIPT`](crate::SCRIPT): its `KEYS` and `ARGV`, owned so that it can be
/// sent from another task. A call carries one attempt, or (after [`join`](ScriptCall::join))
/// a batch of attempts of one process, decided in order at the one instant the script runs.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::{Begin, Config, Protocol};
///
/// let protocol = Protocol::new(Config::of("api", 5, Duration::from_millis(1))?);
/// let Ok(Begin::Call(call)) = protocol.begin("client-7", Instant::ZERO, Instant::ZERO) else {
///     panic!("nothing is known yet, so the server decides");
/// };
/// assert_eq!(call.keys().collect::<Vec<_>>(), ["fixed-window:{api}", "fixed-window:{api}:client-7"]);
/// assert!(call.args().eq(["1000", "5", "1000", "acquire", "1"]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptCall {
    config_key: Arc<str>,
    /// One per attempt, the attempts on one key next to each other (in the order joined);
    /// none for a registration.
    counter_keys: Vec<String>,
    /// Where each attempt, in the order joined, is in `counter_keys`.
    positions: Vec<u32>,
    time_key: Option<Arc<str>>,
    period: Arc<str>,
    /// The limit, and its version, as the script's arguments.
    limit: Arc<LimitArgs>,
    mode: &'static str,
    /// On a cluster, the registered origin, sent instead of the configuration key (see
    /// [`Protocol::for_cluster`]).
    origin: Option<Arc<str>>,
    /// The permits each attempt takes, in the order of `counter_keys` (`None`: a drain, the
    /// rest of the window); empty while every attempt takes one (so that single permits
    /// allocate nothing for it).
    weights: Vec<Option<u32>>,
    /// `weights` as the script's argument, when one of them is not 1.
    weights_arg: Option<String>,
    /// `counter_keys.len()` as the script's argument.
    attempts: String,
}

/// A limit and its version, as a call carries them (shared by the calls made under them).
#[derive(Debug, PartialEq, Eq)]
struct LimitArgs {
    /// `version << 32 | limit`, as [`Protocol`] holds it.
    packed: u64,
    /// The limit as the script's argument.
    limit: Box<str>,
    /// The version as the script's argument; `None` for the limit the process was configured
    /// with (version 0), which the script takes for the version when none is given.
    version: Option<Box<str>>,
}

impl LimitArgs {
    fn new(limit: u32, version: u32) -> Arc<LimitArgs> {
        Arc::new(LimitArgs {
            packed: pack(limit, version),
            limit: limit.to_string().into(),
            version: (version > 0).then(|| version.to_string().into()),
        })
    }
}

impl ScriptCall {
    /// The script's `KEYS`, in order: the configuration key (not when counting on a
    /// cluster), each attempt's counter key (a key repeats for each attempt on it, the repeats
    /// next to each other; none for a registration), and the time key if one is configured.
    ///
    /// # Examples
    ///
    /// See [`ScriptCall`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let config = Config::of("api", 5, Duration::from_secs(1))?.with_time_key("now")?;
    /// let call = Protocol::new(config).register_call();
    /// assert_eq!(call.keys().collect::<Vec<_>>(), ["fixed-window:{api}", "now"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        let config_key = if self.on_cluster() {
            None
        } else {
            Some(&*self.config_key)
        };
        config_key
            .into_iter()
            .chain(self.counter_keys.iter().map(String::as_str))
            .chain(self.time_key.as_deref())
    }

    /// The time key, if one is configured (the last of [`keys`](ScriptCall::keys)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let config = Config::of("api", 5, Duration::from_secs(1))?;
    /// assert_eq!(Protocol::new(config).register_call().time_key(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn time_key(&self) -> Option<&str> {
        self.time_key.as_deref()
    }

    /// The script's `ARGV`: the period in microseconds, the limit, the expiry margin in
    /// milliseconds, the mode (`acquire`, `count` on a cluster, `register`, or `limit` to
    /// change the limit), the number of attempts; the origin, if the configuration fixes it
    /// or counting on a cluster (the registered one); if an attempt takes other than one
    /// permit, the permits of each (after an empty origin where there is none); and once the
    /// limit has been changed, the version of it the call was made under (after an empty
    /// origin and empty permits where there are none).
    ///
    /// # Examples
    ///
    /// See [`ScriptCall`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let call = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?).register_call();
    /// assert!(call.args().eq(["1000000", "5", "1000", "register", "0"]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn args(&self) -> impl Iterator<Item = &str> {
        let version = self.limit.version.as_deref();
        let versioned = version.is_some();
        [
            &*self.period,
            &*self.limit.limit,
            EXPIRY_MARGIN_ARG,
            self.mode,
            &*self.attempts,
        ]
        .into_iter()
        .chain(match &self.origin {
            Some(origin) => Some(&**origin),
            None if versioned || self.weights_arg.is_some() => Some(""),
            None => None,
        })
        .chain(match &self.weights_arg {
            Some(weights) => Some(weights.as_str()),
            None if versioned => Some(""),
            None => None,
        })
        .chain(version)
    }

    /// The version of the limit the call was made under: 0 for the limit the process was
    /// configured with, then one more for each change (see
    /// [`Protocol::limit_version`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!(protocol.register_call().limit_version(), 0);
    /// let call = protocol.set_limit_call(3)?;
    /// assert!(call.args().eq(["1000000", "3", "1000", "limit", "0"]));
    /// assert_eq!(protocol.limit_set(Ok(&[3, 3, 1, 0])), Ok(3));
    /// assert_eq!(protocol.register_call().limit_version(), 1);
    /// assert!(protocol.register_call().args().eq(["1000000", "3", "1000", "register", "0", "", "", "1"]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limit_version(&self) -> u32 {
        unpack(self.limit.packed).1
    }

    /// The permits attempt `index` (from 0, in the order joined) takes; `None` for a drain
    /// (whatever its window has left).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let Ok(Begin::Call(mut call)) = protocol.begin_n("a", 3, Instant::ZERO, Instant::ZERO) else {
    ///     unreachable!("nothing is remembered");
    /// };
    /// let Ok(Begin::Call(one)) = protocol.begin("b", Instant::ZERO, Instant::ZERO) else {
    ///     unreachable!("nothing is remembered");
    /// };
    /// call.join(one).expect("one limiter");
    /// assert_eq!((call.weight(0), call.weight(1)), (Some(3), Some(1)));
    /// assert!(call.args().eq(["1000000", "5", "1000", "acquire", "2", "", "3,1"]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn weight(&self, index: usize) -> Option<u32> {
        self.positions
            .get(index)
            .and_then(|&position| self.weights.get(position as usize))
            .copied()
            .unwrap_or(Some(1))
    }

    /// This call's attempts taking `n` permits each (`None`: draining), a call of one attempt
    /// just begun.
    fn weighing(mut self, n: Option<u32>) -> ScriptCall {
        if n != Some(1) {
            self.weights = vec![n; self.counter_keys.len()];
            self.weights_arg = Some(weights_arg(&self.weights));
        }
        self
    }

    /// How many attempts the call carries (0 for a registration).
    ///
    /// # Examples
    ///
    /// See [`join`](ScriptCall::join).
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let call = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?).register_call();
    /// assert_eq!(call.attempts(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn attempts(&self) -> usize {
        self.counter_keys.len()
    }

    /// The counter key of attempt `index` (from 0, in the order joined).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let Ok(Begin::Call(call)) = protocol.begin("a", Instant::ZERO, Instant::ZERO) else {
    ///     unreachable!("nothing is remembered");
    /// };
    /// assert_eq!(call.counter_key(0), Some("fixed-window:{api}:a"));
    /// assert_eq!(call.counter_key(1), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn counter_key(&self, index: usize) -> Option<&str> {
        let position = *self.positions.get(index)?;
        self.counter_keys.get(position as usize).map(String::as_str)
    }

    /// Adds `other`'s attempts after this call's, so that one script call decides them all at
    /// one instant of the server's clock, those on one key in the order joined. (The script
    /// wants a key's attempts next to each other, so an attempt goes after the last one on
    /// its key; attempts on different keys do not affect each other.) Give the reply's part for each
    /// attempt ([`reply_for`](ScriptCall::reply_for)) to its own
    /// [`Protocol::finish`].
    ///
    /// # Errors
    ///
    /// `other`, given back (boxed), if the two are not attempts of one limiter (the same
    /// configuration and time key), the batch would pass [`MAX_BATCH`], or, on a cluster,
    /// `other`'s counter is in another slot.
    ///
    /// # Examples
    ///
    /// Two attempts on one key and one on another, in one call.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Protocol, ScriptCall};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let call = |key| match protocol.begin(key, Instant::ZERO, Instant::ZERO) {
    ///     Ok(Begin::Call(call)) => call,
    ///     _ => unreachable!("nothing is remembered"),
    /// };
    /// let mut batch = call("a");
    /// batch.join(call("a")).expect("one limiter");
    /// batch.join(call("b")).expect("one limiter");
    /// assert_eq!((batch.attempts(), batch.args().nth(4)), (3, Some("3")));
    /// batch.join(call("a")).expect("one limiter");
    /// assert_eq!(
    ///     batch.keys().collect::<Vec<_>>(),
    ///     ["fixed-window:{api}", "fixed-window:{api}:a", "fixed-window:{api}:a", "fixed-window:{api}:a", "fixed-window:{api}:b"]
    /// );
    /// assert_eq!(batch.counter_key(3), Some("fixed-window:{api}:a"));
    /// assert!(batch.join(protocol.register_call()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn join(&mut self, other: ScriptCall) -> Result<(), Box<ScriptCall>> {
        let same = self.mode != "register"
            && self.mode == other.mode
            && self.origin == other.origin
            && self.config_key == other.config_key
            && self.time_key == other.time_key
            && self.period == other.period
            && self.limit == other.limit
            && self.attempts() + other.attempts() <= MAX_BATCH;
        if !same || (self.on_cluster() && !self.same_slot(&other)) {
            return Err(Box::new(other));
        }
        let weighed = !self.weights.is_empty() || !other.weights.is_empty();
        if weighed && self.weights.is_empty() {
            self.weights = vec![Some(1); self.counter_keys.len()];
        }
        let ScriptCall {
            counter_keys,
            positions,
            weights,
            ..
        } = other;
        let mut keys: Vec<Option<String>> = counter_keys.into_iter().map(Some).collect();
        for position in positions {
            let weight = weights.get(position as usize).copied().unwrap_or(Some(1));
            let Some(key) = keys.get_mut(position as usize).and_then(Option::take) else {
                continue;
            };
            // After the last attempt on the same key, or last of all.
            let at = self
                .counter_keys
                .iter()
                .rposition(|k| *k == key)
                .map_or(self.counter_keys.len(), |last| last + 1);
            let at_u32 = u32::try_from(at).unwrap_or(u32::MAX);
            for p in &mut self.positions {
                if *p >= at_u32 {
                    *p += 1;
                }
            }
            self.counter_keys.insert(at, key);
            if weighed {
                self.weights.insert(at, weight);
            }
            self.positions.push(at_u32);
        }
        self.attempts = self.counter_keys.len().to_string();
        if weighed {
            self.weights_arg = Some(weights_arg(&self.weights));
        }
        Ok(())
    }

    /// The part of the script's `reply` that answers attempt `index` (from 0, in the order
    /// joined), for [`Protocol::finish`]: its four integers (the reply follows `KEYS`). A reply that is not four per
    /// attempt (a refused configuration, which answers the whole batch once, or something
    /// the script never answers) is given whole to every attempt, which reads it as such.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let Ok(Begin::Call(mut batch)) = protocol.begin("a", Instant::ZERO, Instant::ZERO) else {
    ///     unreachable!("nothing is remembered");
    /// };
    /// let Ok(Begin::Call(second)) = protocol.begin("b", Instant::ZERO, Instant::ZERO) else {
    ///     unreachable!("nothing is remembered");
    /// };
    /// batch.join(second).expect("one limiter");
    /// let reply = [1, 4, 70, 0, 0, 9, 70, 0];
    /// assert_eq!(batch.reply_for(&reply, 1), [0, 9, 70, 0]);
    /// let refused = [-1, 2_000_000, 6, 0];
    /// assert_eq!(batch.reply_for(&refused, 1), refused);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reply_for<'r>(&self, reply: &'r [i64], index: usize) -> &'r [i64] {
        let position = self
            .positions
            .get(index)
            .map_or(usize::MAX / 8, |&p| p as usize);
        if reply.len() == 4 * self.attempts() {
            reply.get(4 * position..4 * position + 4).unwrap_or(reply)
        } else {
            reply
        }
    }

    /// Whether this call counts on a cluster: its counters alone, without the configuration
    /// key.
    fn on_cluster(&self) -> bool {
        self.mode == "count"
    }

    /// Whether `other`'s counters are in the slot of this call's (on a cluster, one call's
    /// keys must be).
    fn same_slot(&self, other: &ScriptCall) -> bool {
        let slot = |call: &ScriptCall| call.counter_keys.first().map(Slot::for_key);
        slot(self) == slot(other)
    }
}

/// How an attempt starts: decided locally, or by the server through a script call.
///
/// # Examples
///
/// See [`Protocol`].
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::{Begin, Config, Protocol};
///
/// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
/// assert!(matches!(protocol.begin("k", Instant::ZERO, Instant::ZERO), Ok(Begin::Call(_))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// Decided without a round trip: the key's window is known to be full.
    Decided(Decision),
    /// Send this call, then give its outcome to [`Protocol::finish`].
    Call(ScriptCall),
}

/// What an attempt decided.
///
/// # Examples
///
/// See [`Protocol`].
///
/// ```
/// use core::time::Duration;
/// use fixed_window_redis::Decision;
///
/// let decision = Decision::Rejected { retry_after: Duration::from_secs(1), local: true };
/// assert!(!decision.is_permit());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The server counted a permit; `remaining` are left in the key's window.
    Permitted {
        /// `limit − used` after this permit.
        remaining: u32,
        /// The time until the key's window ends, by the server's clock.
        reset: Duration,
    },
    /// The window is full and may open by the deadline: sleep until `until` (the latest
    /// local instant the window can open at, or the deadline if earlier), then attempt again.
    Wait {
        /// When to attempt again; always after the attempt's `now`.
        until: Instant,
    },
    /// The window is full and cannot open by the deadline.
    Rejected {
        /// The time until the next window opens: the server's figure for a server decision,
        /// the latest local estimate for a local one.
        retry_after: Duration,
        /// Decided from the local memory of full windows, without a round trip.
        local: bool,
    },
    /// The server could not decide and the policy is [`FailPolicy::Open`]: a permit nobody
    /// counted.
    FailedOpen(Unavailable),
    /// The server could not decide and the policy is [`FailPolicy::Closed`].
    Unavailable(Unavailable),
    /// The server holds a different configuration; nothing was counted.
    Conflict(Conflict),
    /// The limit was changed (by another process, through the server) since this attempt
    /// was begun, and this process has adopted the new one, `limit`: nothing was counted.
    /// Begin the attempt again: it goes under the new limit. (A call that meets this again
    /// and again, as the limit keeps changing, ends with it: [`Protocol::conclude`] makes it
    /// [`SharedError::Unavailable`].)
    LimitChanged {
        /// The limit now in effect.
        limit: u32,
    },
    /// More permits at once than the limit in effect, `limit`, lets a window hold: the call
    /// ends, never waiting for a window that could not grant it, and nothing is sent. A call
    /// checked against the limit when it began meets this only after a lowering (its own
    /// process's, or another's that an attempt adopted), at its next attempt.
    TooMany {
        /// The permits the attempt asked for.
        requested: u32,
        /// The limit in effect.
        limit: u32,
    },
}

impl Decision {
    /// Whether the caller may proceed (a counted permit, or one granted by the fail-open
    /// policy).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::Decision;
    ///
    /// assert!(Decision::Permitted { remaining: 0, reset: Duration::from_secs(1) }.is_permit());
    /// ```
    pub fn is_permit(&self) -> bool {
        matches!(self, Decision::Permitted { .. } | Decision::FailedOpen(_))
    }

    /// The event listeners get for this decision, made at `at` by the limiter `name`; `None`
    /// for a [`Decision::Wait`], a [`Decision::Conflict`] and a [`Decision::LimitChanged`],
    /// which are not outcomes the rules define, and for a [`Decision::TooMany`], which is
    /// neither a permit nor a rejection.
    ///
    /// # Examples
    ///
    /// A rejection is core's event, whether the server or the local memory decided it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, RateLimiterError, RateLimiterEvent};
    /// use fixed_window_redis::{Decision, SharedEvent};
    ///
    /// let decision = Decision::Rejected { retry_after: Duration::from_secs(1), local: true };
    /// assert_eq!(
    ///     decision.event(Instant::ZERO, "api"),
    ///     Some(SharedEvent::Limiter(RateLimiterEvent::Rejected {
    ///         at: Instant::ZERO,
    ///         name: "api",
    ///         retry_after: Duration::from_secs(1),
    ///     }))
    /// );
    /// ```
    pub fn event(&self, at: Instant, name: &'static str) -> Option<SharedEvent> {
        match self {
            Decision::Permitted { remaining, .. } => {
                Some(SharedEvent::Limiter(RateLimiterEvent::Permitted {
                    at,
                    name,
                    remaining: *remaining,
                }))
            }
            Decision::Rejected { retry_after, .. } => {
                Some(SharedEvent::Limiter(RateLimiterEvent::Rejected {
                    at,
                    name,
                    retry_after: *retry_after,
                }))
            }
            Decision::FailedOpen(cause) => Some(SharedEvent::Unavailable {
                at,
                name,
                cause: cause.clone(),
                failed_open: true,
            }),
            Decision::Unavailable(cause) => Some(SharedEvent::Unavailable {
                at,
                name,
                cause: cause.clone(),
                failed_open: false,
            }),
            Decision::Wait { .. }
            | Decision::Conflict(_)
            | Decision::LimitChanged { .. }
            | Decision::TooMany { .. } => None,
        }
    }
}

/// What a call does after an attempt's [`Decision`]: return, telling listeners, or sleep and
/// attempt again. The production limiter and a simulator both get it from
/// [`Protocol::conclude`], so results, errors and events are made by the same code.
///
/// # Examples
///
/// See [`Protocol::conclude`].
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::{Conclusion, Config, Decision, Protocol};
///
/// let protocol = Protocol::new(Config::of("api", 1, Duration::from_secs(1))?);
/// let decision = Decision::Permitted { remaining: 0, reset: Duration::from_secs(1) };
/// let permitted = protocol.conclude(&decision, Instant::ZERO, true);
/// assert!(matches!(permitted, Conclusion::Done { result: Ok(_), event: Some(_) }));
/// # Ok::<(), fixed_window_redis::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conclusion {
    /// The call ends with `result`; listeners get `event` first, if there is one.
    Done {
        /// What the call returns.
        result: Result<SharedPermit, SharedError>,
        /// The event of the decision.
        event: Option<SharedEvent>,
    },
    /// The call sleeps this long (on its clock), then attempts again.
    Sleep(Duration),
}

/// The sans-IO shared limiter of one process: its [`Config`] and its memory of full windows.
///
/// An attempt at local instant `now` for a call whose wait must end by `deadline`:
/// 1. [`begin`](Protocol::begin) decides at once if the key's window is known to be full
///    (no round trip), or gives the [`ScriptCall`] to send;
/// 2. the driver reads its clock just before sending (`sent`, which is `now`) and after the
///    outcome (`received`), and passes both with the reply, or with the [`Unavailable`] cause
///    of a timeout or a lost connection, to [`finish`](Protocol::finish).
///
/// Nothing here reads a clock, sleeps, or does IO; the decisions depend only on the inputs
/// and the memory, so a simulator driving it is deterministic.
///
/// # Examples
///
/// Driving it by hand, with a made-up server reply.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::{Begin, Config, Decision, Protocol};
///
/// let protocol = Protocol::new(Config::of("api", 1, Duration::from_secs(1))?);
/// let (sent, received) = (Instant::from_nanos(0), Instant::from_nanos(50_000));
/// // The server: the window is full for another 400 ms (400,000 µs).
/// let decision = protocol.finish("k", sent, received, sent, Ok(&[0, 400_000, 7_600_000, 7_000_000]));
/// assert_eq!(decision, Decision::Rejected { retry_after: Duration::from_millis(400), local: false });
/// // Until then the process rejects the key itself, with the latest estimate of the wait.
/// let later = Instant::from_nanos(100_000_000);
/// assert_eq!(
///     protocol.begin("k", later, later)?,
///     Begin::Decided(Decision::Rejected { retry_after: Duration::from_micros(300_050), local: true })
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Protocol {
    config: Config,
    memory: FullWindows,
    /// On a cluster, the origin once registered (decimal microseconds, as the script takes
    /// it); `None` on one node, where every call carries the configuration key instead.
    cluster: Option<OnceLock<Arc<str>>>,
    /// The limit in effect and its version: `version << 32 | limit`. Version 0 is the
    /// configured limit; a newer version is adopted from the server, never an older one.
    current: AtomicU64,
    /// The script's arguments for the configured limit.
    configured: Arc<LimitArgs>,
    /// The script's arguments for the limit in effect once it changed, made once per change.
    changed: Mutex<Option<Arc<LimitArgs>>>,
}

impl Protocol {
    /// The protocol of a process configured with `config`, remembering nothing yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 1, Duration::from_secs(1))?);
    /// assert_eq!((protocol.config().name(), protocol.remembered()), ("api", 0));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn new(config: Config) -> Protocol {
        let memory = FullWindows::new(config.local_memory());
        Protocol {
            current: AtomicU64::new(u64::from(config.limit())),
            configured: LimitArgs::new(config.limit(), 0),
            config,
            memory,
            cluster: None,
            changed: Mutex::new(None),
        }
    }

    /// The protocol of a process on a Redis Cluster (see [`Server`](crate::Server)): each
    /// counter in a slot of its own ([`Config::cluster_counter_key`]), counted without reading
    /// the configuration key, with the origin the process registered as an argument. Until
    /// [`registered`](Protocol::registered) has given it the origin, no attempt is sent:
    /// [`begin`](Protocol::begin) answers by the fail policy, as for a process not registered.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Protocol};
    ///
    /// let protocol = Protocol::for_cluster(Config::of("api", 5, Duration::from_millis(1))?);
    /// assert!(matches!(protocol.begin("client-7", Instant::ZERO, Instant::ZERO)?, Begin::Decided(_)));
    /// assert_eq!(protocol.registered(Ok(&[2, 1_000, 1_000, 0])), Ok(1_000));
    /// let Begin::Call(call) = protocol.begin("client-7", Instant::ZERO, Instant::ZERO)? else {
    ///     panic!("registered, the server decides");
    /// };
    /// assert!(call.keys().eq(["fixed-window:api:{client-7}"]));
    /// assert!(call.args().eq(["1000", "5", "1000", "count", "1", "1000"]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_cluster(config: Config) -> Protocol {
        // A fixed origin is known before any registration.
        let registered = OnceLock::new();
        if let Some(origin) = config.origin_arg() {
            let _ = registered.set(Arc::clone(origin));
        }
        Protocol {
            cluster: Some(registered),
            ..Protocol::new(config)
        }
    }

    /// Whether this is the protocol of a process on a cluster.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let config = Config::of("api", 5, Duration::from_secs(1))?;
    /// assert!(!Protocol::new(config.clone()).is_cluster());
    /// assert!(Protocol::for_cluster(config).is_cluster());
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn is_cluster(&self) -> bool {
        self.cluster.is_some()
    }

    /// The configuration, as the process was configured: the limit in effect may have changed
    /// since ([`limit`](Protocol::limit)).
    ///
    /// # Examples
    ///
    /// See [`Protocol::new`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// assert_eq!(Protocol::new(Config::of("api", 3, Duration::from_secs(1))?).config().limit(), 3);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The limit in effect: the configured one, until a change is learnt from the server (a
    /// [`Decision::LimitChanged`], [`registered`](Protocol::registered) or
    /// [`limit_set`](Protocol::limit_set)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!((protocol.limit(), protocol.limit_version()), (5, 0));
    /// // The server says the limit is 8 since its second change.
    /// assert_eq!(protocol.registered(Ok(&[3, 8, 2, 1_000])), Ok(1_000));
    /// assert_eq!((protocol.limit(), protocol.limit_version()), (8, 2));
    /// assert_eq!(protocol.config().limit(), 5); // as configured
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limit(&self) -> u32 {
        unpack(self.current.load(Ordering::Acquire)).0
    }

    /// The version of the limit in effect: 0 for the configured limit, then the version the
    /// server gave the last change learnt.
    ///
    /// # Examples
    ///
    /// See [`limit`](Protocol::limit).
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// assert_eq!(Protocol::new(Config::of("api", 5, Duration::from_secs(1))?).limit_version(), 0);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limit_version(&self) -> u32 {
        unpack(self.current.load(Ordering::Acquire)).1
    }

    /// The call that changes the shared limit to `limit` on the server: it stores `limit`
    /// with the next version of the limit, keeping the stored period and origin; give its
    /// reply to [`limit_set`](Protocol::limit_set). Every process learns the change from its
    /// next attempt (see [`Decision::LimitChanged`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError::Settings`] if `limit` is 0, as when configuring.
    ///
    /// # Examples
    ///
    /// See [`ScriptCall::limit_version`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!(protocol.set_limit_call(0).unwrap_err().field(), "limit");
    /// let call = protocol.set_limit_call(8)?;
    /// assert!(call.keys().eq(["fixed-window:{api}"]));
    /// assert_eq!(call.args().nth(3), Some("limit"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_limit_call(&self, limit: u32) -> Result<ScriptCall, ConfigError> {
        // Core's rule for a limit, as at build.
        fixed_window::Settings::new(self.config.name(), limit, self.config.period())?;
        let mut call = self.call(None, "limit");
        call.limit = LimitArgs::new(limit, self.limit_version());
        call.origin = match &self.cluster {
            Some(registered) => registered.get().cloned(),
            None => self.config.origin_arg().cloned(),
        };
        Ok(call)
    }

    /// The outcome of a [`set_limit_call`](Protocol::set_limit_call): the limit now in effect,
    /// adopted by this process (unless it learnt a still newer one meanwhile).
    ///
    /// # Errors
    ///
    /// [`SharedError::Conflict`] if the server holds another period; [`SharedError::Unavailable`]
    /// if the server could not answer (whatever the fail policy): the limit may or may not
    /// have changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, SharedError};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!(protocol.limit_set(Ok(&[3, 2, 1, 1_000])), Ok(2));
    /// assert_eq!(protocol.limit(), 2);
    /// let conflict = protocol.limit_set(Ok(&[-1, 2_000_000, 2, 1_000]));
    /// assert!(matches!(conflict, Err(SharedError::Conflict(c)) if c.stored_period == Duration::from_secs(2)));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limit_set(&self, reply: Result<&[i64], Unavailable>) -> Result<u32, SharedError> {
        let unavailable = |cause| SharedError::Unavailable {
            name: self.config.name(),
            cause,
        };
        match ScriptReply::parse(reply.map_err(unavailable)?) {
            Some(ScriptReply::Changed { limit, version, .. }) => {
                self.adopt(limit, version);
                Ok(self.limit())
            }
            Some(ScriptReply::Conflict {
                period,
                limit,
                origin,
            }) => Err(SharedError::Conflict(self.conflict(period, limit, origin))),
            _ => Err(unavailable(Unavailable::new(
                UnavailableKind::Reply,
                "the change of the limit got an answer the script never gives",
            ))),
        }
    }

    /// Adopts `limit` of `version` if that is newer than the one in effect, forgetting every
    /// window remembered full (under a higher limit it may have room). Whether it did.
    fn adopt(&self, limit: u32, version: u32) -> bool {
        let new = pack(limit, version);
        let mut current = self.current.load(Ordering::Acquire);
        loop {
            if unpack(current).1 >= version {
                return false;
            }
            match self.current.compare_exchange_weak(
                current,
                new,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(seen) => current = seen,
            }
        }
        self.memory.clear();
        true
    }

    /// The script's arguments for the limit in effect.
    fn limit_args(&self) -> Arc<LimitArgs> {
        let current = self.current.load(Ordering::Acquire);
        if current == self.configured.packed {
            return Arc::clone(&self.configured);
        }
        let mut changed = self.changed.lock().unwrap_or_else(PoisonError::into_inner);
        match &*changed {
            Some(args) if args.packed == current => Arc::clone(args),
            _ => {
                let (limit, version) = unpack(current);
                let args = LimitArgs::new(limit, version);
                *changed = Some(Arc::clone(&args));
                args
            }
        }
    }

    /// How many full windows are remembered (at most the configured
    /// [`local_memory`](Config::local_memory)).
    ///
    /// # Examples
    ///
    /// See [`Protocol::new`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// assert_eq!(Protocol::new(Config::of("api", 3, Duration::from_secs(1))?).remembered(), 0);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn remembered(&self) -> usize {
        self.memory.len()
    }

    /// The call that stores this process's configuration on the server if none is stored
    /// (fixing the shared origin), or checks it against the stored one, without counting.
    ///
    /// # Examples
    ///
    /// See [`ScriptCall::args`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let call = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?).register_call();
    /// assert_eq!(call.args().nth(3), Some("register"));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn register_call(&self) -> ScriptCall {
        let mut call = self.call(None, "register");
        call.origin = self.config.origin_arg().cloned();
        call
    }

    /// The outcome of a [`register_call`](Protocol::register_call): the shared origin, in
    /// microseconds on the server's clock.
    ///
    /// # Errors
    ///
    /// [`SharedError::Conflict`] if the server holds a different configuration,
    /// [`SharedError::Unavailable`] if the server could not answer (whatever the fail policy:
    /// there is nothing to permit yet).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, SharedError};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!(protocol.registered(Ok(&[2, 1_000, 1_000, 0])), Ok(1_000));
    /// let conflict = protocol.registered(Ok(&[-1, 1_000_000, 6, 1_000]));
    /// assert!(matches!(conflict, Err(SharedError::Conflict(c)) if c.stored_limit == 6));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn registered(&self, reply: Result<&[i64], Unavailable>) -> Result<u64, SharedError> {
        let unavailable = |cause| SharedError::Unavailable {
            name: self.config.name(),
            cause,
        };
        match ScriptReply::parse(reply.map_err(unavailable)?) {
            Some(ScriptReply::Registered { origin, .. }) => {
                if let Some(registered) = &self.cluster {
                    // The first registration's origin stays: a process counts on one grid.
                    let _ = registered.set(origin.to_string().into());
                }
                Ok(origin)
            }
            // The limit was changed since this process learnt it: registered, under the
            // stored limit.
            Some(ScriptReply::Changed {
                limit,
                version,
                origin,
            }) => {
                self.adopt(limit, version);
                if let Some(registered) = &self.cluster {
                    let _ = registered.set(origin.to_string().into());
                }
                Ok(origin)
            }
            Some(ScriptReply::Conflict {
                period,
                limit,
                origin,
            }) => Err(SharedError::Conflict(self.conflict(period, limit, origin))),
            _ => Err(unavailable(Unavailable::new(
                UnavailableKind::Reply,
                "the registration got an answer the script never gives",
            ))),
        }
    }

    /// The decision on an attempt made while this process is not registered (see
    /// [`Registration`](crate::Registration)): nothing is sent, and the fail policy answers,
    /// with an [`UnavailableKind::NotRegistered`] cause carrying `cause`, why the last
    /// registration failed. Nothing is remembered: the attempts of a registered process are
    /// decided by [`begin`](Protocol::begin) and [`finish`](Protocol::finish) as before.
    ///
    /// # Examples
    ///
    /// Fail closed, the call fails; fail open, it gets a flagged permit nobody counted.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Decision, FailPolicy, Protocol, Unavailable, UnavailableKind};
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?;
    /// let refused = Unavailable::new(UnavailableKind::Connection, "connection refused");
    /// let Decision::Unavailable(cause) = Protocol::new(config.clone()).unregistered(&refused) else {
    ///     panic!("fail closed answers Unavailable");
    /// };
    /// assert_eq!(cause.kind(), UnavailableKind::NotRegistered);
    /// assert_eq!(cause.to_string(), "not registered: connection: connection refused");
    /// let open = Protocol::new(config.with_fail_policy(FailPolicy::Open));
    /// assert!(matches!(open.unregistered(&refused), Decision::FailedOpen(_)));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn unregistered(&self, cause: &Unavailable) -> Decision {
        self.unavailable(Unavailable::new(
            UnavailableKind::NotRegistered,
            cause.to_string(),
        ))
    }

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
    /// (the limiter refuses it before beginning too, [`RateLimiterError::TooMany`]; a waiting
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
        let limit = self.limit();
        if n > limit {
            return Ok(Begin::Decided(Decision::TooMany {
                requested: n,
                limit,
            }));
        }
        if n > 0
            && let Some(window) = self.memory.get(key, now)
        {
            return Ok(Begin::Decided(decide_full(window, now, deadline, true)));
        }
        Ok(match self.counting_call(key) {
            Ok(call) => Begin::Call(call.weighing(Some(n))),
            Err(decision) => Begin::Decided(decision),
        })
    }

    /// The call counting one attempt on `key`: with the configuration key on one node (and
    /// the origin, if the configuration fixes it), with the registered or fixed origin on a
    /// cluster, or, on a cluster not registered yet, the fail policy's answer.
    fn counting_call(&self, key: &str) -> Result<ScriptCall, Decision> {
        match &self.cluster {
            None => {
                let mut call = self.call(Some(key), "acquire");
                call.origin = self.config.origin_arg().cloned();
                Ok(call)
            }
            Some(registered) => match registered.get() {
                Some(origin) => {
                    let mut call = self.call(Some(key), "count");
                    call.origin = Some(Arc::clone(origin));
                    Ok(call)
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
        if let Some(window) = self.memory.get(key, now) {
            return Ok(Begin::Decided(decide_full(window, now, now, true)));
        }
        Ok(match self.counting_call(key) {
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
            Err(cause) => return self.unavailable(cause),
        };
        match ScriptReply::parse(reply) {
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
                }
            }
            Some(ScriptReply::Full { retry_after, .. }) => {
                let window = if n > 1 || !current {
                    FullWindow::new(sent, received, Duration::from_micros(retry_after))
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
            }) => Decision::Conflict(self.conflict(period, limit, origin)),
            Some(ScriptReply::Changed { limit, version, .. }) => {
                self.adopt(limit, version);
                Decision::LimitChanged {
                    limit: self.limit(),
                }
            }
            Some(ScriptReply::Registered { .. }) | None => self.unavailable(Unavailable::new(
                UnavailableKind::Reply,
                format!("the script never answers {reply:?}"),
            )),
        }
    }

    /// What the call does after `decision`, known at local instant `at`: the result and the
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
    /// assert_eq!(protocol.conclude(&wait, at, true), Conclusion::Sleep(Duration::from_nanos(200)));
    /// let Conclusion::Done { result: Err(SharedError::Limited(error)), .. } = protocol.conclude(&wait, at, false) else {
    ///     panic!("a call that may not sleep is rejected");
    /// };
    /// assert!(matches!(error, RateLimiterError::Rejected { retry_after, .. } if retry_after == Duration::from_nanos(200)));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn conclude(&self, decision: &Decision, at: Instant, may_sleep: bool) -> Conclusion {
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
                    result: Err(self.rejected(pause)),
                    event: rejection.event(at, name),
                };
            }
            &Decision::Permitted { remaining, reset } => {
                Ok(SharedPermit::counted(at, remaining, reset))
            }
            Decision::FailedOpen(cause) => Ok(SharedPermit::failed_open_with(at, cause.clone())),
            &Decision::Rejected { retry_after, .. } => Err(self.rejected(retry_after)),
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

    /// The error of a call for `requested` permits, more than `limit`, the limit in effect,
    /// lets a window hold.
    pub(crate) fn too_many(&self, requested: u32, limit: u32) -> SharedError {
        SharedError::Limited(RateLimiterError::TooMany {
            name: self.config.name(),
            limit,
            requested,
        })
    }

    /// The error of a call whose attempts found the limit changed every time they were made.
    pub(crate) fn limit_kept_changing(&self) -> SharedError {
        SharedError::Unavailable {
            name: self.config.name(),
            cause: Unavailable::new(
                UnavailableKind::Server,
                "the shared limit changed again each time the attempt was made",
            ),
        }
    }

    fn rejected(&self, retry_after: Duration) -> SharedError {
        let config = &self.config;
        SharedError::Limited(RateLimiterError::Rejected {
            name: config.name(),
            limit: self.limit(),
            period: config.period(),
            max_wait: config.max_wait(),
            retry_after,
        })
    }

    fn call(&self, key: Option<&str>, mode: &'static str) -> ScriptCall {
        let counter_keys: Vec<String> = key
            .map(|key| match self.cluster {
                None => self.config.counter_key(key),
                Some(_) => self.config.cluster_counter_key(key),
            })
            .into_iter()
            .collect();
        let limit = self.limit_args();
        ScriptCall {
            config_key: Arc::clone(self.config.config_key_arc()),
            attempts: counter_keys.len().to_string(),
            positions: (0..).take(counter_keys.len()).collect(),
            counter_keys,
            time_key: self.config.time_key_arc().cloned(),
            period: Arc::clone(self.config.period_arg()),
            limit,
            mode,
            origin: None,
            weights: Vec::new(),
            weights_arg: None,
        }
    }

    fn unavailable(&self, cause: Unavailable) -> Decision {
        match self.config.fail_policy() {
            FailPolicy::Closed => Decision::Unavailable(cause),
            FailPolicy::Open => Decision::FailedOpen(cause),
        }
    }

    fn conflict(
        &self,
        stored_period_micros: u64,
        stored_limit: u64,
        stored_origin: u64,
    ) -> Conflict {
        Conflict {
            name: self.config.name(),
            limit: self.limit(),
            period: self.config.period(),
            origin: self.config.fixed_origin(),
            stored_limit,
            stored_period: Duration::from_micros(stored_period_micros),
            stored_origin,
        }
    }

    fn window_end_micros(&self, window_start: u64) -> u64 {
        // The period was validated to whole microseconds no longer than MAX_PERIOD.
        let period = u64::try_from(self.config.period().as_micros()).unwrap_or(u64::MAX);
        window_start.saturating_add(period)
    }

    /// Remembers `key`'s window full, as a reply under version `version` of the limit said.
    fn remember(
        &self,
        key: &str,
        version: u32,
        (sent, received): (Instant, Instant),
        retry_after_micros: u64,
    ) -> Option<FullWindow> {
        let window = FullWindow::new(sent, received, Duration::from_micros(retry_after_micros))?;
        self.memory.remember(key, window, received);
        // A change adopted meanwhile forgets every window after moving the version: either
        // it forgot this one, or the version read here is the new one.
        if self.limit_version() != version {
            self.memory.forget(key);
        }
        Some(window)
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

/// A limit and its version in one word, the version above.
fn pack(limit: u32, version: u32) -> u64 {
    u64::from(version) << 32 | u64::from(limit)
}

/// `(limit, version)` of a packed word.
fn unpack(packed: u64) -> (u32, u32) {
    // Each half is one u32.
    #[allow(clippy::cast_possible_truncation)]
    (packed as u32, (packed >> 32) as u32)
}

/// The permits of each attempt as the script's argument: `3,1,0`, `r` for a drain.
fn weights_arg(weights: &[Option<u32>]) -> String {
    let mut arg = String::with_capacity(weights.len() * 3);
    for (index, weight) in weights.iter().enumerate() {
        if index > 0 {
            arg.push(',');
        }
        match weight {
            Some(n) => arg.push_str(&n.to_string()),
            None => arg.push('r'),
        }
    }
    arg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EXPIRY_MARGIN_MILLIS;

    fn us(micros: u64) -> Instant {
        Instant::from_nanos(micros * 1_000)
    }

    fn protocol(config: Config) -> Protocol {
        Protocol::new(config)
    }

    fn config(limit: u32) -> Config {
        Config::of("api", limit, Duration::from_millis(10)).unwrap_or_else(|err| panic!("{err}"))
    }

    #[test]
    fn a_batch_groups_each_keys_attempts_and_gives_each_attempt_its_own_part() {
        let p = protocol(config(5));
        let call = |key| match p.begin(key, us(0), us(0)) {
            Ok(Begin::Call(call)) => call,
            other => panic!("expected a call, got {other:?}"),
        };
        let mut batch = call("a");
        for key in ["b", "a", "c", "b"] {
            assert!(batch.join(call(key)).is_ok());
        }
        let keys: Vec<&str> = batch.keys().skip(1).collect();
        let name = |k: &str| p.config().counter_key(k);
        assert_eq!(
            keys,
            [name("a"), name("a"), name("b"), name("b"), name("c")]
        );
        // The reply follows KEYS: a's two attempts, b's two, c's one.
        let reply: Vec<i64> = (0..5).flat_map(|i| [1, i, 70, 0]).collect();
        let parts: Vec<i64> = (0..5).map(|i| batch.reply_for(&reply, i)[1]).collect();
        // Joined a, b, a, c, b: at KEYS positions 0, 2, 1, 4, 3.
        assert_eq!(parts, [0, 2, 1, 4, 3]);
        let joined: Vec<&str> = (0..5).filter_map(|i| batch.counter_key(i)).collect();
        assert_eq!(
            joined,
            [name("a"), name("b"), name("a"), name("c"), name("b")]
        );
        // A registration or another limiter's attempt does not join.
        assert!(batch.join(p.register_call()).is_err());
        let other = protocol(config(6));
        let Ok(Begin::Call(foreign)) = other.begin("a", us(0), us(0)) else {
            panic!("nothing is remembered");
        };
        assert!(batch.join(foreign).is_err());
        assert_eq!(batch.attempts(), 5);
    }

    #[test]
    fn a_changed_limit_is_adopted_once_newer_and_forgets_the_full_windows() {
        let p = protocol(config(2));
        let t = us(0);
        // Full under the configured limit: remembered.
        p.finish("k", t, t, t, Ok(&[0, 5_000, 0, 0]));
        assert_eq!(p.remembered(), 1);
        // The server says version 2 is a limit of 4: adopted, the memory forgotten.
        assert_eq!(
            p.finish("j", t, t, t, Ok(&[3, 4, 2, 0])),
            Decision::LimitChanged { limit: 4 }
        );
        assert_eq!((p.limit(), p.limit_version(), p.remembered()), (4, 2, 0));
        // An older version is never adopted.
        assert_eq!(p.limit_set(Ok(&[3, 9, 1, 0])), Ok(4));
        assert_eq!((p.limit(), p.limit_version()), (4, 2));
        // A reply decided under the old version says nothing of the window under the new.
        p.finish_at("k", 1, 0, (t, t, t), Ok(&[0, 5_000, 0, 0]));
        p.finish_at("k", 1, 0, (t, t, t), Ok(&[1, 0, 0, 0]));
        assert_eq!(p.remembered(), 0);
        p.finish_at("k", 1, 2, (t, t, t), Ok(&[1, 0, 0, 0]));
        assert_eq!(p.remembered(), 1);
    }

    #[test]
    fn a_call_under_a_changed_limit_carries_its_version_and_joins_only_its_own() {
        let p = protocol(config(5));
        let Ok(Begin::Call(old)) = p.begin("a", us(0), us(0)) else {
            panic!("nothing is remembered");
        };
        assert_eq!(p.limit_set(Ok(&[3, 3, 1, 0])), Ok(3));
        let Ok(Begin::Call(mut new)) = p.begin_n("a", 2, us(0), us(0)) else {
            panic!("nothing is remembered");
        };
        assert_eq!((old.limit_version(), new.limit_version()), (0, 1));
        assert!(
            new.args()
                .eq(["10000", "3", "1000", "acquire", "1", "", "2", "1"])
        );
        assert!(new.join(old).is_err());
        // n above the new limit is refused locally, as too many.
        assert_eq!(
            p.begin_n("a", 4, us(0), us(0)),
            Ok(Begin::Decided(Decision::TooMany {
                requested: 4,
                limit: 3
            }))
        );
    }

    #[test]
    fn the_margin_argument_matches_the_constant() {
        assert_eq!(EXPIRY_MARGIN_ARG, EXPIRY_MARGIN_MILLIS.to_string());
    }

    #[test]
    fn a_permit_that_leaves_none_makes_the_key_known_full_until_the_window_ends() {
        let p = protocol(config(1));
        // Server: now 3,000 µs into a window that started at 0 and lasts 10,000 µs.
        let decision = p.finish("k", us(100), us(200), us(100), Ok(&[1, 0, 3_000, 0]));
        assert_eq!(
            decision,
            Decision::Permitted {
                remaining: 0,
                reset: Duration::from_micros(7_000)
            }
        );
        assert_eq!(p.remembered(), 1);
        // 7,000 µs left on the server; locally known full until 100 + 7,000 − 7.
        assert!(matches!(
            p.begin("k", us(7_092), us(7_092)),
            Ok(Begin::Decided(Decision::Rejected { local: true, .. }))
        ));
        assert!(matches!(
            p.begin("k", us(7_093), us(7_093)),
            Ok(Begin::Call(_))
        ));
    }

    #[test]
    fn a_full_window_is_waited_for_only_if_it_may_open_by_the_deadline() {
        let p = protocol(config(1));
        let full = [0, 5_000, 0, 0];
        // Earliest opening 0 + 5,000: a deadline there waits (until the deadline, before the
        // latest estimate 300 + 5,000).
        assert_eq!(
            p.finish("a", us(0), us(300), us(5_000), Ok(&full)),
            Decision::Wait { until: us(5_000) }
        );
        assert_eq!(
            p.finish("b", us(0), us(300), us(9_000), Ok(&full)),
            Decision::Wait { until: us(5_300) }
        );
        assert_eq!(
            p.finish("c", us(0), us(300), us(4_999), Ok(&full)),
            Decision::Rejected {
                retry_after: Duration::from_micros(5_000),
                local: false
            }
        );
    }

    #[test]
    fn a_waiter_that_wakes_goes_to_the_server() {
        let p = protocol(config(1));
        let Decision::Wait { until } =
            p.finish("a", us(0), us(300), us(9_000), Ok(&[0, 5_000, 0, 0]))
        else {
            panic!("the window opens before the deadline");
        };
        assert!(matches!(p.begin("a", until, us(9_000)), Ok(Begin::Call(_))));
    }

    #[test]
    fn the_fail_policy_decides_what_an_unavailable_server_means() {
        let cause = Unavailable::new(UnavailableKind::Connection, "refused");
        let closed = protocol(config(1));
        let open = protocol(config(1).with_fail_policy(FailPolicy::Open));
        let t = us(0);
        assert_eq!(
            closed.finish("k", t, t, t, Err(cause.clone())),
            Decision::Unavailable(cause.clone())
        );
        assert_eq!(
            open.finish("k", t, t, t, Err(cause.clone())),
            Decision::FailedOpen(cause)
        );
        // A reply the script never gives is no decision either.
        assert!(matches!(
            closed.finish("k", t, t, t, Ok(&[9, 9, 9, 9])),
            Decision::Unavailable(cause) if cause.kind() == UnavailableKind::Reply
        ));
    }

    #[test]
    fn a_conflicting_configuration_is_reported_with_both_sides() {
        let p = protocol(config(1));
        let t = us(0);
        assert_eq!(
            p.finish("k", t, t, t, Ok(&[-1, 20_000, 3, 0])),
            Decision::Conflict(Conflict {
                name: "api",
                limit: 1,
                period: Duration::from_millis(10),
                origin: None,
                stored_limit: 3,
                stored_period: Duration::from_millis(20),
                stored_origin: 0,
            })
        );
    }

    #[test]
    fn a_window_ending_past_the_local_clock_is_rejected_with_the_servers_wait() {
        let p = protocol(config(1));
        let near_end = Instant::MAX;
        assert_eq!(
            p.finish("k", near_end, near_end, near_end, Ok(&[0, 5, 0, 0])),
            Decision::Rejected {
                retry_after: Duration::from_micros(5),
                local: false
            }
        );
    }

    #[test]
    fn a_configured_time_key_is_the_last_key_of_every_call() {
        let timed = config(5)
            .with_time_key("now")
            .unwrap_or_else(|err| panic!("{err}"));
        let p = protocol(timed);
        let Ok(Begin::Call(call)) = p.begin("a", us(0), us(0)) else {
            panic!("nothing is remembered");
        };
        assert_eq!(call.time_key(), Some("now"));
        assert_eq!(call.keys().last(), call.time_key());
        assert_eq!(p.register_call().time_key(), Some("now"));
        assert_eq!(protocol(config(5)).register_call().time_key(), None);
    }

    #[test]
    fn on_a_cluster_a_call_counts_in_its_counters_slot_under_the_registered_origin() {
        let p = Protocol::for_cluster(config(5));
        assert!(p.is_cluster());
        assert!(!protocol(config(5)).is_cluster());
        // Not registered yet: nothing is sent, the fail policy answers.
        assert!(matches!(
            p.begin("a", us(0), us(0)),
            Ok(Begin::Decided(Decision::Unavailable(cause)))
                if cause.kind() == UnavailableKind::NotRegistered
        ));
        assert_eq!(p.registered(Ok(&[2, 1_000, 1_000, 0])), Ok(1_000));
        let call = |key| match p.begin(key, us(0), us(0)) {
            Ok(Begin::Call(call)) => call,
            other => panic!("expected a call, got {other:?}"),
        };
        let mut batch = call("a");
        // The counter alone, without the configuration key; the origin as an argument.
        let counter = p.config().cluster_counter_key("a");
        assert!(batch.keys().eq([counter.as_str()]));
        assert!(
            batch
                .args()
                .eq(["10000", "5", "1000", "count", "1", "1000"])
        );
        // Another attempt on the key is in its slot and joins; one on a key in another slot
        // does not.
        assert!(batch.join(call("a")).is_ok());
        assert!(batch.join(call("b")).is_err());
        assert_eq!(batch.attempts(), 2);
        assert!(batch.keys().eq([counter.as_str(), counter.as_str()]));
        // Changing the limit names the registered origin too.
        let change = p.set_limit_call(3).unwrap_or_else(|err| panic!("{err}"));
        assert!(
            change
                .args()
                .eq(["10000", "3", "1000", "limit", "0", "1000"])
        );
    }

    #[test]
    fn a_cluster_registration_that_finds_the_limit_changed_learns_the_origin_too() {
        let p = Protocol::for_cluster(config(5));
        assert_eq!(p.registered(Ok(&[3, 8, 2, 2_000])), Ok(2_000));
        assert_eq!((p.limit(), p.limit_version()), (8, 2));
        let Ok(Begin::Call(call)) = p.begin("a", us(0), us(0)) else {
            panic!("registered, the server decides");
        };
        assert!(
            call.args()
                .eq(["10000", "8", "1000", "count", "1", "2000", "", "2"])
        );
    }

    #[test]
    fn the_arguments_hold_an_empty_place_only_before_one_that_follows() {
        let p = protocol(config(5));
        let begin = |n| match p.begin_n("a", n, us(0), us(0)) {
            Ok(Begin::Call(call)) => call,
            other => panic!("expected a call, got {other:?}"),
        };
        // One permit under the configured limit: no origin, permits or version.
        assert!(begin(1).args().eq(["10000", "5", "1000", "acquire", "1"]));
        // Other permits: an empty origin before them.
        assert!(
            begin(2)
                .args()
                .eq(["10000", "5", "1000", "acquire", "1", "", "2"])
        );
        // A changed limit: an empty origin and empty permits before its version.
        assert_eq!(p.limit_set(Ok(&[3, 4, 1, 0])), Ok(4));
        assert!(
            begin(1)
                .args()
                .eq(["10000", "4", "1000", "acquire", "1", "", "", "1"])
        );
        // A fixed origin takes its own place, with nothing after it for one permit.
        let fixed = config(5)
            .with_origin(fixed_window::Origin::At(us(7)))
            .unwrap_or_else(|err| panic!("{err}"));
        let Ok(Begin::Call(call)) = protocol(fixed).begin("a", us(0), us(0)) else {
            panic!("nothing is remembered");
        };
        assert!(call.args().eq(["10000", "5", "1000", "acquire", "1", "7"]));
    }

    #[test]
    fn each_attempt_of_a_batch_takes_its_own_permits() {
        let p = protocol(config(5));
        let Ok(Begin::Call(mut batch)) = p.begin_n("a", 3, us(0), us(0)) else {
            panic!("nothing is remembered");
        };
        let Ok(Begin::Call(one)) = p.begin("b", us(0), us(0)) else {
            panic!("nothing is remembered");
        };
        assert!(batch.join(one).is_ok());
        assert_eq!((batch.weight(0), batch.weight(1)), (Some(3), Some(1)));
        assert!(
            batch
                .args()
                .eq(["10000", "5", "1000", "acquire", "2", "", "3,1"])
        );
        let Ok(Begin::Call(drain)) = p.begin_drain("c", us(0)) else {
            panic!("nothing is remembered");
        };
        assert_eq!(drain.weight(0), None);
        // Single permits joined carry no permits argument; a weighed attempt joined to them
        // gives each its own.
        let one = |key| match p.begin(key, us(0), us(0)) {
            Ok(Begin::Call(call)) => call,
            other => panic!("expected a call, got {other:?}"),
        };
        let mut singles = one("a");
        assert!(singles.join(one("b")).is_ok());
        assert!(singles.args().eq(["10000", "5", "1000", "acquire", "2"]));
        assert!(singles.join(drain).is_ok());
        assert!(
            singles
                .args()
                .eq(["10000", "5", "1000", "acquire", "3", "", "1,1,r"])
        );
    }

    #[test]
    fn a_batch_holds_at_most_max_batch_attempts() {
        let p = protocol(config(5));
        let call = || match p.begin("k", us(0), us(0)) {
            Ok(Begin::Call(call)) => call,
            other => panic!("expected a call, got {other:?}"),
        };
        let mut half = call();
        while half.attempts() < MAX_BATCH / 2 {
            assert!(half.join(call()).is_ok());
        }
        let mut batch = half.clone();
        assert!(batch.join(half).is_ok());
        assert_eq!(batch.attempts(), MAX_BATCH);
        assert!(batch.join(call()).is_err());
        assert_eq!(batch.attempts(), MAX_BATCH);
    }

    #[test]
    fn a_window_is_remembered_full_only_when_it_has_no_permit_left() {
        let p = protocol(config(5));
        let t = us(0);
        // A permit that leaves some: nothing to remember.
        assert!(matches!(
            p.finish("k", t, t, t, Ok(&[1, 3, 3_000, 0])),
            Decision::Permitted { remaining: 3, .. }
        ));
        assert_eq!(p.remembered(), 0);
        // Too full for three permits: it may still hold fewer.
        assert!(matches!(
            p.finish_n("k", 3, (t, t, t), Ok(&[0, 5_000, 0, 0])),
            Decision::Rejected { local: false, .. }
        ));
        assert_eq!(p.remembered(), 0);
        // Full for one: remembered, and any attempt for permits is then rejected locally,
        // but one for none still asks the server.
        p.finish("k", t, t, t, Ok(&[0, 5_000, 0, 0]));
        assert_eq!(p.remembered(), 1);
        assert!(matches!(
            p.begin_n("k", 5, t, t),
            Ok(Begin::Decided(Decision::Rejected { local: true, .. }))
        ));
        assert!(matches!(p.begin_n("k", 0, t, t), Ok(Begin::Call(_))));
        // As many permits as the limit may be granted by a window: sent.
        assert!(matches!(p.begin_n("j", 5, t, t), Ok(Begin::Call(_))));
    }

    #[test]
    fn a_deadline_already_reached_is_not_waited_for() {
        let p = protocol(config(1));
        // Sent at 0, answered at 300 with 100 µs to wait: the window may be open by then, but
        // the deadline, 300, has come.
        assert_eq!(
            p.finish("k", us(0), us(300), us(300), Ok(&[0, 100, 0, 0])),
            Decision::Rejected {
                retry_after: Duration::from_micros(100),
                local: false
            }
        );
    }

    #[test]
    fn a_conflicting_configuration_fails_a_registration_and_a_change_of_the_limit() {
        let p = protocol(config(1));
        let conflict = Conflict {
            name: "api",
            limit: 1,
            period: Duration::from_millis(10),
            origin: None,
            stored_limit: 3,
            stored_period: Duration::from_millis(20),
            stored_origin: 0,
        };
        assert_eq!(
            p.registered(Ok(&[-1, 20_000, 3, 0])),
            Err(SharedError::Conflict(conflict))
        );
        assert_eq!(
            p.limit_set(Ok(&[-1, 20_000, 3, 0])),
            Err(SharedError::Conflict(conflict))
        );
    }

    #[test]
    fn each_change_of_the_limit_goes_into_the_next_calls() {
        let p = protocol(config(5));
        let limit_arg = |p: &Protocol| {
            let call = p.register_call();
            call.args().nth(1).map(str::to_owned)
        };
        for (limit, version) in [(3, 1), (7, 2), (2, 3)] {
            assert_eq!(
                p.limit_set(Ok(&[3, i64::from(limit), i64::from(version), 0])),
                Ok(limit)
            );
            assert_eq!(limit_arg(&p), Some(limit.to_string()));
            assert_eq!(p.register_call().limit_version(), version);
        }
    }

    #[test]
    fn an_attempt_the_batch_does_not_hold_gets_the_whole_reply() {
        let p = protocol(config(5));
        let call = |key: &str| match p.begin(key, us(0), us(0)) {
            Ok(Begin::Call(call)) => call,
            other => panic!("expected a call, got {other:?}"),
        };
        let mut batch = call("k0");
        for i in 1..9 {
            assert!(batch.join(call(&format!("k{i}"))).is_ok());
        }
        let reply: Vec<i64> = (0..9).flat_map(|i| [1, i, 70, 0]).collect();
        assert_eq!(batch.reply_for(&reply, 8), [1, 8, 70, 0]);
        assert_eq!(batch.reply_for(&reply, 9), reply);
    }

    #[test]
    fn a_permit_counted_or_failed_open_lets_the_caller_proceed_and_is_told() {
        let t = us(0);
        let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
        let permitted = Decision::Permitted {
            remaining: 2,
            reset: Duration::from_micros(5),
        };
        let failed_open = Decision::FailedOpen(cause.clone());
        let rejected = Decision::Rejected {
            retry_after: Duration::from_micros(5),
            local: false,
        };
        assert!(permitted.is_permit() && failed_open.is_permit());
        assert!(!rejected.is_permit() && !Decision::Unavailable(cause.clone()).is_permit());
        assert_eq!(
            permitted.event(t, "api"),
            Some(SharedEvent::Limiter(RateLimiterEvent::Permitted {
                at: t,
                name: "api",
                remaining: 2,
            }))
        );
        assert_eq!(
            failed_open.event(t, "api"),
            Some(SharedEvent::Unavailable {
                at: t,
                name: "api",
                cause,
                failed_open: true,
            })
        );
        assert_eq!(Decision::Wait { until: t }.event(t, "api"), None);
    }
}
