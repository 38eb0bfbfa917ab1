//! Building a limiter: the required settings checked once, up front; the optional ones by
//! name; the clock read once, when the limiter is built. One builder serves both limiters, so
//! each setting they share is written, and described, once.

use core::fmt;
use core::time::Duration;

use crate::backoff::Backoff;
use crate::budget::Budget;
use crate::clock::{Clock, SystemClock};
use crate::error::ConfigError;
use crate::event::{Listener, RateLimiterEvent};
use crate::limiter::RateLimiter;
use crate::origin::Origin;
use crate::policy::Policy;
use crate::settings::Settings;

/// The configuration of a limiter not yet built: its [`Settings`] already checked, the rest
/// optional.
///
/// One builder serves [`RateLimiter`] and [`KeyedRateLimiter`](crate::KeyedRateLimiter), so
/// the settings they share ([`limit`](LimiterBuilder::limit),
/// [`period`](LimiterBuilder::period), [`max_wait`](LimiterBuilder::max_wait),
/// [`clock`](LimiterBuilder::clock), [`backoff`](LimiterBuilder::backoff)) are set, checked
/// and described here once. `F` holds what only one kind of limiter has: [`PlainOptions`]
/// (its listeners) for a [`Builder`], from [`RateLimiter::builder`];
/// [`KeyedOptions`](crate::KeyedOptions) (listeners that also take the key, and the key
/// hasher) for a [`KeyedBuilder`](crate::KeyedBuilder), from
/// [`KeyedRateLimiter::builder`](crate::KeyedRateLimiter::builder). Listeners stay apart
/// because their signatures differ, and a closure's argument types are inferred only from
/// the exact `Fn` bound of the method it is passed to.
///
/// Nothing is read or started until `build`: the clock is read once there, and the first
/// window starts at that reading. A builder can therefore pick a
/// [`ManualClock`](crate::ManualClock) without the default clock ever being touched. Every
/// `with_*` of a limiter is this builder's setter of the same name, applied to the limiter's
/// configuration and built again.
///
/// # Examples
///
/// A limiter of 100 calls per second whose excess calls may wait up to 250 ms, and a keyed
/// one allowing each client the same, both on a manual clock.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Instant, KeyedRateLimiter, ManualClock, RateLimiter};
///
/// let clock = ManualClock::starting_at(Instant::from_nanos(40));
/// let limiter = RateLimiter::builder("search", 100, Duration::from_secs(1))?
///     .max_wait(Duration::from_millis(250))
///     .clock(clock.clone())
///     .build();
/// assert_eq!(limiter.max_wait(), Duration::from_millis(250));
/// assert_eq!(limiter.acquire()?.at(), Instant::from_nanos(40));
///
/// let per_client = KeyedRateLimiter::builder("search-per-client", 100, Duration::from_secs(1))?
///     .max_wait(Duration::from_millis(250))
///     .clock(clock)
///     .build();
/// assert_eq!(per_client.acquire(&"alice")?.at(), Instant::from_nanos(40));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "a builder does nothing until `build` makes the limiter"]
pub struct LimiterBuilder<F, C = SystemClock> {
    pub(crate) settings: Settings,
    pub(crate) options: F,
    pub(crate) clock: C,
    pub(crate) backoff: Backoff,
    pub(crate) origin: Origin,
}

/// The builder of a [`RateLimiter`] on clock `C`, from [`RateLimiter::builder`]; its setters
/// are [`LimiterBuilder`]'s, with [`listener`](Builder#method.listener) its own.
///
/// # Examples
///
/// A builder named by its type, handed to code that finishes it.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Builder, ManualClock, RateLimiter};
///
/// fn finish(builder: Builder<ManualClock>) -> RateLimiter<ManualClock> {
///     builder.max_wait(Duration::from_millis(5)).build()
/// }
/// let limiter = finish(RateLimiter::builder("api", 1, Duration::from_secs(1))?.clock(ManualClock::new()));
/// assert_eq!(limiter.max_wait(), Duration::from_millis(5));
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub type Builder<C = SystemClock> = LimiterBuilder<PlainOptions, C>;

impl<F> LimiterBuilder<F> {
    /// A builder of `settings` and `options`, on the system clock with the default backoff.
    pub(crate) fn with_options(settings: Settings, options: F) -> LimiterBuilder<F> {
        LimiterBuilder {
            settings,
            options,
            clock: SystemClock,
            backoff: Backoff::default(),
            origin: Origin::Creation,
        }
    }
}

impl<F, C> LimiterBuilder<F, C> {
    /// `limit` calls per period (for each key, in a keyed limiter) instead of the one given
    /// to `builder`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0 (the rule is [`Settings::with_limit`]'s).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, RateLimiter};
    ///
    /// let builder = RateLimiter::builder("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(builder.limit(50)?.build().limit(), 50);
    /// let builder = RateLimiter::builder("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(builder.limit(0).unwrap_err(), ConfigError::ZeroLimit);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn limit(self, limit: u32) -> Result<Self, ConfigError> {
        Ok(LimiterBuilder {
            settings: self.settings.with_limit(limit)?,
            ..self
        })
    }

    /// Windows `period` long instead of the one given to `builder`; the windows stay aligned
    /// to the limiter's creation. Any positive period is allowed, one past the end of the
    /// timeline included (see [`Settings`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroPeriod`] if `period` is zero (the rule is
    /// [`Settings::with_period`]'s).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, RateLimiter};
    ///
    /// let builder = RateLimiter::builder("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(builder.period(Duration::from_millis(250))?.build().period(), Duration::from_millis(250));
    /// let builder = RateLimiter::builder("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(builder.period(Duration::ZERO).unwrap_err(), ConfigError::ZeroPeriod);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn period(self, period: Duration) -> Result<Self, ConfigError> {
        Ok(LimiterBuilder {
            settings: self.settings.with_period(period)?,
            ..self
        })
    }

    /// Lets an excess call wait up to `max_wait` for a later window (its key's, in a keyed
    /// limiter) before it is rejected. Zero (the default) rejects at once; `Duration::MAX`
    /// waits as long as the clock's timeline lasts.
    ///
    /// A call's deadline is fixed when it starts. If the next window opens at or before it,
    /// the call sleeps through the clock until then and competes again; if it opens later,
    /// the call is rejected at once, without sleeping.
    ///
    /// # Examples
    ///
    /// A waiting call sleeps (on the manual clock, instantly) until the next window.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .max_wait(Duration::from_secs(5))
    ///     .clock(ManualClock::new())
    ///     .build();
    /// limiter.acquire()?;
    /// assert_eq!(limiter.acquire()?.at(), Instant::from_nanos(1_000_000_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_wait(self, max_wait: Duration) -> Self {
        LimiterBuilder {
            settings: self.settings.with_max_wait(max_wait),
            ..self
        }
    }

    /// Reads time from, and sleeps through, `clock` instead of the [`SystemClock`].
    ///
    /// # Examples
    ///
    /// The first window starts at the clock's reading when the limiter is built.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let clock = ManualClock::new();
    /// let builder = RateLimiter::builder("api", 1, Duration::from_secs(1))?.clock(clock.clone());
    /// clock.advance(Duration::from_millis(300));
    /// let limiter = builder.build();
    /// assert!(limiter.try_acquire().is_ok());
    /// let rejected = limiter.try_acquire().unwrap_err();
    /// assert_eq!(rejected.retry_after(), Duration::from_secs(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clock<D: Clock>(self, clock: D) -> LimiterBuilder<F, D> {
        LimiterBuilder {
            settings: self.settings,
            options: self.options,
            clock,
            backoff: self.backoff,
            origin: self.origin,
        }
    }

    /// Retries after a lost compare-and-set under `backoff` instead of
    /// [`Backoff::default`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Backoff, RateLimiter};
    ///
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_secs(1))?
    ///     .backoff(Backoff::new(0))
    ///     .build();
    /// assert_eq!(limiter.backoff(), Backoff::new(0));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn backoff(self, backoff: Backoff) -> Self {
        LimiterBuilder { backoff, ..self }
    }

    /// Aligns the windows to `origin` instead of the limiter's creation: a given instant of
    /// its clock, or whole periods of Unix time ([`Origin::UnixEpoch`]), so that processes
    /// agree on the boundaries without sharing anything. A limiter remade by a `with_*` keeps
    /// its choice (for [`Origin::Creation`], a new grid starting then). The grid has
    /// boundaries a whole number of periods before the chosen instant as well as after it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock, Origin, RateLimiter};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(25));
    /// let limiter = RateLimiter::builder("api", 1, Duration::from_nanos(10))?
    ///     .clock(clock.clone())
    ///     .origin(Origin::At(Instant::from_nanos(20)))
    ///     .build();
    /// limiter.try_acquire().map_err(|_| "the first window is open")?;
    /// // The window is [20, 30): 5 ns left, not the 10 a window from the creation would have.
    /// assert_eq!(limiter.try_acquire().unwrap_err().retry_after(), Duration::from_nanos(5));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn origin(self, origin: Origin) -> Self {
        LimiterBuilder { origin, ..self }
    }

    /// The settings so far.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::RateLimiter;
    ///
    /// let builder = RateLimiter::builder("api", 3, Duration::from_secs(1))?;
    /// assert_eq!((builder.settings().name(), builder.settings().limit()), ("api", 3));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
}

/// What only a [`RateLimiter`]'s builder holds: its listeners, which take the event alone.
///
/// It appears only as the first parameter of a [`LimiterBuilder`]: a [`Builder`] is a
/// `LimiterBuilder<PlainOptions>`.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{LimiterBuilder, PlainOptions, RateLimiter};
///
/// let builder: LimiterBuilder<PlainOptions> = RateLimiter::builder("api", 1, Duration::from_secs(1))?;
/// assert_eq!(builder.build().name(), "api");
/// # Ok::<(), fixed_window::ConfigError>(())
/// ```
pub struct PlainOptions {
    pub(crate) listeners: Vec<Listener>,
}

impl From<Settings> for Builder {
    /// The builder of a [`RateLimiter`] with `settings`, on the system clock: the same as
    /// [`RateLimiter::builder`] with the settings' name, limit and period, then their
    /// `max_wait`.
    fn from(settings: Settings) -> Builder {
        LimiterBuilder::with_options(
            settings,
            PlainOptions {
                listeners: Vec::new(),
            },
        )
    }
}

impl<C> Builder<C> {
    /// Adds `listener` to receive every [`RateLimiterEvent`]; listeners run in the order they
    /// were added, on the calling thread.
    ///
    /// A listener that panics is contained: the call and the limiter carry on, and the other
    /// listeners still run. Keep listeners short, since they run on the caller's path.
    ///
    /// # Examples
    ///
    /// A listener that records the remaining permits of each grant.
    ///
    /// ```
    /// use core::time::Duration;
    /// use std::sync::{Arc, Mutex};
    /// use fixed_window::{ManualClock, RateLimiter, RateLimiterEvent};
    ///
    /// let remaining = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&remaining);
    /// let limiter = RateLimiter::builder("api", 3, Duration::from_secs(1))?
    ///     .clock(ManualClock::new())
    ///     .listener(move |event| {
    ///         if let RateLimiterEvent::Permitted { remaining, .. } = event {
    ///             log.lock().unwrap().push(*remaining);
    ///         }
    ///     })
    ///     .build();
    /// assert!(limiter.try_acquire().is_ok());
    /// assert!(limiter.try_acquire().is_ok());
    /// assert_eq!(*remaining.lock().unwrap(), [2, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn listener(
        mut self,
        listener: impl Fn(&RateLimiterEvent) + Send + Sync + 'static,
    ) -> Self {
        self.options.listeners.push(Box::new(listener));
        self
    }
}

impl<C: Clock> Builder<C> {
    /// The limiter, its first window starting at the clock's reading now: the only moment
    /// the builder reads the clock.
    ///
    /// # Examples
    ///
    /// Two permits per second from the moment of building.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ManualClock, RateLimiter};
    ///
    /// let limiter = RateLimiter::builder("api", 2, Duration::from_secs(1))?
    ///     .clock(ManualClock::new())
    ///     .build();
    /// assert_eq!(limiter.try_acquire().map(|permit| permit.remaining()), Ok(1));
    /// assert_eq!(limiter.try_acquire().map(|permit| permit.remaining()), Ok(0));
    /// assert!(limiter.try_acquire().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(self) -> RateLimiter<C> {
        let policy = policy(
            self.settings,
            self.options.listeners,
            self.backoff,
            (self.origin, &self.clock),
        );
        RateLimiter {
            state: policy.budget.state(),
            policy,
            clock: self.clock,
        }
    }
}

/// The policy of a limiter with `settings`, `listeners` and `backoff`, its grid starting at
/// `origin` for a limiter built now on `clock`: what either limiter's `build` makes before its
/// state.
pub(crate) fn policy<L>(
    settings: Settings,
    listeners: Vec<L>,
    backoff: Backoff,
    (origin, clock): (Origin, &impl Clock),
) -> Policy<L> {
    Policy {
        settings,
        listeners,
        budget: Budget::new(origin.grid(clock, settings.period), settings.limit, backoff),
        origin,
    }
}

impl<F: fmt::Debug, C> fmt::Debug for LimiterBuilder<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LimiterBuilder")
            .field("settings", &self.settings)
            .field("options", &self.options)
            .field("clock", &core::any::type_name::<C>())
            .field("backoff", &self.backoff)
            .field("origin", &self.origin)
            .finish()
    }
}

impl fmt::Debug for PlainOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlainOptions")
            .field("listeners", &self.listeners.len())
            .finish()
    }
}
