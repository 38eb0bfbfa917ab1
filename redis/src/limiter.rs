//! The shared rate limiter: the sans-IO [`Protocol`] driven over a real connection, with the
//! blocking and async acquire loops and the listeners.

use core::fmt;
use core::future::IntoFuture;
use core::time::Duration;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use fixed_window::{Clock, Instant, Interrupt, RateLimiterError, SystemClock};

use crate::config::Config;
use crate::connection::Connection;
use crate::error::SharedError;
use crate::event::SharedEvent;
use crate::eviction::EvictionRisk;
use crate::invocation::Terms;
use crate::key::check_key;
use crate::permit::SharedPermit;
use crate::protocol::{Begin, Conclusion, Decision, Protocol};
use crate::registrar::{Background, Registrar};
use crate::registration::Registration;
use crate::server::Server;
use crate::unavailable::Unavailable;
use wait::{Awaiting, Blocking, Wait, block};

mod drain;
mod limit;
mod wait;
mod weighted;

/// How many times an attempt that finds the limit changed (another process changed it
/// through the server) is made again under the new one before the call gives up.
const CHANGE_RETRIES: u32 = 3;

/// How often (at most) an active limiter reads the configuration again in the background, so
/// that a change of the limit made by another process reaches it: on a cluster, where
/// attempts do not read the configuration, even on keys whose counters no process of the new
/// limit has written; on one node, while it remembers windows full, which it rejects without
/// asking the server (a raise may have given them room).
pub const LIMIT_REFRESH: Duration = Duration::from_secs(1);

type Listener = Box<dyn Fn(&str, &SharedEvent) + Send + Sync>;

/// A fixed-window rate limiter whose windows and counts live in Redis (or Valkey), shared by
/// every process that uses the same name: `limit` permits per `period` per key.
///
/// Each attempt is one round trip running [`SCRIPT`](crate::SCRIPT), which reads the server's
/// time, so all processes share one origin, one clock and one count. A key whose window this
/// process has seen full is rejected locally, without a round trip, until the window may have
/// ended. See the [crate documentation](crate) for the rules and what they guarantee.
///
/// Attempts that wait for the server at the same moment are coalesced: while one script call
/// of this limiter is in flight, new attempts queue, and go together (up to
/// [`MAX_BATCH`](crate::MAX_BATCH)) in the next call, each decided as it would be alone, in
/// order, at one instant of the server's clock. A lost reply makes every attempt of its call
/// `Unavailable` (under the fail policy), each of which may have counted.
///
/// Blocking methods (`try_acquire`, `acquire`, `call`, …) block the calling thread; call them
/// from ordinary threads, not from async tasks (use the `_async` forms there). Async methods
/// run inside any tokio runtime with time enabled, or on any other executor (the round trip
/// then runs on the limiter's runtime).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window_redis::{Config, SharedRateLimiter, redis};
///
/// let client = redis::Client::open("redis://127.0.0.1/")?;
/// # let server = fixed_window_redis_test::RedisServer::start()?;
/// # let client = server.client()?;
/// let config = Config::of("checkout", 2, Duration::from_secs(3600))?;
/// let replica_a = SharedRateLimiter::connect_blocking(config.clone(), client.clone())?;
/// let replica_b = SharedRateLimiter::connect_blocking(config, client)?;
/// assert_eq!(replica_a.try_acquire("alice")?.remaining(), Some(1));
/// assert_eq!(replica_b.try_acquire("alice")?.remaining(), Some(0));
/// assert!(replica_a.try_acquire("alice").is_err());
/// assert!(replica_b.try_acquire("bob").is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedRateLimiter<C = SystemClock> {
    protocol: Arc<Protocol>,
    connection: Connection,
    registrar: Arc<Registrar>,
    /// The registration in the background of a limiter started without the server.
    background: Option<Background>,
    clock: C,
    listeners: Vec<Listener>,
    /// How many listeners (the first ones added) have been told of the eviction risk, or had
    /// nothing to be told once the server's policy was read.
    told: AtomicUsize,
    /// The local instant (nanoseconds on the clock) of the last background read
    /// of the configuration ([`LIMIT_REFRESH`]).
    refreshed: AtomicU64,
}

impl SharedRateLimiter<SystemClock> {
    /// Connects to the server of `client` on the current tokio runtime and registers: stores
    /// the configuration there if it is absent (fixing the shared origin at the server's
    /// current time) or checks it against the stored one. It waits for the server: to build
    /// a limiter while the server may be unreachable, use
    /// [`start`](SharedRateLimiter::start).
    ///
    /// # Errors
    ///
    /// [`SharedError::Conflict`] if the server holds a different limit or period for this
    /// name; [`SharedError::Unavailable`] if it cannot be reached within the configured
    /// timeout (whatever the fail policy).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime with IO and time enabled, as redis-rs's `ConnectionManager`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let runtime = tokio::runtime::Runtime::new()?;
    /// runtime.block_on(async {
    ///     let config = Config::of("search", 10, Duration::from_secs(1))?;
    ///     let limiter = SharedRateLimiter::connect(config, client).await?;
    ///     assert_eq!(limiter.try_acquire_async("alice").await?.remaining(), Some(9));
    ///     Ok::<(), Box<dyn std::error::Error>>(())
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn connect(config: Config, server: impl Into<Server>) -> Result<Self, SharedError> {
        let terms = Terms::of(&config);
        let limiter = SharedRateLimiter::new(
            config,
            Connection::on_current_runtime(server.into(), terms),
            false,
        );
        limiter.registrar.register_once().await?;
        Ok(limiter)
    }

    /// Connects as [`connect`](SharedRateLimiter::connect) does, from synchronous code: the
    /// limiter runs its connection on a small runtime of its own (one worker thread), which
    /// its blocking and async methods both use.
    ///
    /// # Errors
    ///
    /// As [`connect`](SharedRateLimiter::connect).
    ///
    /// # Examples
    ///
    /// A server that is not there is a clear error, not a panic.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedError, SharedRateLimiter};
    ///
    /// let config = Config::of("search", 10, Duration::from_secs(1))?;
    /// // Port 1 on loopback: nothing listens there.
    /// let client = redis::Client::open("redis://127.0.0.1:1/")?;
    /// let err = SharedRateLimiter::connect_blocking(config, client).unwrap_err();
    /// assert!(matches!(err, SharedError::Unavailable { name: "search", .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn connect_blocking(
        config: Config,
        server: impl Into<Server>,
    ) -> Result<Self, SharedError> {
        let limiter = SharedRateLimiter::on_own_runtime(config, server.into(), false)?;
        let registrar = Arc::clone(&limiter.registrar);
        let outcome = limiter
            .connection
            .run_blocking(async move { Ok(registrar.register_once().await) })
            .map_err(|cause| limiter.unavailable(cause))?;
        outcome?;
        Ok(limiter)
    }

    /// A limiter on the current tokio runtime that does not wait for the server: it returns
    /// at once, and registers (as [`connect`](SharedRateLimiter::connect) does) in the
    /// background, trying again after each failure ([`Registration::retry_in`]: 100 ms,
    /// doubling up to 5 s). Until it has registered, its calls are not sent: each first tries
    /// to register itself, within the configured timeout, and if that fails too the fail
    /// policy answers ([`UnavailableKind::NotRegistered`](crate::UnavailableKind::NotRegistered)):
    /// fail closed, [`SharedError::Unavailable`]; fail open, a flagged permit nobody counted.
    /// Once the server answers, calls are counted, without a restart.
    ///
    /// So a service can start while Redis is down, and serve (by its fail policy) instead of
    /// restarting in a loop. What it costs: until it registers, fail-open permits are not
    /// limited at all, and fail-closed calls all fail; each call made meanwhile waits for a
    /// registration try (a refused connection is quick, an unreachable host takes the
    /// timeout). A configuration conflict found late is no error here: every call then fails
    /// with [`SharedError::Conflict`], as on a limiter whose stored configuration changed.
    /// See [`registration`](SharedRateLimiter::registration).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime with IO and time enabled.
    ///
    /// # Examples
    ///
    /// Nothing listens on port 1: the limiter is made all the same, and fails closed.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedError, SharedRateLimiter, UnavailableKind, redis};
    ///
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let config = Config::of("search", 10, Duration::from_secs(1))?;
    /// let limiter = SharedRateLimiter::start(config, redis::Client::open("redis://127.0.0.1:1/")?);
    /// let err = limiter.try_acquire_async("alice").await.unwrap_err();
    /// let cause = err.unavailable().ok_or("not Unavailable")?;
    /// assert_eq!(cause.kind(), UnavailableKind::NotRegistered);
    /// assert!(limiter.origin().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start(config: Config, server: impl Into<Server>) -> Self {
        let terms = Terms::of(&config);
        SharedRateLimiter::new(
            config,
            Connection::on_current_runtime(server.into(), terms),
            true,
        )
    }

    /// Starts as [`start`](SharedRateLimiter::start) does, from synchronous code, on a small
    /// runtime of the limiter's own (as [`connect_blocking`](SharedRateLimiter::connect_blocking)).
    ///
    /// # Errors
    ///
    /// [`SharedError::Unavailable`] only if the limiter's runtime cannot be started (the
    /// system refuses a thread); never on account of the server.
    ///
    /// # Examples
    ///
    /// Failing open, a call made while the server is unreachable is let through, flagged.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, FailPolicy, SharedRateLimiter, UnavailableKind, redis};
    ///
    /// let config = Config::of("search", 10, Duration::from_secs(1))?.with_fail_policy(FailPolicy::Open);
    /// let limiter = SharedRateLimiter::start_blocking(config, redis::Client::open("redis://127.0.0.1:1/")?)?;
    /// let permit = limiter.try_acquire("alice")?;
    /// assert_eq!(permit.remaining(), None); // nobody counted it
    /// assert_eq!(permit.failed_open().map(|cause| cause.kind()), Some(UnavailableKind::NotRegistered));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_blocking(config: Config, server: impl Into<Server>) -> Result<Self, SharedError> {
        SharedRateLimiter::on_own_runtime(config, server.into(), true)
    }

    fn on_own_runtime(config: Config, server: Server, start: bool) -> Result<Self, SharedError> {
        let name = config.name();
        let connection = Connection::on_own_runtime(server, Terms::of(&config))
            .map_err(|cause| SharedError::Unavailable { name, cause })?;
        Ok(SharedRateLimiter::new(config, connection, start))
    }

    /// A limiter over `connection`, registering in the background if `start`.
    fn new(config: Config, connection: Connection, start: bool) -> Self {
        let protocol = Arc::new(if connection.link().is_cluster() {
            Protocol::for_cluster(config)
        } else {
            Protocol::new(config)
        });
        let registrar = Registrar::new(Arc::clone(connection.link()), Arc::clone(&protocol));
        let background = start.then(|| registrar.spawn(connection.handle()));
        SharedRateLimiter {
            protocol,
            connection,
            registrar,
            background,
            clock: SystemClock,
            listeners: Vec::new(),
            told: AtomicUsize::new(0),
            refreshed: AtomicU64::new(SystemClock.now().as_nanos()),
        }
    }
}

impl<C: Clock> SharedRateLimiter<C> {
    /// This limiter measuring local time (the deadline of a waiting call, the local memory of
    /// full windows) and sleeping through `clock`. The windows themselves are on the server's
    /// clock whatever this is.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, ManualClock};
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("api", 1, Duration::from_secs(3600))?;
    /// let clock = ManualClock::new();
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?.with_clock(clock.clone());
    /// assert_eq!(limiter.try_acquire("k")?.at(), clock.now());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_clock<D: Clock>(self, clock: D) -> SharedRateLimiter<D> {
        let refreshed = AtomicU64::new(clock.now().as_nanos());
        SharedRateLimiter {
            protocol: self.protocol,
            connection: self.connection,
            registrar: self.registrar,
            background: self.background,
            clock,
            listeners: self.listeners,
            told: self.told,
            refreshed,
        }
    }

    /// This limiter with `listener` also receiving every [`SharedEvent`] with the key it is
    /// about; listeners run in the order they were added, on the calling thread, and a
    /// listener that panics is contained.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::{Arc, Mutex};
    /// use fixed_window::RateLimiterEvent;
    /// use fixed_window_redis::{Config, SharedEvent, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(3600))?, client)?
    ///     .with_listener(move |key, event| log.lock().unwrap().push((key.to_owned(), event.clone())));
    /// limiter.try_acquire("alice")?;
    /// assert!(matches!(
    ///     &seen.lock().unwrap()[..],
    ///     [(key, SharedEvent::Limiter(RateLimiterEvent::Permitted { remaining: 0, .. }))] if key == "alice"
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_listener(
        mut self,
        listener: impl Fn(&str, &SharedEvent) + Send + Sync + 'static,
    ) -> Self {
        self.listeners.push(Box::new(listener));
        self.announce();
        self
    }

    /// The configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 5, Duration::from_secs(1))?, client)?;
    /// assert_eq!((limiter.config().name(), limiter.config().limit()), ("api", 5));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn config(&self) -> &Config {
        self.protocol.config()
    }

    /// The sans-IO protocol this limiter drives (for its memory's size, say).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(3600))?, client)?;
    /// limiter.try_acquire("k")?;
    /// assert_eq!(limiter.protocol().remembered(), 1); // "k" is full: remembered
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn protocol(&self) -> &Protocol {
        &self.protocol
    }

    /// The shared origin found or stored when this limiter registered, in microseconds on the
    /// server's clock; `None` while it has not registered (or the server refused its
    /// configuration). (A server that lost its data since then has a new one.) A fixed origin
    /// ([`Config::with_origin`]) is known from the start.
    ///
    /// # Examples
    ///
    /// The second process adopts the first one's origin.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("api", 1, Duration::from_secs(1))?;
    /// let first = SharedRateLimiter::connect_blocking(config.clone(), client.clone())?;
    /// let second = SharedRateLimiter::connect_blocking(config, client)?;
    /// assert!(first.origin().is_some());
    /// assert_eq!(first.origin(), second.origin());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn origin(&self) -> Option<u64> {
        match self.registrar.registration() {
            Registration::Refused(_) => None,
            registration => registration
                .origin()
                .or(self.protocol.config().fixed_origin()),
        }
    }

    /// Where this limiter stands with the server: [`Registration::Pending`] (with why the
    /// last try failed) while a limiter [`start`](SharedRateLimiter::start)ed without the
    /// server has not registered, [`Registration::Registered`] once it has (always, for one
    /// that [`connect`](SharedRateLimiter::connect)ed), [`Registration::Refused`] if the
    /// server holds another configuration for its name.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Registration, SharedRateLimiter, redis};
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(config.clone(), client)?;
    /// assert!(matches!(limiter.registration(), Registration::Registered { .. }));
    /// let nowhere = SharedRateLimiter::start_blocking(config, redis::Client::open("redis://127.0.0.1:1/")?)?;
    /// assert!(nowhere.try_acquire("k").is_err());
    /// assert!(matches!(nowhere.registration(), Registration::Pending { failures: 1.., .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn registration(&self) -> Registration {
        self.registrar.registration()
    }

    /// What the server's memory policy may evict of this limiter's keys, read when it
    /// registered (see [`EvictionRisk`]): `None` if nothing (no memory limit, or
    /// `noeviction`), and also if it could not be read (not registered yet, or a user without
    /// `CONFIG GET`, as on managed services that rename it). Listeners hear of a risk too
    /// ([`SharedEvent::EvictionRisk`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    /// use fixed_window_redis_test::{RedisServer, ServerOptions};
    ///
    /// let server = RedisServer::start_with(&ServerOptions::new().with_maxmemory(64 << 20, "allkeys-lru"))?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(1))?, server.client()?)?;
    /// let risk = limiter.eviction_risk().ok_or("allkeys-lru with a limit evicts")?;
    /// assert_eq!((risk.policy(), risk.maxmemory(), risk.configuration()), ("allkeys-lru", 64 << 20, true));
    ///
    /// let unlimited = RedisServer::start()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(1))?, unlimited.client()?)?;
    /// assert_eq!(limiter.eviction_risk(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn eviction_risk(&self) -> Option<EvictionRisk> {
        self.registrar.eviction().and_then(Option::clone)
    }

    /// The clock the limiter measures local time with and sleeps through.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, ManualClock};
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(1))?, client)?
    ///     .with_clock(ManualClock::new());
    /// assert_eq!(limiter.clock().now(), Instant::ZERO);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Takes a permit for `key` if its window has one, never waiting, whatever `max_wait` is.
    ///
    /// # Errors
    ///
    /// [`SharedError::Limited`] with [`RateLimiterError::Rejected`] if the window is full;
    /// [`SharedError::Unavailable`] if the server could not decide and the policy is fail
    /// closed; [`SharedError::Conflict`] if the server holds a different configuration;
    /// [`SharedError::InvalidKey`] for a key that cannot name a counter.
    ///
    /// # Examples
    ///
    /// See [`SharedRateLimiter`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(3600))?, client)?;
    /// limiter.try_acquire("k")?;
    /// let rejected = limiter.try_acquire("k").unwrap_err();
    /// assert!(rejected.retry_after().is_some_and(|wait| wait <= Duration::from_secs(3600)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_acquire(&self, key: &str) -> Result<SharedPermit, SharedError> {
        let now = self.clock.now();
        let (at, decision) = self.attempt_blocking(key, Some(1), now, now)?;
        self.finish_at_once(key, at, &decision)
    }

    /// Takes a permit for `key`, waiting (blocking the thread, through the clock) up to
    /// `max_wait` for a later window if the current one is full.
    ///
    /// # Errors
    ///
    /// As [`try_acquire`](SharedRateLimiter::try_acquire); a rejection also when the clock's
    /// sleep did not move its time.
    ///
    /// # Examples
    ///
    /// A window that cannot open by the deadline is rejected at once.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("api", 1, Duration::from_secs(3600))?.with_max_wait(Duration::from_secs(1));
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// limiter.acquire("k")?;
    /// assert!(limiter.acquire("k").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire(&self, key: &str) -> Result<SharedPermit, SharedError> {
        self.acquire_blocking(key, 1, None)
    }

    /// Like [`acquire`](SharedRateLimiter::acquire), but a wait ends at once when `interrupt`
    /// is interrupted, and the call fails with [`RateLimiterError::Interrupted`].
    ///
    /// # Errors
    ///
    /// As [`acquire`](SharedRateLimiter::acquire), and `Interrupted`.
    ///
    /// # Examples
    ///
    /// An already interrupted handle fails a call that would have to wait.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Interrupt, RateLimiterError};
    /// use fixed_window_redis::{Config, SharedError, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("api", 1, Duration::from_secs(1))?.with_max_wait(Duration::from_secs(5));
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// let interrupt = Interrupt::new();
    /// interrupt.interrupt();
    /// limiter.acquire_interruptible("k", &interrupt)?;
    /// assert_eq!(
    ///     limiter.acquire_interruptible("k", &interrupt),
    ///     Err(SharedError::Limited(RateLimiterError::Interrupted { name: "api" }))
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire_interruptible(
        &self,
        key: &str,
        interrupt: &Interrupt,
    ) -> Result<SharedPermit, SharedError> {
        self.acquire_blocking(key, 1, Some(interrupt))
    }

    /// Runs `op` if a permit for `key` is granted (waiting up to `max_wait`), returning its
    /// result as it is; without a permit `op` does not run.
    ///
    /// # Errors
    ///
    /// As [`acquire`](SharedRateLimiter::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(3600))?, client)?;
    /// assert_eq!(limiter.call("k", || 42)?, 42);
    /// assert!(limiter.call("k", || unreachable!("no permit, so this never runs")).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn call<T>(&self, key: &str, op: impl FnOnce() -> T) -> Result<T, SharedError> {
        self.acquire(key)?;
        Ok(op())
    }

    /// Like [`call`](SharedRateLimiter::call), with waits interruptible through `interrupt`.
    ///
    /// # Errors
    ///
    /// As [`acquire_interruptible`](SharedRateLimiter::acquire_interruptible).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Interrupt;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(3600))?, client)?;
    /// assert_eq!(limiter.call_interruptible("k", &Interrupt::new(), || "ran")?, "ran");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn call_interruptible<T>(
        &self,
        key: &str,
        interrupt: &Interrupt,
        op: impl FnOnce() -> T,
    ) -> Result<T, SharedError> {
        self.acquire_interruptible(key, interrupt)?;
        Ok(op())
    }

    /// Takes a permit for `key` if its window has one, never waiting.
    ///
    /// Dropping the future while its attempt is queued for the next call spends nothing (it
    /// is not sent); during its round trip it may still spend a permit: the script may
    /// already have run, as when a reply is lost.
    ///
    /// # Errors
    ///
    /// As [`try_acquire`](SharedRateLimiter::try_acquire).
    ///
    /// # Examples
    ///
    /// See [`connect`](SharedRateLimiter::connect).
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(3600))?, client)?;
    /// let permit = futures::executor::block_on(limiter.try_acquire_async("k"))?;
    /// assert_eq!(permit.remaining(), Some(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn try_acquire_async(&self, key: &str) -> Result<SharedPermit, SharedError> {
        let now = self.clock.now();
        let (at, decision) = self.attempt_async(key, Some(1), now, now).await?;
        self.finish_at_once(key, at, &decision)
    }

    /// Takes a permit for `key`, awaiting the clock's asynchronous sleep up to `max_wait` for
    /// a later window, so a waiting call holds a task, not a thread.
    ///
    /// Cancel-safe while it sleeps: dropping it then takes nothing. Dropped during a round
    /// trip, it may have spent a permit (the script may have run).
    ///
    /// # Errors
    ///
    /// As [`acquire`](SharedRateLimiter::acquire).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let config = Config::of("api", 2, Duration::from_secs(3600))?.with_max_wait(Duration::from_secs(1));
    /// let limiter = SharedRateLimiter::connect_blocking(config, client)?;
    /// let permit = futures::executor::block_on(limiter.acquire_async("k"))?;
    /// assert_eq!(permit.remaining(), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn acquire_async(&self, key: &str) -> Result<SharedPermit, SharedError> {
        self.acquire_waiting_async(key, 1).await
    }

    /// A waiting call for `n` permits, awaiting the clock's sleep.
    async fn acquire_waiting_async(&self, key: &str, n: u32) -> Result<SharedPermit, SharedError> {
        self.acquire_waiting(&Awaiting, key, n).await
    }

    /// Runs the future `op` if a permit for `key` is granted (awaiting up to `max_wait`); `op`
    /// is not polled at all without one.
    ///
    /// # Errors
    ///
    /// As [`acquire_async`](SharedRateLimiter::acquire_async).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, SharedRateLimiter, redis};
    ///
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let client = server.client()?;
    /// let limiter = SharedRateLimiter::connect_blocking(Config::of("api", 1, Duration::from_secs(3600))?, client)?;
    /// let first = futures::executor::block_on(limiter.call_async("k", async { 7 }));
    /// let second = futures::executor::block_on(limiter.call_async("k", async { 8 }));
    /// assert_eq!(first, Ok(7));
    /// assert!(second.is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn call_async<F: IntoFuture>(
        &self,
        key: &str,
        op: F,
    ) -> Result<F::Output, SharedError> {
        self.acquire_async(key).await?;
        Ok(op.await)
    }

    /// A waiting call for `n` permits, blocking the thread; `interrupt` ends its sleeps.
    fn acquire_blocking(
        &self,
        key: &str,
        n: u32,
        interrupt: Option<&Interrupt>,
    ) -> Result<SharedPermit, SharedError> {
        block(self.acquire_waiting(&Blocking::new(interrupt), key, n))
    }

    /// A waiting call for `n` permits: attempts until one is decided, sleeping between them
    /// as `wait` does.
    async fn acquire_waiting(
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
    fn attempt_blocking(
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
    async fn attempt_async(
        &self,
        key: &str,
        weight: Option<u32>,
        now: Instant,
        deadline: Instant,
    ) -> Result<(Instant, Decision), SharedError> {
        self.attempt(&Awaiting, key, weight, now, deadline).await
    }

    /// One attempt, made again (up to [`CHANGE_RETRIES`] times) while it finds the limit
    /// changed: the decision and the local instant it was known at.
    async fn attempt(
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
        self.refresh_limit(now);
        let (mut now, mut tries) = (now, 0);
        loop {
            tries += 1;
            let (at, decision) = match self.begin(key, weight, now, deadline)? {
                Begin::Decided(decision) => return Ok((now, decision)),
                Begin::Call(call) => {
                    let version = call.limit_version();
                    let reply = wait.acquire(&self.connection, call).await;
                    self.finish(key, weight, version, now, deadline, reply)
                }
            };
            if !matches!(decision, Decision::LimitChanged { .. }) || tries > CHANGE_RETRIES {
                return Ok((at, decision));
            }
            now = at;
        }
    }

    /// On a cluster, or on one node while windows are remembered full, reads the
    /// configuration again in the background (at most once per [`LIMIT_REFRESH`] on
    /// the clock), adopting a newer limit stored there. The attempt does not wait for it; a
    /// failed read is simply tried again later.
    fn refresh_limit(&self, now: Instant) {
        if !self.protocol.is_cluster() && self.protocol.remembered() == 0 {
            return;
        }
        let last = self.refreshed.load(Ordering::Relaxed);
        let every = u64::try_from(LIMIT_REFRESH.as_nanos()).unwrap_or(u64::MAX);
        if now.as_nanos() < last.saturating_add(every)
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
            let call = protocol.register_call();
            if let Ok(Ok(reply)) = tokio::time::timeout(link.timeout(), link.run(&call)).await {
                // A conflict or a reply of no use changes nothing here: attempts report them.
                let _ = protocol.registered(Ok(&reply));
            }
        }));
    }

    /// A key that cannot name a counter is refused before anything else.
    fn check(&self, key: &str) -> Result<(), SharedError> {
        check_key(key).map_err(|error| SharedError::InvalidKey {
            name: self.config().name(),
            error,
        })
    }

    fn unavailable(&self, cause: Unavailable) -> SharedError {
        SharedError::Unavailable {
            name: self.config().name(),
            cause,
        }
    }

    /// Begins an attempt for `weight` permits, or a drain (`None`).
    fn begin(
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

    fn finish(
        &self,
        key: &str,
        weight: Option<u32>,
        version: u32,
        sent: Instant,
        deadline: Instant,
        reply: Result<Vec<i64>, Unavailable>,
    ) -> (Instant, Decision) {
        let received = self.clock.now();
        let times = (sent, received, deadline);
        // A drain's reply is a permit leaving none, read as one permit's.
        let n = weight.unwrap_or(1);
        let decision = match reply {
            Ok(reply) => self.protocol.finish_at(key, n, version, times, Ok(&reply)),
            Err(cause) => self.protocol.finish_at(key, n, version, times, Err(cause)),
        };
        (received, decision)
    }

    /// The result of a call that never waits.
    fn finish_at_once(
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
                limit: self.limit(),
                period: self.config().period(),
                max_wait: self.config().max_wait(),
                retry_after,
            })),
        }
    }

    /// What a waiting call does after an attempt started at `now` and decided at `at`:
    /// return, or sleep.
    fn step(
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
    fn conclude(&self, key: &str, at: Instant, decision: &Decision, may_sleep: bool) -> Step {
        match self.protocol.conclude(decision, at, may_sleep) {
            Conclusion::Sleep(pause) => Step::Sleep(pause),
            Conclusion::Done { result, event } => {
                if let Some(event) = event {
                    self.emit(key, &event);
                }
                Step::Done(result)
            }
        }
    }

    /// Tells the listeners not told yet of the eviction risk, once the server's policy is
    /// known: each listener hears of it once.
    #[inline]
    fn announce(&self) {
        let told = self.told.load(Ordering::Acquire);
        if told == self.listeners.len() {
            return;
        }
        let Some(risk) = self.registrar.eviction() else {
            return;
        };
        // One caller tells these listeners; a racing one finds them told.
        if self
            .told
            .compare_exchange(
                told,
                self.listeners.len(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            return;
        }
        if let Some(risk) = risk {
            let event = SharedEvent::EvictionRisk {
                at: self.clock.now(),
                name: self.config().name(),
                risk: risk.clone(),
            };
            for listener in &self.listeners[told..] {
                let _ = catch_unwind(AssertUnwindSafe(|| listener("", &event)));
            }
        }
    }

    fn emit(&self, key: &str, event: &SharedEvent) {
        for listener in &self.listeners {
            // A listener's panic is its own failure, not the caller's or the limiter's.
            let _ = catch_unwind(AssertUnwindSafe(|| listener(key, event)));
        }
    }

    fn interrupted(&self) -> SharedError {
        SharedError::Limited(RateLimiterError::Interrupted {
            name: self.config().name(),
        })
    }
}

/// What a waiting call does next.
enum Step {
    /// Return this.
    Done(Result<SharedPermit, SharedError>),
    /// Sleep this long, then attempt again.
    Sleep(Duration),
}

impl<C> fmt::Debug for SharedRateLimiter<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedRateLimiter")
            .field("config", self.protocol.config())
            .field("limit", &self.protocol.limit())
            .field("limit_version", &self.protocol.limit_version())
            .field("limit_refreshed", &self.refreshed.load(Ordering::Relaxed))
            .field("registration", &self.registrar.registration())
            .field("background", &self.background.is_some())
            .field("remembered", &self.protocol.remembered())
            .field("connection", &self.connection)
            .field("eviction_risk", &self.registrar.eviction())
            .field("listeners", &self.listeners.len())
            .field("listeners_told", &self.told.load(Ordering::Relaxed))
            .field("clock", &core::any::type_name::<C>())
            .finish()
    }
}
