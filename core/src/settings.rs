//! A limiter's configuration as the specification lists it: name, limit, period, max wait;
//! the one place its rules are checked.

use core::fmt;
use core::num::NonZeroU32;
use core::time::Duration;

use crate::error::{ConfigError, RateLimiterError};
use crate::instant::{Instant, saturating_nanos};
use crate::weight::{Excess, Units, Weight};

/// The configuration the specification names and every fixed-window limiter shares: a name,
/// `limit` permits per `period`, and how long an excess call may wait (`max_wait`), checked
/// against the rules once, when made.
///
/// It is the one place those rules live. [`RateLimiter`](crate::RateLimiter) and
/// [`KeyedRateLimiter`](crate::KeyedRateLimiter), their builders and their `with_*` all hold
/// and change a `Settings`, and the Redis-backed limiter (`fixed-window-redis`) builds its
/// configuration from one, adding only the rules of its server. So a configuration is
/// refused the same way, with the same [`ConfigError`], wherever it is given, and one
/// `Settings` can configure limiters of every kind.
///
/// The rules:
/// - `name` is a `&'static str`: the specification asks for a static, compile-time-known
///   name, since it keys metrics and logs whose cardinality must stay bounded.
/// - `limit` is at least 1 ([`ConfigError::ZeroLimit`] otherwise).
/// - `period` is positive ([`ConfigError::ZeroPeriod`] otherwise). One longer than
///   [`Instant::MAX`]'s distance from the epoch (about 584 years) behaves as that long: the
///   limiter then has a single window.
/// - `max_wait` is anything: zero (the default) rejects an excess call at once;
///   `Duration::MAX` waits as long as the clock's timeline lasts.
///
/// The limiters also keep their settings in this form: a rejection borrows them rather than
/// copying them, and a call's deadline is one saturating addition of `max_wait` kept in
/// nanoseconds.
///
/// # Examples
///
/// One value configures a limiter; a zero limit is refused with an error naming `limit`.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Builder, ConfigError, Settings};
///
/// let settings = Settings::new("search", 100, Duration::from_secs(1))?
///     .with_max_wait(Duration::from_millis(250));
/// let limiter = Builder::from(settings).build();
/// assert_eq!((limiter.name(), limiter.limit()), ("search", 100));
/// assert_eq!(limiter.max_wait(), Duration::from_millis(250));
///
/// let refused = Settings::new("search", 0, Duration::from_secs(1)).unwrap_err();
/// assert_eq!((refused, refused.field()), (ConfigError::ZeroLimit, "limit"));
/// # Ok::<(), ConfigError>(())
/// ```
// The fields the permit and rejection paths read (name, limit, period) stay crate-visible, so
// those paths read a field rather than call a getter; only this file writes them, through
// the checks below.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Settings {
    pub(crate) name: &'static str,
    pub(crate) limit: NonZeroU32,
    /// Never zero: checked by [`Settings::new`] and [`Settings::with_period`].
    pub(crate) period: Duration,
    /// Private, so that [`Settings::with_max_wait`] keeps `max_wait_nanos` in step.
    max_wait: Duration,
    /// `max_wait` in nanoseconds, saturated at `u64::MAX`, so a call's deadline is one
    /// saturating addition.
    max_wait_nanos: u64,
}

impl Settings {
    /// The settings of a limiter named `name` allowing `limit` calls per `period`, rejecting
    /// excess calls at once.
    ///
    /// `name` is `&'static str` because the specification requires a static,
    /// compile-time-known name: it keys metrics and logs, whose cardinality must stay
    /// bounded, so it is never built from a request.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0, [`ConfigError::ZeroPeriod`] if `period` is
    /// zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, Settings};
    ///
    /// let settings = Settings::new("api", 10, Duration::from_secs(1))?;
    /// assert_eq!((settings.name(), settings.limit(), settings.max_wait()), ("api", 10, Duration::ZERO));
    /// assert_eq!(Settings::new("api", 10, Duration::ZERO).unwrap_err(), ConfigError::ZeroPeriod);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn new(name: &'static str, limit: u32, period: Duration) -> Result<Settings, ConfigError> {
        Ok(Settings {
            name,
            limit: checked_limit(limit)?,
            period: checked_period(period)?,
            max_wait: Duration::ZERO,
            max_wait_nanos: 0,
        })
    }

    /// These settings with `limit` calls per period.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLimit`] if `limit` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, Settings};
    ///
    /// let settings = Settings::new("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(settings.with_limit(5)?.limit(), 5);
    /// assert_eq!(settings.with_limit(0).unwrap_err(), ConfigError::ZeroLimit);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_limit(self, limit: u32) -> Result<Settings, ConfigError> {
        Ok(Settings {
            limit: checked_limit(limit)?,
            ..self
        })
    }

    /// These settings with windows `period` long.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroPeriod`] if `period` is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{ConfigError, Settings};
    ///
    /// let settings = Settings::new("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(settings.with_period(Duration::from_millis(5))?.period(), Duration::from_millis(5));
    /// assert_eq!(settings.with_period(Duration::ZERO).unwrap_err(), ConfigError::ZeroPeriod);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_period(self, period: Duration) -> Result<Settings, ConfigError> {
        Ok(Settings {
            period: checked_period(period)?,
            ..self
        })
    }

    /// These settings with excess calls waiting up to `max_wait` for a later window (what a
    /// wait does: [`LimiterBuilder::max_wait`](crate::LimiterBuilder::max_wait)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Settings;
    ///
    /// let settings = Settings::new("api", 1, Duration::from_secs(1))?.with_max_wait(Duration::MAX);
    /// assert_eq!(settings.max_wait(), Duration::MAX);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_max_wait(self, max_wait: Duration) -> Settings {
        Settings {
            max_wait,
            max_wait_nanos: saturating_nanos(max_wait),
            ..self
        }
    }

    /// The limiter's name, used in events and errors.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// assert_eq!(fixed_window::Settings::new("api", 1, Duration::from_secs(1))?.name(), "api");
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Permits per window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// assert_eq!(fixed_window::Settings::new("api", 7, Duration::from_secs(1))?.limit(), 7);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn limit(&self) -> u32 {
        self.limit.get()
    }

    /// The window's length, as given.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let settings = fixed_window::Settings::new("api", 1, Duration::from_millis(10))?;
    /// assert_eq!(settings.period(), Duration::from_millis(10));
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn period(&self) -> Duration {
        self.period
    }

    /// How long an excess call may wait for a later window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let settings = fixed_window::Settings::new("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(settings.max_wait(), Duration::ZERO);
    /// # Ok::<(), fixed_window::ConfigError>(())
    /// ```
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }

    /// The deadline of a call that starts at `start`.
    #[inline]
    pub(crate) fn deadline(&self, start: Instant) -> Instant {
        Instant::from_nanos(start.as_nanos().saturating_add(self.max_wait_nanos))
    }

    /// The full error for a call rejected under `limit` `retry_after` before the next window.
    pub(crate) fn rejected(&self, limit: u32, retry_after: Duration) -> RateLimiterError {
        RateLimiterError::Rejected {
            name: self.name,
            limit,
            period: self.period,
            max_wait: self.max_wait,
            retry_after,
        }
    }

    /// The error for a call whose wait was interrupted.
    pub(crate) fn interrupted(&self) -> RateLimiterError {
        RateLimiterError::Interrupted { name: self.name }
    }

    /// `n` permits as a weight to claim, or the error if no window can hold them under
    /// `limit`, the limit in force.
    #[inline]
    pub(crate) fn units(&self, n: u32, limit: u32) -> Result<Units, RateLimiterError> {
        let units = Units(n);
        units
            .fits(limit)
            .map(|()| units)
            .map_err(|excess| self.too_many(excess))
    }

    /// The error for a call refused because no window holds its weight.
    pub(crate) fn too_many(&self, excess: impl Into<Excess>) -> RateLimiterError {
        let Excess { requested, limit } = excess.into();
        RateLimiterError::TooMany {
            name: self.name,
            limit,
            requested,
        }
    }
}

#[expect(
    clippy::missing_fields_in_debug,
    reason = "`max_wait_nanos` is `max_wait` again, in another unit"
)]
impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("name", &self.name)
            .field("limit", &self.limit)
            .field("period", &self.period)
            .field("max_wait", &self.max_wait)
            .finish()
    }
}

/// The rule of `limit`: at least 1.
fn checked_limit(limit: u32) -> Result<NonZeroU32, ConfigError> {
    NonZeroU32::new(limit).ok_or(ConfigError::ZeroLimit)
}

/// The rule of `period`: positive.
fn checked_period(period: Duration) -> Result<Duration, ConfigError> {
    if period.is_zero() {
        Err(ConfigError::ZeroPeriod)
    } else {
        Ok(period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn a_zero_limit_is_refused_when_made_and_when_changed() {
        assert_eq!(Settings::new("api", 0, SECOND), Err(ConfigError::ZeroLimit));
        let settings = Settings::new("api", 1, SECOND).map(|made| made.with_limit(0));
        assert_eq!(settings, Ok(Err(ConfigError::ZeroLimit)));
    }

    #[test]
    fn a_limit_of_one_and_of_u32_max_are_allowed() {
        assert_eq!(Settings::new("api", 1, SECOND).map(|s| s.limit()), Ok(1));
        let most = Settings::new("api", 1, SECOND).and_then(|s| s.with_limit(u32::MAX));
        assert_eq!(most.map(|s| s.limit()), Ok(u32::MAX));
    }

    #[test]
    fn a_zero_period_is_refused_when_made_and_when_changed() {
        assert_eq!(
            Settings::new("api", 1, Duration::ZERO),
            Err(ConfigError::ZeroPeriod)
        );
        let settings = Settings::new("api", 1, SECOND).map(|made| made.with_period(Duration::ZERO));
        assert_eq!(settings, Ok(Err(ConfigError::ZeroPeriod)));
    }

    #[test]
    fn a_period_of_one_nanosecond_and_of_duration_max_are_allowed() {
        let shortest = Settings::new("api", 1, Duration::from_nanos(1));
        assert_eq!(shortest.map(|s| s.period()), Ok(Duration::from_nanos(1)));
        let longest = Settings::new("api", 1, SECOND).and_then(|s| s.with_period(Duration::MAX));
        assert_eq!(longest.map(|s| s.period()), Ok(Duration::MAX));
    }

    #[test]
    fn the_deadline_follows_max_wait_and_saturates_at_the_end_of_the_timeline() {
        let Ok(settings) = Settings::new("api", 1, SECOND) else {
            panic!("a valid configuration was refused");
        };
        let start = Instant::from_nanos(7);
        assert_eq!(settings.deadline(start), start);
        let waiting = settings.with_max_wait(Duration::from_nanos(5));
        assert_eq!(waiting.deadline(start), Instant::from_nanos(12));
        assert_eq!(
            settings.with_max_wait(Duration::MAX).deadline(start),
            Instant::MAX
        );
        // Set back to zero, the nanoseconds follow.
        assert_eq!(waiting.with_max_wait(Duration::ZERO).deadline(start), start);
    }

    #[test]
    fn debug_output_shows_each_setting_once() {
        let settings = Settings::new("api", 3, SECOND).map(|s| s.with_max_wait(SECOND));
        let text = format!("{settings:?}");
        assert!(text.contains("name: \"api\""), "{text}");
        assert!(!text.contains("nanos"), "{text}");
    }
}
