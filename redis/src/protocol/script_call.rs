//! One call of the script ([`ScriptCall`]): its keys and arguments, one attempt or a batch.

use std::sync::Arc;

use redis::cluster_routing::Slot;

use super::limit::{pack, unpack};

/// [`EXPIRY_MARGIN_MILLIS`](crate::EXPIRY_MARGIN_MILLIS) as the script's argument.
pub(super) const EXPIRY_MARGIN_ARG: &str = "1000";

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
    pub(super) config_key: Arc<str>,
    /// One per attempt, the attempts on one key next to each other (in the order joined);
    /// none for a registration.
    pub(super) counter_keys: Vec<String>,
    /// Where each attempt, in the order joined, is in `counter_keys`.
    pub(super) positions: Vec<u32>,
    pub(super) time_key: Option<Arc<str>>,
    pub(super) period: Arc<str>,
    /// The limit, and its version, as the script's arguments.
    pub(super) limit: Arc<LimitArgs>,
    pub(super) mode: &'static str,
    /// On a cluster, the registered origin, sent instead of the configuration key (see
    /// [`Protocol::for_cluster`](crate::Protocol::for_cluster)).
    pub(super) origin: Option<Arc<str>>,
    /// The permits each attempt takes, in the order of `counter_keys` (`None`: a drain, the
    /// rest of the window); empty while every attempt takes one (so that single permits
    /// allocate nothing for it).
    pub(super) weights: Vec<Option<u32>>,
    /// `weights` as the script's argument, when one of them is not 1.
    /// (Boxed: a hand-back's arguments fit beside it without growing the call.)
    pub(super) weights_arg: Option<Box<str>>,
    /// `counter_keys.len()` as the script's argument.
    pub(super) attempts: String,
    /// For a lease call ("lease", "lease-count"), the lease's arguments.
    pub(super) lease: Option<Arc<LeaseArgs>>,
    /// For a call handing back a share's unspent rest ("release", "release-count") or
    /// changing one key's limit live ("key-limit"), the script's `ARGV[9]` and `ARGV[10]`.
    /// (Boxed: one pointer beside the attempts' fields.)
    pub(crate) tail: Option<Box<TailArgs>>,
}

/// The script's `ARGV[9]` and `ARGV[10]` of a call that decides no attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TailArgs {
    /// A hand-back's window and permits.
    Release(ReleaseArgs),
    /// A live change of one key's limit.
    KeyChange(KeyChangeArgs),
    /// The whole live limits' text, written back where the server lost it (`ARGV[9]` only).
    Restore(Box<str>),
}

/// A key and its new live limit (empty: removed), as the script's `ARGV[9]` and `ARGV[10]`,
/// and the live limits' text the process holds (`ARGV[11]`, sent only if not empty): what
/// the change is made to where the server lost them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyChangeArgs {
    pub(super) key: Box<str>,
    pub(super) limit: Box<str>,
    pub(super) held: Box<str>,
}

/// The window start a share was leased in and its unspent permits, as the script's
/// `ARGV[9]` and `ARGV[10]` when they are handed back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReleaseArgs {
    pub(crate) window_start: Box<str>,
    pub(crate) permits: Box<str>,
}

/// A lease's largest share and divisor, as the script's `ARGV[9]` and `ARGV[10]`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct LeaseArgs {
    pub(super) max_share: Box<str>,
    pub(super) divisor: Box<str>,
}

/// A limit and its version, as a call carries them (shared by the calls made under them).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct LimitArgs {
    /// `version << 32 | limit`, as [`Protocol`](crate::Protocol) holds it.
    pub(super) packed: u64,
    /// The limit as the script's argument.
    pub(super) limit: Box<str>,
    /// The version as the script's argument; `None` for the limit the process was configured
    /// with (version 0), which the script takes for the version when none is given; for a
    /// key with a limit of its own, `version=limit`, or `version@limit` for one set live.
    pub(super) version: Option<Box<str>>,
    /// The limit of its own the call's key has, if any ([`ScriptCall::own_limit`]): made for
    /// such a call alone, so that calls of keys with different limits never join.
    pub(super) own: Option<u32>,
}

/// A key's limit of its own, and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Own {
    /// Given at build ([`Config::key_limit`](crate::Config::key_limit),
    /// [`Config::key_limits`](crate::Config::key_limits)).
    Built(u32),
    /// Set live on the server, every process's at the version read with it.
    Live(u32),
}

impl LimitArgs {
    pub(super) fn new(limit: u32, version: u32) -> Arc<LimitArgs> {
        Arc::new(LimitArgs {
            packed: pack(limit, version),
            limit: limit.to_string().into(),
            version: (version > 0).then(|| version.to_string().into()),
            own: None,
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
        let leasing = self.lease.is_some() || self.tail.is_some();
        let version = self.limit.version.as_deref();
        let versioned = version.is_some() || leasing;
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
            Some(weights) => Some(&**weights),
            None if versioned => Some(""),
            None => None,
        })
        .chain(version.or(leasing.then_some("")))
        .chain(
            self.lease
                .iter()
                .flat_map(|lease| [&*lease.max_share, &*lease.divisor]),
        )
        .chain(
            self.tail
                .iter()
                .flat_map(|tail| match &**tail {
                    TailArgs::Release(release) => {
                        [Some(&*release.window_start), Some(&*release.permits), None]
                    }
                    TailArgs::KeyChange(change) => [
                        Some(&*change.key),
                        Some(&*change.limit),
                        Some(&*change.held).filter(|held| !held.is_empty()),
                    ],
                    TailArgs::Restore(text) => [Some(&**text), None, None],
                })
                .flatten(),
        )
    }

    /// Whether this call leases shares of its keys' windows (see
    /// [`Config::with_lease`](crate::Config::with_lease)): finish it with
    /// [`Protocol::finish_lease`](crate::Protocol::finish_lease).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Lease, Protocol};
    ///
    /// let config = Config::of("api", 100, Duration::from_secs(1))?.with_lease(Lease::new(8)?);
    /// let Begin::Call(call) = Protocol::new(config).begin("k", Instant::ZERO, Instant::ZERO)? else {
    ///     panic!("no share is held yet");
    /// };
    /// assert!(call.is_lease());
    /// assert!(call.args().eq(["1000000", "100", "1000", "lease", "1", "", "", "", "8", "4"]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_lease(&self) -> bool {
        self.lease.is_some()
    }

    /// The version of the limit the call was made under: 0 for the limit the process was
    /// configured with, then one more for each change (see
    /// [`Protocol::limit_version`](crate::Protocol::limit_version)).
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

    /// The limit of its own the call's key has, sent with it; `None` for a key decided by the
    /// limiter's limit. The script reads it after the version of the limit (`ARGV[8]` is
    /// `version=limit`), decides the key's attempts by it, records it in the key's counter,
    /// and answers a conflict for a counter written under another limit of the key's at the
    /// same version (docs/rules.md). A call carries one key's limit: calls join only if
    /// their keys' limits are the same.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Protocol};
    ///
    /// let config = Config::of("api", 5, Duration::from_secs(1))?.key_limit("paid", 50)?;
    /// let protocol = Protocol::new(config);
    /// let call = |key| match protocol.begin(key, Instant::ZERO, Instant::ZERO) {
    ///     Ok(Begin::Call(call)) => call,
    ///     _ => unreachable!("nothing is remembered"),
    /// };
    /// let (mut paid, free) = (call("paid"), call("free"));
    /// assert_eq!((paid.own_limit(), free.own_limit()), (Some(50), None));
    /// assert!(paid.args().eq(["1000000", "5", "1000", "acquire", "1", "", "", "0=50"]));
    /// assert!(free.args().eq(["1000000", "5", "1000", "acquire", "1"]));
    /// assert!(paid.join(free).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn own_limit(&self) -> Option<u32> {
        self.limit.own
    }

    /// This call deciding its key by `own`, the key's own limit, if it has one.
    pub(super) fn owning(mut self, own: Option<Own>) -> ScriptCall {
        if let Some(own) = own {
            let (limit, mark) = match own {
                Own::Built(limit) => (limit, '='),
                Own::Live(limit) => (limit, '@'),
            };
            let version = format!("{}{mark}{limit}", self.limit_version()).into();
            self.limit = Arc::new(LimitArgs {
                packed: self.limit.packed,
                limit: self.limit.limit.clone(),
                version: Some(version),
                own: Some(limit),
            });
        }
        self
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
    pub(super) fn weighing(mut self, n: Option<u32>) -> ScriptCall {
        if n != Some(1) {
            self.weights = vec![n; self.counter_keys.len()];
            self.weights_arg = Some(weights_arg(&self.weights).into_boxed_str());
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
    /// [`Protocol::finish`](crate::Protocol::finish).
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
        // A hand-back carries its own window and permits, and a registration or a change
        // decides no attempt: never joined.
        let same = !matches!(self.mode, "register" | "limits" | "limit" | "key-limit")
            && self.tail.is_none()
            && other.tail.is_none()
            && self.mode == other.mode
            && self.origin == other.origin
            && self.config_key == other.config_key
            && self.time_key == other.time_key
            && self.period == other.period
            && self.limit == other.limit
            && self.lease == other.lease
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
            self.weights_arg = Some(weights_arg(&self.weights).into_boxed_str());
        }
        Ok(())
    }

    /// The part of the script's `reply` that answers attempt `index` (from 0, in the order
    /// joined), for [`Protocol::finish`](crate::Protocol::finish): its four integers (the reply follows `KEYS`). A reply that is not four per
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

    /// On a cluster, the hash slot of the call's counters, which one primary owns: calls of
    /// different slots may go to different primaries, and the coalescer keeps them apart so
    /// that one primary's trouble holds up no other's. `None` for a call to one node (any two
    /// of one limiter may share a script call) and for a registration.
    pub(crate) fn slot(&self) -> Option<Slot> {
        if self.on_cluster() {
            self.counter_keys.first().map(Slot::for_key)
        } else {
            None
        }
    }

    /// Whether this call counts (or peeks) on a cluster: its counters alone, without the
    /// configuration key.
    fn on_cluster(&self) -> bool {
        matches!(
            self.mode,
            "count" | "lease-count" | "peek-count" | "release-count"
        )
    }

    /// Whether `other`'s counters are in the slot of this call's (on a cluster, one call's
    /// keys must be).
    fn same_slot(&self, other: &ScriptCall) -> bool {
        self.slot() == other.slot()
    }
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
