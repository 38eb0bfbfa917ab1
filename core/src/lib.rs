//! A lock-free fixed-window rate limiter: at most `limit` calls per `period`, in windows aligned
//! to the limiter's creation, with one atomic state word claimed by compare-and-set. No lock and
//! no allocation on the permit or rejection path; no overflow, however far the clock runs.
//! [`RateLimiter`] limits one process; [`KeyedRateLimiter`] keeps one count per key. For one
//! limit shared by many processes, see `fixed-window-redis`.
//!
//! ```
//! use core::time::Duration;
//! use fixed_window::{ManualClock, RateLimiter};
//!
//! // The system clock by default; a manual clock shows the windows.
//! let clock = ManualClock::new();
//! let limiter = RateLimiter::builder("checkout", 2, Duration::from_secs(1))? // 2 calls per second
//!     .clock(clock.clone())
//!     .build(); // the first window starts now
//!
//! assert_eq!(limiter.call(|| "charged")?, "charged"); // runs only with a permit
//! assert_eq!(limiter.try_acquire().map(|permit| permit.remaining()), Ok(0));
//! let rejected = limiter.call(|| "charged").unwrap_err(); // the operation did not run
//! assert_eq!(rejected.retry_after(), Some(Duration::from_secs(1)));
//!
//! clock.advance(Duration::from_secs(1)); // exactly at the boundary: a new window
//! assert!(limiter.try_acquire().is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The crate's README (in the package, and on its registry page) walks through waiting for the
//! next window, keys, weights and draining, changing the limit, the tower and HTTP layers, and
//! what the limiter guarantees and does not.
//!
//! # Types
//!
//! The limiter
//! - [`RateLimiter`]: made with [`RateLimiter::builder`] (a [`Builder`]) or
//!   [`RateLimiter::of`]; [`call`](RateLimiter::call),
//!   [`try_acquire`](RateLimiter::try_acquire), [`acquire`](RateLimiter::acquire), their
//!   interruptible and async forms, each also for `n` permits at once
//!   ([`call_n`](RateLimiter::call_n), [`try_acquire_n`](RateLimiter::try_acquire_n),
//!   [`acquire_n`](RateLimiter::acquire_n), ...), and the sans-IO step
//!   [`attempt`](RateLimiter::attempt). The three limiters' operations side by side:
//!   `docs/api.md` in the source repository.
//! - [`Attempt`]: what one step decided. [`Permit`]: a granted permit. [`Rejection`]:
//!   `try_acquire`'s rejection, borrowing the limiter. [`WeightedRejection`]:
//!   `try_acquire_n`'s, the same `Rejection` for a window short of the weight or `TooMany` for
//!   a weight above the limit.
//! - [`Backoff`]: spin-then-yield after a lost compare-and-set.
//! - [`Peek`]: what [`peek`](RateLimiter::peek) answers (the permits left and the time to the
//!   window's end), taking nothing.
//!
//! Configuration
//! - [`Settings`]: name, limit, period and `max_wait`, checked once, where every limiter (and
//!   `fixed-window-redis`'s `Config`) takes them from.
//! - [`LimiterBuilder`]: the one builder of both limiters ([`Builder`] for the plain one with
//!   its [`PlainOptions`], [`KeyedBuilder`] for the keyed one with its [`KeyedOptions`]).
//!
//! Per key
//! - [`KeyedRateLimiter`]: one window count per key (client, user, token, tenant), every key
//!   on the limiter's one grid, claimed by the same loop; keys whose window has ended are
//!   reclaimed as the limiter is used, so memory is bounded by the keys in use.
//! - [`KeyedRateLimiterError`]: a [`RateLimiterError`] with the key it happened to.
//!
//! Time
//! - [`Instant`]: nanoseconds on a clock's timeline, with [`Instant::MAX`].
//! - [`Clock`]: reading and sleeping; [`SystemClock`] (the default, monotonic) and
//!   [`ManualClock`] (for tests; its Unix time is set by hand too, so that windows aligned
//!   to the Unix epoch replay exactly). [`Sleep`]: an asynchronous sleep.
//! - [`Interrupt`]: a handle that interrupts blocking waits; [`Interrupted`]: a clock's report
//!   that it was.
//!
//! Integrations (cargo features)
//! - `tokio`: [`TokioClock`], a clock on tokio's timer (paused test time included).
//! - `tower`: [`RateLimitLayer`] and [`RateLimitService`], a middleware that takes a permit
//!   before each request; [`ServiceError`], its error. [`KeyedRateLimitLayer`] and
//!   [`KeyedRateLimitService`] do the same per key read from the request;
//!   [`KeyedServiceError`], their error.
//! - `http`: [`http::HttpRateLimitLayer`], answering HTTP requests by the standard (`429` with
//!   `Retry-After`, the IETF `RateLimit-Policy` and `RateLimit` fields), per key or for all.
//! - `axum`: [`http::PeerIp`] also reads axum's `ConnectInfo<SocketAddr>`.
//!
//! Events and errors
//! - [`RateLimiterEvent`]: `Permitted` and `Rejected`, to listeners.
//! - [`RateLimiterError`]: `Rejected` (with the estimated wait), `Interrupted`, and `TooMany`
//!   (a weight above the limit, which no window grants).
//! - [`ConfigError`]: a configuration the rules forbid.
//!
//! # Rules
//!
//! In full, with the reasons: `docs/rules.md` in the source repository.
//!
//! - The window holding instant `t` is `[origin + k·period, origin + (k+1)·period)` for the
//!   whole `k`, negative too, that puts `t` in it; at exactly `origin + k·period` the new window
//!   is in effect. A window that began before the clock's timeline started counts from the
//!   timeline's start and ends on the grid.
//! - With `max_wait` zero (the default) an excess call is rejected at once. Otherwise its
//!   deadline is fixed when it starts: if the next window opens at or before the deadline the
//!   call sleeps until then and competes again; if it opens later, the call is rejected at
//!   once, without sleeping.
//! - A `Permitted` event is emitted before the operation runs, with `remaining = limit − used`;
//!   a `Rejected` event carries the time until the next window. Listeners that panic are
//!   contained.
//!
//! # Extreme values
//!
//! Overflow never escapes as a panic:
//! - durations are clamped to `u64::MAX` nanoseconds before conversion, and deadlines saturate
//!   at [`Instant::MAX`] (an unreachable deadline is simply never met);
//! - when the next window would start past [`Instant::MAX`], a call that finds the window full
//!   is rejected at once, with `retry_after` of `Duration::MAX`;
//! - advancing the window is exact `u64` arithmetic on nanoseconds since the origin, which
//!   cannot overflow, so however long the limiter sat idle it lands on the right window.
//!
//! A clock may stand still or step backwards. A reading before the current window's start
//! counts against the current window, so a backwards step never reopens permits; the window
//! still ends at its usual instant, so the limiter resumes once the clock passes it. A waiting
//! call whose clock did not move at all across a sleep is rejected rather than left sleeping
//! forever.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod attempt;
pub use crate::attempt::Attempt;
mod backoff;
pub use crate::backoff::Backoff;
mod budget;
mod builder;
pub use crate::builder::{Builder, LimiterBuilder, PlainOptions};
mod clock;
pub use crate::clock::{Clock, ManualClock, Sleep, SystemClock};
mod error;
pub use crate::error::{ConfigError, RateLimiterError};
mod event;
pub use crate::event::RateLimiterEvent;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
mod instant;
pub use crate::instant::Instant;
mod interrupt;
pub use crate::interrupt::{Interrupt, Interrupted};
mod keyed;
pub use crate::keyed::{
    KeyHasher, KeyedBuilder, KeyedOptions, KeyedRateLimiter, KeyedRateLimiterError,
};
#[cfg(feature = "tower")]
pub use crate::keyed::{KeyedRateLimitLayer, KeyedRateLimitService, KeyedServiceError};
mod limiter;
pub use crate::limiter::RateLimiter;
mod origin;
pub use crate::origin::Origin;
mod peek;
pub use crate::peek::Peek;
mod permit;
pub use crate::permit::Permit;
mod policy;
mod rejection;
pub use crate::rejection::Rejection;
#[cfg(feature = "tower")]
mod service;
#[cfg(feature = "tower")]
pub use crate::service::{RateLimitLayer, RateLimitService, ServiceError};
mod settings;
pub use crate::settings::Settings;
mod state;
mod sync;
#[cfg(feature = "tokio")]
mod tokio_clock;
#[cfg(feature = "tokio")]
pub use crate::tokio_clock::TokioClock;
mod waiting;
mod weight;
mod weighted_rejection;
pub use crate::weighted_rejection::WeightedRejection;
mod window;

/// The README's examples, run as doc-tests with the features they use
/// (`cargo test -p fixed-window --all-features --doc`), so that the README itself needs no
/// hidden test lines.
#[cfg(all(doctest, feature = "tower", feature = "http"))]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
