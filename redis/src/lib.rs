//! One fixed-window limit shared by many processes: the windows and counts live in Redis (or
//! Valkey), and every process that uses the same limiter name shares them. Each key (a client,
//! an address, a tenant) has its own count. The API is that of `fixed-window`'s in-process
//! limiter, with a key; each attempt is one round trip, one Lua script on the server's clock.
//!
//! A service starts its limiter with [`start`](SharedRateLimiter::start) (or
//! [`start_blocking`](SharedRateLimiter::start_blocking)), which returns at once and registers
//! in the background: until Redis answers, the [`FailPolicy`] decides each call.
//! [`connect`](SharedRateLimiter::connect) instead waits for the server and fails at once if it
//! cannot be reached.
//!
//! ```
//! use core::time::Duration;
//! use fixed_window_redis::{redis, Config, SharedError, SharedRateLimiter};
//!
//! # let server = fixed_window_redis_test::RedisServer::start()?;
//! let client = redis::Client::open("redis://127.0.0.1:6379/")?;
//! # let client = server.client()?;
//! let config = Config::of("checkout", 2, Duration::from_secs(3600))?; // 2 per hour, per key
//!
//! // Two replicas of a service, each with its own connection, share one limit per key.
//! let a = SharedRateLimiter::start_blocking(config.clone(), client.clone())?;
//! let b = SharedRateLimiter::start_blocking(config, client)?;
//! assert_eq!(a.call("alice", || "charged")?, "charged");
//! assert_eq!(b.try_acquire("alice")?.remaining(), Some(0));
//! let rejected = a.try_acquire("alice").unwrap_err();
//! assert!(matches!(rejected, SharedError::Limited(_)));
//! assert!(b.try_acquire("bob").is_ok()); // another key, another count
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The crate's README (in the package, and on its registry page) walks through the fail
//! policy, weights and draining, changing the limit, the origin, Redis Cluster, replicas, TLS
//! and ACL users, the HTTP layer, memory limits, and what the limiter guarantees and what a
//! server can lose.
//!
//! # Types
//!
//! The limiter
//! - [`SharedRateLimiter`]: connects ([`connect`](SharedRateLimiter::connect),
//!   [`connect_blocking`](SharedRateLimiter::connect_blocking)) or starts without waiting for
//!   the server ([`start`](SharedRateLimiter::start),
//!   [`start_blocking`](SharedRateLimiter::start_blocking)), and takes permits per key:
//!   [`try_acquire`](SharedRateLimiter::try_acquire), [`acquire`](SharedRateLimiter::acquire),
//!   [`call`](SharedRateLimiter::call), their interruptible and async forms, each also for `n`
//!   permits at once ([`call_n`](SharedRateLimiter::call_n),
//!   [`try_acquire_n`](SharedRateLimiter::try_acquire_n), ...); changes the limit
//!   shared by every process ([`set_limit`](SharedRateLimiter::set_limit)), or one key's
//!   ([`set_key_limit`](SharedRateLimiter::set_key_limit),
//!   [`clear_key_limit`](SharedRateLimiter::clear_key_limit)); asks what a key's
//!   window has left without counting ([`peek`](SharedRateLimiter::peek), answering core's
//!   [`Peek`]).
//! - [`Config`]: name, limit and period (shared by every process), limits of their own for
//!   some keys ([`Config::key_limit`], [`Config::key_limits`], shared too), `max_wait`,
//!   [`FailPolicy`], timeout, local memory; [`ConfigError`].
//! - [`Lease`]: leased shares of a window, spent in-process ([`Config::with_lease`]), with
//!   their local deadline ([`lease_deadline`]) and the bound on what they may refuse while a
//!   window has room ([`Lease::under_admission_bound`]).
//! - [`SharedPermit`]: a permit, counted or granted by the fail-open policy.
//! - [`Registration`]: where a limiter stands with the server (pending, registered, refused),
//!   and when a started one tries again ([`REGISTRATION_RETRY_MIN`], [`REGISTRATION_RETRY_MAX`]).
//!
//! The sans-IO core (what a simulator drives)
//! - [`SCRIPT`]: the Lua script every attempt runs (alone or in a batch); [`ScriptReply`]:
//!   its replies.
//! - [`Protocol`]: [`begin`](Protocol::begin) an attempt (a local [`Decision`] or a
//!   [`ScriptCall`]), [`finish`](Protocol::finish) it with the reply or the [`Unavailable`]
//!   cause, and [`conclude`](Protocol::conclude) the call ([`Conclusion`]): its result and
//!   event, or a sleep.
//!   A peek: [`begin_peek`](Protocol::begin_peek) ([`PeekBegin`]) and
//!   [`finish_peek`](Protocol::finish_peek).
//!   Before registering, [`register_call`](Protocol::register_call) and
//!   [`registered`](Protocol::registered), or, reading the keys' live limits with it,
//!   [`limits_call`](Protocol::limits_call) and [`limits_read`](Protocol::limits_read) (again
//!   when [`limits_due`](Protocol::limits_due); then
//!   [`restore_call`](Protocol::restore_call) if the server lost those it holds); an attempt
//!   made while not registered,
//!   [`unregistered`](Protocol::unregistered). A live change of one key's limit:
//!   [`set_key_limit_call`](Protocol::set_key_limit_call) and
//!   [`key_limit_set`](Protocol::key_limit_set).
//! - [`renewal_wait`]: how long the connection layer waits, after the server refused this
//!   client, before it makes a connection anew ([`RENEWAL_MIN`] doubled, at most
//!   [`RENEWAL_MAX`]).
//!
//! Events and errors
//! - [`SharedEvent`]: core's [`RateLimiterEvent`]s,
//!   `Unavailable` (failed open or closed), and `EvictionRisk` ([`EvictionRisk`]: the server's
//!   memory policy may evict the limiter's keys).
//! - [`SharedError`]: core's [`RateLimiterError`] (rejected,
//!   interrupted, too many at once), `Unavailable`, [`Conflict`], `InvalidKey` ([`KeyError`]).
//!
//! From `fixed-window` (re-exported, so that one dependency names everything the API takes
//! and returns)
//! - [`Origin`] for [`Config::with_origin`]; [`Settings`] for [`Config::from_settings`].
//! - [`Clock`], [`SystemClock`], [`ManualClock`], [`Sleep`], [`Interrupted`] for
//!   [`with_clock`](SharedRateLimiter::with_clock); [`Instant`], the clock's readings;
//!   [`Interrupt`] for the interruptible calls.
//! - [`RateLimiterError`] inside [`SharedError::Limited`], [`RateLimiterEvent`] inside
//!   [`SharedEvent`]; the whole crate as [`fixed_window`](mod@fixed_window) (its
//!   `ConfigError`, inside [`ConfigError::Settings`], among the rest).
//!
//! Integrations
//! - [`SharedRateLimitLayer`], [`SharedRateLimitService`], [`SharedServiceError`]: a tower
//!   middleware keyed by a key extractor.
//! - `http` (feature): [`http::HttpRateLimitLayer`] over a shared limiter answers HTTP by the
//!   standard: `429` with `Retry-After` and the IETF `RateLimit-Policy` and `RateLimit`
//!   fields, and `503` when the server cannot decide under fail-closed.
//!
//! # Rules
//!
//! In full, with the reasons: `docs/rules.md` in the source repository.
//!
//! The rules of the in-process limiter (`fixed_window`), per key, on the server's clock:
//! - **One origin, one period.** The first process to reach the server stores the
//!   configuration (`origin:period:limit`) under [`Config::config_key`], with the server's
//!   current time as the origin, only if absent; every later process adopts that origin. A
//!   process with a different limit or period gets [`SharedError::Conflict`], at connection
//!   and on every call. The window holding server time `t` is
//!   `[origin + k·period, origin + (k+1)·period)`; at exactly `origin + k·period` the new
//!   window is in effect; windows advance by whole periods and nothing carries over.
//! - **One clock.** Each attempt reads the server's `TIME` inside the script, never the
//!   client's clock, so clients' skew cannot open extra windows. As in core, a reading before
//!   the key's current window (the server's clock stepped back) counts against that window,
//!   for as long as its counter exists (its window's end plus [`EXPIRY_MARGIN_MILLIS`]).
//! - **One round trip, atomic.** The script reads the time, checks the configuration, counts
//!   and sets the counter's expiry in one step; it is called by its SHA-1 and reloaded if the
//!   server lost it (`NOSCRIPT`, after which the call did not run and is simply repeated).
//!   Counters expire at their window's end plus [`EXPIRY_MARGIN_MILLIS`]; the configuration key
//!   does not expire (one per limiter name; delete it to retire a configuration).
//! - **Coalesced.** Attempts of one limiter that wait for the server at the same moment go as
//!   one script call (up to [`MAX_BATCH`]): while a call is in flight new attempts queue, and
//!   the next call decides them all at one instant of the server's clock, each as it would be
//!   alone. A lost reply leaves every attempt of its call `Unavailable` (may have counted). On
//!   one node all of a call's keys share the `{name}` hash tag; on Redis Cluster a call carries
//!   the attempts of one hash slot, one call in flight per slot, so a primary in trouble holds
//!   up its own keys alone.
//! - **Waiting.** With `max_wait`, the deadline is fixed when the call starts (local clock).
//!   A full window that may open by the deadline is slept through (until the latest local
//!   instant it can open at, or the deadline), and the call competes again; one that cannot is
//!   rejected at once.
//!
//! # Local rejection of full windows
//!
//! A window's count never goes down before it ends. Once a reply says a key's window is full
//! (a rejection, or a permit that left none) with `retry_after` to go, this process rejects
//! the key itself, with no round trip, until `sent + retry_after − retry_after / 1000` on its
//! clock, where `sent` is its reading before the request went out. The server decided after
//! `sent`, so on a local clock running at the server's rate the window cannot end before
//! `sent + retry_after`: a local rejection is never late while the two clocks' rates differ
//! by less than 0.1% ([`DRIFT_ALLOWANCE`]) and the server's clock does not step forward. It may
//! end early, by up to one round trip plus 0.1% of `retry_after`; those attempts simply go to
//! the server. The memory holds at most [`Config::local_memory`] windows; expired ones are
//! dropped when room is needed.
//!
//! # Failures
//!
//! A connection error, a timeout or a server error is neither a permit nor a rejection: the
//! [`FailPolicy`] decides. Fail closed (the default): [`SharedError::Unavailable`] with the
//! cause. Fail open: a permit that nobody counted, marked
//! ([`SharedPermit::failed_open`]) and announced ([`SharedEvent::Unavailable`]). Fail open with
//! a bound ([`FailPolicy::Local`]): such a permit within this process's own fixed window of
//! `share` permits per key ([`LocalShare`]), a local rejection past it. A timeout or
//! a connection lost after the request was sent may hide a script that ran: that attempt may
//! have counted ([`Unavailable::may_have_counted`]). The limiter never retries an attempt
//! whose outcome it does not know.
//!
//! A limiter [`start`](SharedRateLimiter::start)ed while the server is unreachable sends no
//! attempt until it has registered: each call first tries to register, and if that fails the
//! fail policy answers, with an [`UnavailableKind::NotRegistered`] cause (nothing was sent).

#![cfg_attr(docsrs, feature(doc_cfg))]

mod coalescer;
mod config;
pub use crate::config::{
    Config, ConfigError, DEFAULT_LOCAL_MEMORY, DEFAULT_TIMEOUT, EXPIRY_MARGIN_MILLIS, FailPolicy,
    MAX_NAME_LEN, MAX_PERIOD,
};
mod connection;
mod error;
pub use crate::error::{Conflict, SharedError};
#[cfg(feature = "http")]
mod http_limiter;
/// Core's HTTP layer and key extractors (feature `http`), which the shared limiter plugs into.
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use fixed_window::http;
mod event;
pub use crate::event::SharedEvent;
mod eviction;
pub use crate::eviction::EvictionRisk;
mod invocation;
mod key;
pub use crate::key::{KeyError, MAX_KEY_LEN, check_key};
mod lease;
mod lease_hand_back;
pub use crate::lease::{
    DEFAULT_LEASE_DIVISOR, DEFAULT_LEASED_KEYS, Lease, coarse_lease_deadline, lease_deadline,
};
mod limiter;
pub use crate::limiter::SharedRateLimiter;
mod local_share;
pub use crate::local_share::LocalShare;
mod memory;
pub use crate::memory::DRIFT_ALLOWANCE;
mod origin;
pub use crate::origin::MAX_ORIGIN_MICROS;
mod permit;
pub use crate::permit::SharedPermit;
mod protocol;
pub use crate::protocol::PeekBegin;
pub use crate::protocol::{
    Begin, Conclusion, Decision, LIMIT_REFRESH, MAX_BATCH, Protocol, ScriptCall,
};
/// What [`SharedRateLimiter::peek`] answers: core's [`Peek`], the same
/// type the in-process limiters answer with.
pub use fixed_window::Peek;
mod registrar;
mod registration;
pub use crate::registration::{REGISTRATION_RETRY_MAX, REGISTRATION_RETRY_MIN, Registration};
mod script;
pub use crate::script::{SCRIPT, ScriptReply};
mod server;
pub use crate::server::Server;
mod service;
pub use crate::service::{SharedRateLimitLayer, SharedRateLimitService, SharedServiceError};
mod renewal;
mod renewal_wait;
pub use crate::renewal_wait::{RENEWAL_MAX, RENEWAL_MIN, renewal_wait};
mod transport;
mod unavailable;
pub use crate::unavailable::{Unavailable, UnavailableKind};

/// The redis-rs crate this limiter is built on, for making a [`redis::Client`].
pub use redis;

/// The in-process limiter's crate, whose types this crate's API takes and returns.
pub use fixed_window;
pub use fixed_window::{
    Clock, Instant, Interrupt, Interrupted, ManualClock, Origin, RateLimiterError,
    RateLimiterEvent, Settings, Sleep, SystemClock,
};
