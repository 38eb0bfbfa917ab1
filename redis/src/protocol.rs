//! The sans-IO client: what to send for an attempt, and what a reply (or its absence) means.
//!
//! The production client drives it over redis-rs; a simulator can drive it over a simulated
//! network and server, running [`SCRIPT`](crate::SCRIPT) itself. Both then exercise the same
//! decisions: the local memory of full windows, the mapping of server time to the local
//! clock, the wait-or-reject choice against the deadline, and the fail policy.

use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use fixed_window::{Instant, RateLimiterError};

use crate::config::{Config, FailPolicy};
use crate::error::{Conflict, SharedError};
use crate::lease::Shares;
use crate::memory::{FullWindow, FullWindows};
use crate::script::ScriptReply;
use crate::unavailable::{Unavailable, UnavailableKind};

mod attempt;
mod decision;
mod limit;
mod live;
mod live_restore;
use self::live::LiveLimits;
mod peek;
pub use self::peek::PeekBegin;
mod registration;
mod replicated;
pub(crate) use self::replicated::{replicated, wait_millis};
mod script_call;
pub use self::decision::{Begin, Conclusion, Decision};
pub use self::registration::LIMIT_REFRESH;
use self::script_call::{LeaseArgs, LimitArgs};
pub use self::script_call::{MAX_BATCH, ScriptCall};
pub(crate) use self::script_call::{ReleaseArgs, TailArgs};

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
    /// Under a lease ([`Config::with_lease`]), the shares held and the lease's arguments.
    leasing: Option<(Shares, Arc<LeaseArgs>)>,
    /// The keys' limits set live, with the limit and version they were read with.
    live: RwLock<Arc<LiveLimits>>,
    /// Whether live limits were ever read (never unset): until then an attempt takes no lock
    /// for them.
    any_live: AtomicBool,
    /// Whether this process reads the live limits: once it has ([`Protocol::limits_read`],
    /// or a change of its own), it adopts a newer version only together with them, and a
    /// reply telling of one is noted in `told` for the driver to read them
    /// ([`Protocol::limits_due`]).
    tracking: AtomicBool,
    /// The newest version of the limit a reply told of (tracking).
    told: AtomicU32,
    /// Whether the last read of the live limits found none stored at the version this
    /// process holds some at: lost with the server's memory, to be written back
    /// ([`Protocol::restore_call`]).
    lost: AtomicBool,
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
        let leasing = config.lease().map(|lease| {
            let args = Arc::new(LeaseArgs {
                max_share: lease.max_share().to_string().into(),
                divisor: lease.divisor().to_string().into(),
            });
            (Shares::new(lease, config.timeout()), args)
        });
        Protocol {
            leasing,
            current: AtomicU64::new(u64::from(config.limit())),
            configured: LimitArgs::new(config.limit(), 0),
            config,
            memory,
            cluster: None,
            changed: Mutex::new(None),
            live: RwLock::new(Arc::new(LiveLimits::default())),
            any_live: AtomicBool::new(false),
            tracking: AtomicBool::new(false),
            told: AtomicU32::new(0),
            lost: AtomicBool::new(false),
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

    fn rejected(&self, key: &str, retry_after: Duration) -> SharedError {
        let config = &self.config;
        SharedError::Limited(RateLimiterError::Rejected {
            name: config.name(),
            limit: self.key_limit(key),
            period: config.period(),
            max_wait: config.max_wait(),
            retry_after,
        })
    }

    pub(crate) fn call(&self, key: Option<&str>, mode: &'static str) -> ScriptCall {
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
            lease: None,
            tail: None,
        }
    }

    /// Under a lease, the shares this process holds.
    pub(crate) fn shares(&self) -> Option<&Shares> {
        self.leasing.as_ref().map(|(shares, _)| shares)
    }

    fn unavailable(&self, cause: Unavailable) -> Decision {
        match self.config.fail_policy() {
            // `Local` is decided by the driver, which keeps the in-process windows
            // ([`LocalShare`](crate::LocalShare)), from this `Unavailable`.
            FailPolicy::Closed | FailPolicy::Local { .. } => Decision::Unavailable(cause),
            FailPolicy::Open => Decision::FailedOpen(cause),
        }
    }

    /// The error of a configuration call (`what`: a registration, a change, a read) whose
    /// `reply` is not its success: the configuration's conflict, or an answer the script never
    /// gives it.
    fn refused(&self, reply: Option<ScriptReply>, what: &str) -> SharedError {
        match reply {
            Some(ScriptReply::Conflict {
                period,
                limit,
                origin,
            }) => SharedError::Conflict(self.conflict(period, limit, origin)),
            _ => SharedError::Unavailable {
                name: self.config.name(),
                cause: Unavailable::new(
                    UnavailableKind::Reply,
                    format!("{what} got an answer the script never gives"),
                ),
            },
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

    /// The conflict of a key whose counter was written under `written_limit`, another limit
    /// than `key`'s here (see [`ScriptReply::KeyConflict`](crate::ScriptReply::KeyConflict)):
    /// this process's limit for the key against the one its counter holds.
    fn key_conflict(
        &self,
        key: &str,
        period_micros: u64,
        written_limit: u64,
        origin: u64,
    ) -> Conflict {
        Conflict {
            limit: self.key_limit(key),
            ..self.conflict(period_micros, written_limit, origin)
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
        let window = FullWindow::new(
            sent,
            received,
            Duration::from_micros(retry_after_micros),
            self.config.clock_resolution(),
        )?;
        self.memory.remember(key, window, received);
        // A change adopted meanwhile forgets every window after moving the version: either
        // it forgot this one, or the version read here is the new one.
        if self.limit_version() != version {
            self.memory.forget(key);
        }
        Some(window)
    }
}

#[cfg(test)]
mod tests;
