//! The fail policy [`FailPolicy::Local`]: while the server cannot decide, each process limits
//! each key by core's keyed fixed window, with its share of the key's limit.

use core::fmt;
use core::num::NonZeroU32;

use fixed_window::{
    Attempt, Instant, KeyedBuilder, KeyedRateLimiter, ManualClock, RateLimiterError,
};

use crate::config::{Config, FailPolicy};
use crate::protocol::Decision;
use crate::unavailable::Unavailable;

/// The in-process limit of [`FailPolicy::Local`]: core's [`KeyedRateLimiter`] with `share`
/// permits per key per period (a key with a limit of its own takes `share` scaled to it,
/// [`key_share`](LocalShare::key_share), through the keyed limiter's own limits), on the grid of the caller's clock (origin at its instant 0),
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
    limiter: Option<Box<KeyedRateLimiter<LocalKey, ManualClock>>>,
}

/// A key of the local limiter: a caller's, or `None`, never decided, whose entry in the map of
/// own limits sizes the keys' words (see `own_shares`).
type LocalKey = Option<String>;

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
                    .and_then(|builder| own_shares(builder, config, share))
                    .ok()
                    .map(|builder| Box::new(builder.clock(ManualClock::new()).build()))
            }
            _ => None,
        };
        LocalShare { limiter }
    }

    /// The share of `key` in this process: `share` scaled to the key's own limit, or `share`
    /// for a key without one (see [`key_share`](LocalShare::key_share)); `None` if the policy is not
    /// [`FailPolicy::Local`] with a share above 0.
    ///
    /// # Examples
    ///
    /// A limiter of 100 with a local share of 10: a key of its own limit 1,000 takes 100
    /// locally, one of 5 (whose scaled share, a half, rounds down to none) takes 1, and
    /// every other key 10.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Config, FailPolicy, LocalShare, Unavailable, UnavailableKind};
    ///
    /// let config = Config::of("tenants", 100, Duration::from_secs(1))?
    ///     .key_limit("paid", 1_000)?
    ///     .key_limit("trial", 5)?
    ///     .with_fail_policy(FailPolicy::Local { share: 10 });
    /// let local = LocalShare::new(&config);
    /// assert_eq!(local.share_of("paid"), Some(100));
    /// assert_eq!(local.share_of("trial"), Some(1));
    /// assert_eq!(local.share_of("free"), Some(10));
    /// let (cause, t) = (Unavailable::new(UnavailableKind::Timeout, "no reply"), Instant::from_nanos(0));
    /// assert!(local.decide("trial", Some(1), t, t, cause.clone()).is_permit());
    /// assert!(!local.decide("trial", Some(1), t, t, cause.clone()).is_permit());
    /// for _ in 0..100 {
    ///     assert!(local.decide("paid", Some(1), t, t, cause.clone()).is_permit());
    /// }
    /// assert!(!local.decide("paid", Some(1), t, t, cause).is_permit());
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn share_of(&self, key: &str) -> Option<u32> {
        self.limiter
            .as_ref()
            .map(|limiter| limiter.key_limit(&Some(key.to_owned())))
    }

    /// The local share of a key whose own limit is `own`, in a limiter of `limit` whose processes
    /// each take `share` of it while the server cannot decide: `share` scaled to the key's limit,
    /// `share × own / limit` rounded down, at least 1 (a key is never refused outright) and at
    /// most `own` (never more than the key may take). So a key's share is the same fraction of
    /// its own limit as `share` is of the limiter's, and a key with a tenth of the default limit
    /// takes a tenth of the share. In 64 bits: the product of two `u32`s fits.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::LocalShare;
    ///
    /// assert_eq!(LocalShare::key_share(100, 10, 1_000), 1);
    /// assert_eq!(LocalShare::key_share(10, 1_000, 100), 100);
    /// assert_eq!(LocalShare::key_share(7, 3, 10), 2);
    /// // At least 1, at most the key's own limit.
    /// assert_eq!(LocalShare::key_share(1, 1, u32::MAX), 1);
    /// assert_eq!(LocalShare::key_share(50, 2, 10), 2);
    /// assert_eq!(LocalShare::key_share(u32::MAX, u32::MAX, 1), u32::MAX);
    /// ```
    #[must_use]
    pub fn key_share(share: u32, own: u32, limit: u32) -> u32 {
        let scaled = u64::from(share) * u64::from(own) / u64::from(limit.max(1));
        let capped = scaled.min(u64::from(own)).max(1);
        u32::try_from(capped).unwrap_or(u32::MAX)
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
    /// fail closed ([`Decision::Unavailable`]) for a drain, for more than the key's share
    /// ([`share_of`](LocalShare::share_of)) at once, or if the policy is not
    /// [`FailPolicy::Local`].
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
        match limiter.attempt_n(&Some(key.to_owned()), n, now, deadline) {
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

/// `builder` (of `share` per key) giving each key with a limit of its own in `config` its
/// share scaled to that limit ([`LocalShare::key_share`]), its own limit coming from the map or the rule
/// as `config` decides.
///
/// # Errors
///
/// None in practice: the sizing entry's share is at least 1.
fn own_shares(
    builder: KeyedBuilder<LocalKey>,
    config: &Config,
    share: u32,
) -> Result<KeyedBuilder<LocalKey>, fixed_window::ConfigError> {
    let limits = config.own_limits();
    if limits.is_empty() {
        return Ok(builder);
    }
    let limit = config.limit();
    // The keyed limiter sizes its words by the largest limit in its map, and counts a rule's
    // answer above what they hold as that: the sizing entry makes them hold the largest share
    // any own limit scales to, so no key's share is cut.
    let largest = LocalShare::key_share(share, limits.largest(), limit);
    builder.key_limit(None, largest).map(|builder| {
        builder.key_limits(move |key: &LocalKey| {
            let own = limits.own(key.as_deref()?)?;
            NonZeroU32::new(LocalShare::key_share(share, own, limit))
        })
    })
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

#[cfg(test)]
mod tests {
    use core::num::NonZeroU32;
    use core::time::Duration;

    use fixed_window::Instant;

    use super::LocalShare;
    use crate::config::{Config, FailPolicy};
    use crate::unavailable::{Unavailable, UnavailableKind};

    /// A rule's keys take shares scaled to their limits however large, on the shortest
    /// period too, whose keyed words would otherwise count to 1,023 at most.
    #[test]
    fn a_rules_large_limit_scales_the_share_uncut() {
        let config = Config::of("t", 10, Duration::from_micros(1))
            .expect("a valid configuration")
            .key_limits(|key| (key == "big").then_some(NonZeroU32::new(1_000_000)?))
            .with_fail_policy(FailPolicy::Local { share: 10 });
        let local = LocalShare::new(&config);
        assert_eq!(local.share_of("big"), Some(1_000_000));
        assert_eq!(local.share_of("small"), Some(10));
        let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
        let t = Instant::from_nanos(0);
        for _ in 0..2_000 {
            assert!(
                local
                    .decide("big", Some(1), t, t, cause.clone())
                    .is_permit()
            );
        }
        assert!(
            local
                .decide("big", Some(998_000), t, t, cause.clone())
                .is_permit()
        );
        assert!(!local.decide("big", Some(1), t, t, cause).is_permit());
    }

    /// The map's limit wins over the rule's, as in the configuration.
    #[test]
    fn the_map_wins_over_the_rule() {
        let config = Config::of("t", 100, Duration::from_secs(1))
            .and_then(|config| config.key_limit("k", 50))
            .expect("a valid configuration")
            .key_limits(|_| NonZeroU32::new(1_000))
            .with_fail_policy(FailPolicy::Local { share: 20 });
        let local = LocalShare::new(&config);
        assert_eq!(local.share_of("k"), Some(10));
        assert_eq!(local.share_of("j"), Some(200));
    }
}
