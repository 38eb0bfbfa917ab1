//! Building a limiter: the required settings checked once, up front; the optional ones by
//! name; the clock read once, when the limiter is built.

use core::fmt;
use core::time::Duration;

use crate::backoff::Backoff;
use crate::budget::Budget;
use crate::clock::{Clock, SystemClock};
use crate::error::ConfigError;
use crate::event::{Listener, RateLimiterEvent};
use crate::limiter::RateLimiter;
use crate::policy::Policy;
use crate::settings::{Settings, checked_limit, checked_period};

/// The settings of a [`RateLimiter`] not yet built, from
/// [`RateLimiter::builder`]: name, limit and period already checked, the rest optional.
///
/// Nothing is read or started until [`build`](Builder::build): the clock is read once there,
/// and the first window starts at that reading. A builder can therefore pick a
/// [`ManualClock`](crate::ManualClock) without the default clock ever being touched.
///
/// # Examples
///
/// A limiter of 100 calls per second whose excess calls may wait up to 250 ms, on a manual
/// clock.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Instant, ManualClock, RateLimiter};
///
/// let clock = ManualClock::starting_at(Instant::from_nanos(40));
/// let limiter = RateLimiter::builder("search", 100, Duration::from_secs(1))?
///     .max_wait(Duration::from_millis(250))
///     .clock(clock)
///     .build();
/// assert_eq!(limiter.max_wait(), Duration::from_millis(250));
/// assert_eq!(limiter.acquire()?.at(), Instant::from_nanos(40));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "a builder does nothing until `build` makes the limiter"]
pub struct Builder<C = SystemClock> {
    pub(crate) settings: Settings,
    pub(crate) listeners: Vec<Listener>,
    pub(crate) clock: C,
    pub(crate) backoff: Backoff,
}

impl Builder<SystemClock> {
    /// The settings of a limiter named `name` allowing `limit` calls per `period`, on the
    /// system clock, rejecting excess calls at once.
    pub(crate) fn new(
        name: &'static str,
        limit: u32,
        period: Duration,
    ) -> Result<Builder<SystemClock>, ConfigError> {
        Ok(Builder {
            settings: Settings::new(name, checked_limit(limit)?, checked_period(period)?),
            listeners: Vec::new(),
            clock: SystemClock,
            backoff: Backoff::default(),
        })
    }
}

impl<C> Builder<C> {
    /// `limit` calls per period instead.
    pub(crate) fn limit(mut self, limit: u32) -> Result<Self, ConfigError> {
        self.settings.limit = checked_limit(limit)?;
        Ok(self)
    }

    /// Windows `period` long instead.
    pub(crate) fn period(mut self, period: Duration) -> Result<Self, ConfigError> {
        self.settings.period = checked_period(period)?;
        Ok(self)
    }

    /// Lets an excess call wait up to `max_wait` for a later window before it is rejected.
    /// Zero (the default) rejects at once; `Duration::MAX` waits as long as the clock's
    /// timeline lasts.
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
    pub fn max_wait(mut self, max_wait: Duration) -> Self {
        self.settings = self.settings.with_max_wait(max_wait);
        self
    }

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
        self.listeners.push(Box::new(listener));
        self
    }

    /// Reads time from, and sleeps through, `clock` instead of the [`SystemClock`].
    ///
    /// # Examples
    ///
    /// The first window starts at the clock's reading when the limiter is built.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Clock, Instant, ManualClock, RateLimiter};
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
    pub fn clock<D: Clock>(self, clock: D) -> Builder<D> {
        Builder {
            settings: self.settings,
            listeners: self.listeners,
            clock,
            backoff: self.backoff,
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
        Builder { backoff, ..self }
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
        let settings = self.settings;
        let budget = Budget::new(
            self.clock.now(),
            settings.period,
            settings.limit,
            self.backoff,
        );
        RateLimiter {
            state: budget.state(),
            policy: Policy {
                settings,
                listeners: self.listeners,
                budget,
            },
            clock: self.clock,
        }
    }
}

impl<C> fmt::Debug for Builder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("name", &self.settings.name)
            .field("limit", &self.settings.limit)
            .field("period", &self.settings.period)
            .field("max_wait", &self.settings.max_wait())
            .field("listeners", &self.listeners.len())
            .field("clock", &core::any::type_name::<C>())
            .field("backoff", &self.backoff)
            .finish()
    }
}
