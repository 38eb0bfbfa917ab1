//! What a shared limiter is: its name, limit and period (which every process must agree on),
//! and how this process waits, times out and fails.

use core::time::Duration;
use std::sync::Arc;

use fixed_window::{Origin, Settings};

use crate::lease::Lease;
use crate::origin::fixed_micros;

mod error;
pub use self::error::ConfigError;
mod fail_policy;
pub use self::fail_policy::FailPolicy;
mod key_limits;
mod keys;
pub(crate) use self::key_limits::KeyLimits;

/// The longest period: 100 years. Times on the server are microseconds since the Unix epoch,
/// carried in Lua's doubles, which are exact below 2^53 µs (about 285 years after 1970); the
/// script's largest value, a window's end, stays below that for any period up to this bound
/// until the year 2150.
pub const MAX_PERIOD: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// The longest limiter name, in bytes.
pub const MAX_NAME_LEN: usize = 128;

/// How long a counter outlives its window, in milliseconds: it covers the rounding of the
/// window's end to the millisecond and a server clock that steps back by up to a second (the
/// stored window then still exists to count against; see the crate documentation).
pub const EXPIRY_MARGIN_MILLIS: u64 = 1_000;

/// The default time one round trip may take before the attempt is [`Unavailable`](crate::Unavailable).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);

/// The default number of full windows remembered for local rejection.
pub const DEFAULT_LOCAL_MEMORY: usize = 10_000;

/// What every key of a limiter begins with.
const PREFIX: &str = "fixed-window:";

/// A shared limiter's configuration, validated; the same value drives the production client
/// and any other driver of the [`Protocol`](crate::Protocol).
///
/// `name`, `limit` and `period` are shared: every process using the name must give the same
/// limit and period, or its calls fail with [`SharedError::Conflict`](crate::SharedError::Conflict).
/// The rest is this process's own.
///
/// It holds core's [`Settings`] (name, limit, period, max wait), checked by core's rules, and
/// adds only the server's: a period of whole microseconds and at most [`MAX_PERIOD`], a name
/// usable in Redis keys; and the settings of this process alone (fail policy, timeout, local
/// memory, time key). So an in-process and a shared limiter refuse a configuration alike,
/// and one [`Settings`] can configure both ([`Config::from_settings`]).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window_redis::{Config, FailPolicy};
///
/// let config = Config::of("api", 100, Duration::from_secs(1))?
///     .with_max_wait(Duration::from_millis(250))
///     .with_fail_policy(FailPolicy::Open);
/// assert_eq!((config.name(), config.limit(), config.fail_policy()), ("api", 100, FailPolicy::Open));
/// assert_eq!(config.config_key(), "fixed-window:{api}");
/// # Ok::<(), fixed_window_redis::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    settings: Settings,
    fail_policy: FailPolicy,
    timeout: Duration,
    local_memory: usize,
    clock_resolution: Duration,
    wait_for_replicas: u32,
    lease: Option<Lease>,
    /// Limits of their own for some keys ([`Config::key_limit`], [`Config::key_limits`]).
    key_limits: KeyLimits,
    time_key: Option<Arc<str>>,
    origin: Origin,
    /// A fixed origin in decimal microseconds, as the script takes it; `None` for the first
    /// registration's.
    origin_arg: Option<Arc<str>>,
    /// Derived once, so that building a call formats only the key.
    stored_key: Arc<str>,
    period_arg: Arc<str>,
}

impl Config {
    /// The configuration of a limiter named `name` allowing `limit` calls per `period`, with
    /// the defaults: no waiting, fail closed, [`DEFAULT_TIMEOUT`], [`DEFAULT_LOCAL_MEMORY`].
    ///
    /// `name` is `&'static str` because the specification requires a static,
    /// compile-time-known name: it keys metrics and logs, whose cardinality must stay bounded.
    /// Here it also names the limiter's keys on the server, shared by every process.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Settings`] if `limit` is 0 or `period` is zero (core's rules, as
    /// [`Settings::new`] checks them); otherwise as [`Config::from_settings`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, ConfigError};
    ///
    /// let zero = fixed_window::ConfigError::ZeroLimit;
    /// assert_eq!(Config::of("api", 0, Duration::from_secs(1)).unwrap_err(), ConfigError::Settings(zero));
    /// assert_eq!(Config::of("", 1, Duration::from_secs(1)).unwrap_err(), ConfigError::EmptyName);
    /// assert_eq!(Config::of("a{b}", 1, Duration::from_secs(1)).unwrap_err(), ConfigError::InvalidName("a{b}"));
    /// assert!(Config::of("api", 1, Duration::from_micros(1)).is_ok());
    /// ```
    pub fn of(name: &'static str, limit: u32, period: Duration) -> Result<Config, ConfigError> {
        Config::from_settings(Settings::new(name, limit, period)?)
    }

    /// The configuration of a limiter with `settings` (name, limit, period and max wait, as
    /// core checked them), with this process's defaults: fail closed, [`DEFAULT_TIMEOUT`],
    /// [`DEFAULT_LOCAL_MEMORY`].
    ///
    /// # Errors
    ///
    /// The server's own rules: [`ConfigError::PeriodNotWholeMicros`] or
    /// [`ConfigError::PeriodTooLong`] if the period is not whole microseconds or longer than
    /// [`MAX_PERIOD`]; [`ConfigError::EmptyName`] or [`ConfigError::InvalidName`] if the name
    /// is empty, longer than [`MAX_NAME_LEN`] bytes or has `{`, `}` or a control character.
    ///
    /// # Examples
    ///
    /// The same settings configure an in-process limiter and a shared one.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Builder, Settings};
    /// use fixed_window_redis::Config;
    ///
    /// let settings = Settings::new("api", 10, Duration::from_secs(1))?.with_max_wait(Duration::from_millis(5));
    /// let local = Builder::from(settings).build();
    /// let shared = Config::from_settings(settings)?;
    /// assert_eq!(shared.settings(), &settings);
    /// assert_eq!((local.limit(), local.max_wait()), (shared.limit(), shared.max_wait()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_settings(settings: Settings) -> Result<Config, ConfigError> {
        validate_name(settings.name())?;
        let period_micros = validate_period(settings.period())?;
        Ok(Config {
            settings,
            fail_policy: FailPolicy::Closed,
            timeout: DEFAULT_TIMEOUT,
            local_memory: DEFAULT_LOCAL_MEMORY,
            clock_resolution: Duration::ZERO,
            wait_for_replicas: 0,
            lease: None,
            key_limits: KeyLimits::default(),
            time_key: None,
            origin: Origin::Creation,
            origin_arg: None,
            stored_key: format!("{PREFIX}{{{}}}", settings.name()).into(),
            period_arg: period_micros.to_string().into(),
        })
    }

    /// This configuration for a limiter whose clock ticks every `resolution` (its readings
    /// are whole ticks, up to one tick behind the time): a coarse clock, such as a 15.625 ms
    /// default Windows timer or a virtual machine's coarse clock. The decisions the process
    /// makes alone, from what a reply told it, keep a tick's margin: a window remembered
    /// full is rejected locally until a tick earlier, a leased share is spent until a tick
    /// before its local deadline, and a caller told to retry is sent a tick later, so that
    /// a reading up to a tick behind never lets a local decision pass the window's end as
    /// the server knows it. The default, zero, is a clock that reads to the nanosecond, as
    /// [`SystemClock`](fixed_window::SystemClock) does where the system's monotonic clock
    /// does.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::Config;
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.clock_resolution(), Duration::ZERO);
    /// let coarse = config.with_clock_resolution(Duration::from_micros(15_625));
    /// assert_eq!(coarse.clock_resolution(), Duration::from_micros(15_625));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_clock_resolution(self, resolution: Duration) -> Config {
        Config {
            clock_resolution: resolution,
            ..self
        }
    }

    /// The resolution of the limiter's clock ([`with_clock_resolution`](Config::with_clock_resolution)):
    /// zero for one that reads to the nanosecond.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let config = fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.clock_resolution(), Duration::ZERO);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn clock_resolution(&self) -> Duration {
        self.clock_resolution
    }

    /// This configuration letting an excess call wait up to `max_wait` for a later window
    /// (what that means is core's: see [`Settings::with_max_wait`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::Config;
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?.with_max_wait(Duration::from_secs(2));
    /// assert_eq!(config.max_wait(), Duration::from_secs(2));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_max_wait(self, max_wait: Duration) -> Config {
        Config {
            settings: self.settings.with_max_wait(max_wait),
            ..self
        }
    }

    /// This configuration with its windows aligned to `origin` on the server's clock, whose
    /// readings are microseconds since the Unix epoch: [`Origin::Creation`] (the default) is
    /// the server's time when the first process stored the configuration, learnt by
    /// registering; [`Origin::UnixEpoch`] is whole periods since 1970, as envoy's ratelimit
    /// aligns its windows; [`Origin::At`] is that instant read as nanoseconds since the Unix
    /// epoch, a boundary of a grid that has boundaries whole periods before it too (stored as
    /// the first of them at or after the epoch, so that every boundary of one grid names the
    /// same origin). A fixed origin (the last two) needs no registration: a limiter
    /// [started](crate::SharedRateLimiter::start) with one sends its first call at once. It is
    /// part of the shared configuration, stored and checked like the limit and period.
    ///
    /// # Errors
    ///
    /// [`ConfigError::OriginNotWholeMicros`] if an [`Origin::At`] is not whole microseconds,
    /// [`ConfigError::OriginTooLate`] if it is later than
    /// [`MAX_ORIGIN_MICROS`](crate::MAX_ORIGIN_MICROS) (where the script's numbers would stop
    /// being exact).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, ConfigError, Instant, Origin};
    ///
    /// let config = Config::of("api", 100, Duration::from_secs(60))?.with_origin(Origin::UnixEpoch)?;
    /// assert_eq!(config.origin(), Origin::UnixEpoch);
    /// let odd = Origin::At(Instant::from_nanos(1_500));
    /// assert_eq!(config.with_origin(odd).unwrap_err().field(), "origin");
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_origin(self, origin: Origin) -> Result<Config, ConfigError> {
        let origin_arg =
            fixed_micros(origin, self.period())?.map(|micros| micros.to_string().into());
        Ok(Config {
            origin,
            origin_arg,
            ..self
        })
    }

    /// This configuration with `fail_policy` deciding calls the server cannot.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, FailPolicy};
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?.with_fail_policy(FailPolicy::Open);
    /// assert_eq!(config.fail_policy(), FailPolicy::Open);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_fail_policy(self, fail_policy: FailPolicy) -> Config {
        Config {
            fail_policy,
            ..self
        }
    }

    /// This configuration giving each round trip (and each connection attempt) at most
    /// `timeout` before the attempt is unavailable.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroTimeout`] if `timeout` is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, ConfigError};
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.clone().with_timeout(Duration::from_millis(50))?.timeout(), Duration::from_millis(50));
    /// assert_eq!(config.with_timeout(Duration::ZERO).unwrap_err(), ConfigError::ZeroTimeout);
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_timeout(self, timeout: Duration) -> Result<Config, ConfigError> {
        if timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout);
        }
        Ok(Config { timeout, ..self })
    }

    /// This configuration remembering up to `entries` full windows for local rejection; 0
    /// turns local rejection off, so every attempt is a round trip.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::Config;
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?.with_local_memory(0);
    /// assert_eq!(config.local_memory(), 0);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_local_memory(self, entries: usize) -> Config {
        Config {
            local_memory: entries,
            ..self
        }
    }

    /// This configuration granting a permit only once `replicas` replicas of the primary that
    /// counted it have acknowledged the count (Redis's `WAIT`, sent with each script call).
    /// A failover to one of them then forgets none of the permits granted; by default (0) the
    /// limiter does not wait, and a failover to a replica that lagged can forget up to `limit`
    /// permits per key in its window.
    ///
    /// Each call then waits for the replication on top of its round trip, up to half the
    /// timeout; a call whose writes fewer replicas acknowledged in that time ends
    /// [`Unavailable`](crate::Unavailable) of kind
    /// [`Unreplicated`](crate::UnavailableKind::Unreplicated), answered by the fail policy
    /// (the script counted: the count stands, unused). With `replicas` above the replicas a
    /// primary has, every call ends so. A user restricted by an ACL needs `WAIT` too.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::Config;
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?.with_wait_for_replicas(1);
    /// assert_eq!(config.wait_for_replicas(), 1);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_wait_for_replicas(self, replicas: u32) -> Config {
        Config {
            wait_for_replicas: replicas,
            ..self
        }
    }

    /// This configuration leasing shares of each key's window: a process takes a share of the
    /// key's current window in one script call, counted on the server before any of it is
    /// spent (on the counter exact processes use, so that both kinds share one count), and
    /// grants permits from it in-process, without a round trip, until it is spent or its
    /// local deadline passes ([`lease_deadline`](crate::lease_deadline)). Shares shrink as the
    /// window fills ([`Lease::share`]), and the permits a window may refuse while it still has
    /// room are bounded ([`Lease::under_admission_bound`]). A share is dropped, never spent,
    /// once the process learns of a limit change, a conflict or a failed call; the unspent
    /// rest of the shares held may be handed back at shutdown
    /// ([`SharedRateLimiter::hand_back`](crate::SharedRateLimiter::hand_back)). See
    /// docs/rules.md for how leases meet weights, drains, waiting calls, origins, clusters,
    /// replicas and the fail policies.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Lease};
    ///
    /// let config = Config::of("api", 1_000, Duration::from_secs(1))?.with_lease(Lease::new(32)?);
    /// assert_eq!(config.lease().map(|lease| lease.max_share()), Some(32));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_lease(self, lease: Lease) -> Config {
        Config {
            lease: Some(lease),
            ..self
        }
    }

    /// How this configuration leases shares of a window, if it does
    /// ([`with_lease`](Config::with_lease)); `None`, the default, counts every attempt on the
    /// server.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// assert_eq!(fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?.lease(), None);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn lease(&self) -> Option<Lease> {
        self.lease
    }

    /// This configuration reading the server's time from the Redis key `key` (an integer
    /// count of microseconds) instead of the `TIME` command.
    ///
    /// For tests that must place calls exactly on window boundaries: the test sets the key,
    /// and every process's script reads it. Counters still expire on the server's own clock.
    /// Production code has no use for it.
    ///
    /// # Errors
    ///
    /// [`ConfigError::EmptyTimeKey`] if `key` is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::Config;
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?.with_time_key("test:now")?;
    /// assert_eq!(config.time_key(), Some("test:now"));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn with_time_key(self, key: &str) -> Result<Config, ConfigError> {
        if key.is_empty() {
            return Err(ConfigError::EmptyTimeKey);
        }
        Ok(Config {
            time_key: Some(key.into()),
            ..self
        })
    }

    /// The limiter's name, shared by every process that uses it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// assert_eq!(fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?.name(), "api");
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn name(&self) -> &'static str {
        self.settings.name()
    }

    /// Permits per window, per key.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// assert_eq!(fixed_window_redis::Config::of("api", 7, Duration::from_secs(1))?.limit(), 7);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limit(&self) -> u32 {
        self.settings.limit()
    }

    /// The window's length.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let config = fixed_window_redis::Config::of("api", 1, Duration::from_millis(5))?;
    /// assert_eq!(config.period(), Duration::from_millis(5));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn period(&self) -> Duration {
        self.settings.period()
    }

    /// How long an excess call may wait for a later window (default zero).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let config = fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.max_wait(), Duration::ZERO);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn max_wait(&self) -> Duration {
        self.settings.max_wait()
    }

    /// The settings every limiter shares: name, limit, period, max wait.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Settings;
    ///
    /// let config = fixed_window_redis::Config::of("api", 3, Duration::from_secs(1))?;
    /// assert_eq!(config.settings(), &Settings::new("api", 3, Duration::from_secs(1))?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// What callers see when the server cannot decide.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, FailPolicy};
    ///
    /// assert_eq!(Config::of("api", 1, Duration::from_secs(1))?.fail_policy(), FailPolicy::Closed);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn fail_policy(&self) -> FailPolicy {
        self.fail_policy
    }

    /// The longest a round trip may take.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, DEFAULT_TIMEOUT};
    ///
    /// assert_eq!(Config::of("api", 1, Duration::from_secs(1))?.timeout(), DEFAULT_TIMEOUT);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How many full windows are remembered for local rejection.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, DEFAULT_LOCAL_MEMORY};
    ///
    /// assert_eq!(Config::of("api", 1, Duration::from_secs(1))?.local_memory(), DEFAULT_LOCAL_MEMORY);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn local_memory(&self) -> usize {
        self.local_memory
    }

    /// The replicas that must acknowledge a call's writes before it grants a permit (see
    /// [`with_wait_for_replicas`](Config::with_wait_for_replicas)); 0, the default, waits for
    /// none.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::Config;
    ///
    /// assert_eq!(Config::of("api", 1, Duration::from_secs(1))?.wait_for_replicas(), 0);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn wait_for_replicas(&self) -> u32 {
        self.wait_for_replicas
    }

    /// The key the script reads the time from instead of `TIME`, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// assert_eq!(fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?.time_key(), None);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn time_key(&self) -> Option<&str> {
        self.time_key.as_deref()
    }

    /// Where the windows are aligned (see [`with_origin`](Config::with_origin)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Origin;
    ///
    /// let config = fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.origin(), Origin::Creation);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The fixed origin in microseconds on the server's clock, `None` if the first
    /// registration fixes it.
    pub(crate) fn fixed_origin(&self) -> Option<u64> {
        self.origin_arg.as_deref().and_then(|arg| arg.parse().ok())
    }

    /// A fixed origin as the script takes it.
    pub(crate) fn origin_arg(&self) -> Option<&Arc<str>> {
        self.origin_arg.as_ref()
    }

    /// The configuration key, shared with every call.
    pub(crate) fn config_key_arc(&self) -> &Arc<str> {
        &self.stored_key
    }

    /// The time key, shared with every call.
    pub(crate) fn time_key_arc(&self) -> Option<&Arc<str>> {
        self.time_key.as_ref()
    }

    /// The period in microseconds, as the script's argument.
    pub(crate) fn period_arg(&self) -> &Arc<str> {
        &self.period_arg
    }
}

fn validate_name(name: &'static str) -> Result<(), ConfigError> {
    if name.is_empty() {
        return Err(ConfigError::EmptyName);
    }
    let forbidden = |c: char| c == '{' || c == '}' || c.is_control();
    if name.len() > MAX_NAME_LEN || name.chars().any(forbidden) {
        return Err(ConfigError::InvalidName(name));
    }
    Ok(())
}

/// The period in whole microseconds. A positive period is core's rule, checked by
/// [`Settings`] before this adds the server's.
fn validate_period(period: Duration) -> Result<u64, ConfigError> {
    if period > MAX_PERIOD {
        return Err(ConfigError::PeriodTooLong(period));
    }
    if !period.subsec_nanos().is_multiple_of(1_000) {
        return Err(ConfigError::PeriodNotWholeMicros(period));
    }
    // At most MAX_PERIOD, so it fits.
    u64::try_from(period.as_micros()).map_err(|_| ConfigError::PeriodTooLong(period))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_checked_against_the_server_clock_and_lua_numbers() {
        assert_eq!(validate_period(Duration::from_micros(1)), Ok(1));
        assert_eq!(validate_period(MAX_PERIOD), Ok(3_153_600_000_000_000));
        let longer = MAX_PERIOD + Duration::from_micros(1);
        assert_eq!(
            validate_period(longer),
            Err(ConfigError::PeriodTooLong(longer))
        );
        assert_eq!(
            validate_period(Duration::MAX),
            Err(ConfigError::PeriodTooLong(Duration::MAX))
        );
        assert_eq!(
            validate_period(Duration::from_nanos(999)),
            Err(ConfigError::PeriodNotWholeMicros(Duration::from_nanos(999)))
        );
        // The window end stays exact in a double: now (~2^51 µs until 2040) plus the period.
        let end = 2_u64.pow(51) + validate_period(MAX_PERIOD).unwrap_or(u64::MAX) * 2;
        assert!(end < 2_u64.pow(53));
    }

    #[test]
    fn the_shared_rules_are_cores_and_name_their_field() {
        let zero_limit = Config::of("a", 0, Duration::from_secs(1));
        assert_eq!(
            zero_limit,
            Err(ConfigError::Settings(fixed_window::ConfigError::ZeroLimit))
        );
        let zero_period = Config::of("a", 1, Duration::ZERO);
        assert_eq!(
            zero_period,
            Err(ConfigError::Settings(fixed_window::ConfigError::ZeroPeriod))
        );
        for (err, field) in [(zero_limit, "limit"), (zero_period, "period")] {
            let Err(err) = err else {
                panic!("a {field} the rules forbid was accepted");
            };
            assert_eq!(err.field(), field);
            assert!(err.to_string().starts_with(field), "{err}");
        }
    }

    #[test]
    fn settings_that_core_accepts_are_checked_against_the_server_rules() {
        let made = Settings::new("a", 1, Duration::from_nanos(1_500)).map(Config::from_settings);
        assert_eq!(
            made,
            Ok(Err(ConfigError::PeriodNotWholeMicros(
                Duration::from_nanos(1_500)
            )))
        );
        let made = Settings::new("{a}", 1, Duration::from_secs(1)).map(Config::from_settings);
        assert_eq!(made, Ok(Err(ConfigError::InvalidName("{a}"))));
        let waiting = Settings::new("a", 2, Duration::from_secs(1))
            .map(|settings| settings.with_max_wait(Duration::from_secs(3)));
        let config = waiting.map(Config::from_settings);
        let max_wait = config.map(|config| config.map(|config| config.max_wait()));
        assert_eq!(max_wait, Ok(Ok(Duration::from_secs(3))));
    }

    #[test]
    fn names_that_would_break_the_hash_tag_are_refused() {
        assert_eq!(validate_name("a}b"), Err(ConfigError::InvalidName("a}b")));
        assert_eq!(validate_name("a\nb"), Err(ConfigError::InvalidName("a\nb")));
        let long: &'static str = Box::leak("x".repeat(MAX_NAME_LEN + 1).into_boxed_str());
        assert_eq!(validate_name(long), Err(ConfigError::InvalidName(long)));
        assert_eq!(validate_name("checkout api"), Ok(()));
    }
}
