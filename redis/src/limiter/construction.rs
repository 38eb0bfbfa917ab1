//! Building a shared limiter: connecting and registering first, or starting at once and
//! registering in the background, on the caller's tokio runtime or on one of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize};

use fixed_window::{Clock, SystemClock};

use crate::config::Config;
use crate::connection::Connection;
use crate::error::SharedError;
use crate::invocation::Terms;
use crate::limiter::SharedRateLimiter;
use crate::limiter::in_flight::LeasesInFlight;
use crate::local_share::LocalShare;
use crate::protocol::Protocol;
use crate::registrar::Registrar;
use crate::server::Server;

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
    /// background, trying again after each failure ([`Registration::retry_in`](crate::Registration::retry_in): 100 ms,
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
        let local = LocalShare::new(protocol.config());
        let in_flight = protocol.config().lease().map(|_| LeasesInFlight::default());
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
            in_flight,
            local,
        }
    }
}
