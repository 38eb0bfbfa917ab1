//! The fail policy [`FailPolicy::Local`]: while the server cannot decide, each process limits
//! each key by core's keyed fixed window, with its share of the limit.

use core::fmt;

use fixed_window::{Attempt, Instant, KeyedRateLimiter, ManualClock, RateLimiterError};

use crate::config::{Config, FailPolicy};
use crate::protocol::Decision;
use crate::unavailable::Unavailable;

/// The in-process limit of [`FailPolicy::Local`]: core's [`KeyedRateLimiter`] with `share`
/// permits per key per period, on the grid of the caller's clock (origin at its instant 0),
/// driven with the caller's instants (it never reads a clock). Under another policy it holds
/// nothing and decides nothing.
///
/// The production limiter and the simulator both answer an attempt the server could not
/// decide through [`decide`](LocalShare::decide), so the rule is implemented once.
///
/// # Examples
///
/// Two per key per second while the server is away.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::{Config, Decision, FailPolicy, LocalShare, Unavailable, UnavailableKind};
///
/// let config = Config::of("api", 10, Duration::from_secs(1))?.with_fail_policy(FailPolicy::Local { share: 2 });
/// let local = LocalShare::new(&config);
/// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
/// let t = Instant::from_nanos(100);
/// for _ in 0..2 {
///     assert_eq!(local.decide("k", Some(1), t, t, cause.clone()), Decision::FailedOpen(cause.clone()));
/// }
/// assert!(matches!(local.decide("k", Some(1), t, t, cause.clone()), Decision::Rejected { local: true, .. }));
/// // Another key, or the next window, has its own share.
/// assert!(local.decide("j", Some(1), t, t, cause.clone()).is_permit());
/// let next = Instant::from_nanos(1_000_000_000);
/// assert!(local.decide("k", Some(1), next, next, cause.clone()).is_permit());
/// # Ok::<(), fixed_window_redis::ConfigError>(())
/// ```
pub struct LocalShare {
    /// Boxed: most limiters have none, and a limiter is moved by value.
    /// On a clock that stands at zero: the windows are numbered from the one holding the
    /// clock's reading at build, and every decision is made at the caller's instant, so the
    /// grid is `[k·period, (k+1)·period)` of the caller's clock, whatever its age.
    limiter: Option<Box<KeyedRateLimiter<String, ManualClock>>>,
}

impl LocalShare {
    /// The local limit `config`'s fail policy asks for: none unless it is
    /// [`FailPolicy::Local`] with a share above 0.
    ///
    /// # Examples
    ///
    /// See [`LocalShare`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, LocalShare};
    ///
    /// let closed = LocalShare::new(&Config::of("api", 10, Duration::from_secs(1))?);
    /// assert!(!closed.is_active());
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn new(config: &Config) -> LocalShare {
        let limiter = match config.fail_policy() {
            FailPolicy::Local { share } => {
                KeyedRateLimiter::builder(config.name(), share, config.period())
                    .ok()
                    .map(|builder| Box::new(builder.clock(ManualClock::new()).build()))
            }
            _ => None,
        };
        LocalShare { limiter }
    }

    /// Whether this process limits keys itself while the server cannot decide.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, FailPolicy, LocalShare};
    ///
    /// let config = Config::of("api", 10, Duration::from_secs(1))?;
    /// assert!(LocalShare::new(&config.clone().with_fail_policy(FailPolicy::Local { share: 3 })).is_active());
    /// // A share of 0 fails closed.
    /// assert!(!LocalShare::new(&config.with_fail_policy(FailPolicy::Local { share: 0 })).is_active());
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn is_active(&self) -> bool {
        self.limiter.is_some()
    }

    /// What an attempt for `weight` permits (`None`: a drain) on `key` at local instant `now`,
    /// whose call must end by `deadline`, gets when the server could not decide it (`cause`):
    /// a permit of the local window ([`Decision::FailedOpen`]), a wait for its next window
    /// ([`Decision::Wait`]: the attempt then asks the server again), or a local rejection;
    /// fail closed ([`Decision::Unavailable`]) for a drain, for more than the share at once,
    /// or if the policy is not [`FailPolicy::Local`].
    ///
    /// # Examples
    ///
    /// See [`LocalShare`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Config, Decision, FailPolicy, LocalShare, Unavailable, UnavailableKind};
    ///
    /// let config = Config::of("api", 10, Duration::from_secs(1))?.with_fail_policy(FailPolicy::Local { share: 1 });
    /// let local = LocalShare::new(&config);
    /// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// let (t, later) = (Instant::from_nanos(0), Instant::from_nanos(2_000_000_000));
    /// assert!(local.decide("k", Some(1), t, later, cause.clone()).is_permit());
    /// // Its window is full: wait for the next one, which opens by the deadline.
    /// assert_eq!(local.decide("k", Some(1), t, later, cause.clone()), Decision::Wait { until: Instant::from_nanos(1_000_000_000) });
    /// // Two at once is more than the share: fail closed.
    /// assert_eq!(local.decide("j", Some(2), t, t, cause.clone()), Decision::Unavailable(cause));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn decide(
        &self,
        key: &str,
        weight: Option<u32>,
        now: Instant,
        deadline: Instant,
        cause: Unavailable,
    ) -> Decision {
        let (Some(limiter), Some(n)) = (&self.limiter, weight) else {
            return Decision::Unavailable(cause);
        };
        match limiter.attempt_n(&key.to_owned(), n, now, deadline) {
            Ok(Attempt::Permitted { .. }) => Decision::FailedOpen(cause),
            Ok(Attempt::Wait { until }) => Decision::Wait { until },
            Ok(Attempt::Rejected { retry_after }) => Decision::Rejected {
                retry_after,
                local: true,
            },
            Err(RateLimiterError::TooMany { .. } | _) => Decision::Unavailable(cause),
        }
    }
}

impl fmt::Debug for LocalShare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalShare")
            .field(
                "share",
                &self.limiter.as_ref().map(|limiter| limiter.limit()),
            )
            .field(
                "keys",
                &self.limiter.as_ref().map_or(0, |limiter| limiter.len()),
            )
            .finish()
    }
}
