//! The shared rate limiter: the sans-IO [`Protocol`] driven over a real connection, with the
//! blocking and async acquire loops and the listeners.

use core::fmt;
use core::future::IntoFuture;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use fixed_window::{Clock, Interrupt, RateLimiterError, SystemClock};

use crate::config::Config;
use crate::connection::Connection;
use crate::error::SharedError;
use crate::event::SharedEvent;
use crate::eviction::EvictionRisk;
use crate::local_share::LocalShare;
use crate::permit::SharedPermit;
use crate::protocol::Protocol;
use crate::registrar::{Background, Registrar};
use crate::registration::Registration;
use in_flight::LeasesInFlight;
use wait::Awaiting;

mod attempt;
mod client;
mod construction;
mod drain;
mod hand_back;
mod in_flight;
mod key_limit;
mod limit;
mod peek;
mod settings;
mod wait;
mod weighted;

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
/// of this limiter is in flight (on a cluster, one per hash slot: a primary in trouble holds
/// up its own keys alone), new attempts queue, and go together (up to
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
    /// of the configuration ([`LIMIT_REFRESH`](crate::LIMIT_REFRESH)).
    refreshed: AtomicU64,
    /// The in-process windows of [`FailPolicy::Local`](crate::FailPolicy::Local) (none
    /// under another policy), on this limiter's clock.
    local: LocalShare,
    /// Under a lease, the lease calls in flight, which other attempts on their keys wait for
    /// (none otherwise).
    in_flight: Option<LeasesInFlight>,
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
        // The local windows are on the clock's timeline: a new clock starts them afresh.
        let local = LocalShare::new(self.protocol.config());
        SharedRateLimiter {
            protocol: self.protocol,
            connection: self.connection,
            registrar: self.registrar,
            background: self.background,
            clock,
            listeners: self.listeners,
            told: self.told,
            refreshed,
            local,
            in_flight: self.in_flight,
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
            .field("local", &self.local)
            .field("leases_in_flight", &self.in_flight)
            .finish()
    }
}
