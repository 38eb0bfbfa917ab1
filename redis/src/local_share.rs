//! The fail policy [`FailPolicy::Local`]: while the server cannot decide, each process limits
//! each key by core's keyed fixed window, with its share of the key's limit.

use core::fmt;
use core::num::NonZeroU32;

use fixed_window::{
    Attempt, Instant, KeyedBuilder, KeyedRateLimiter, ManualClock, RateLimiterError,
};

use crate::config::{Config, FailPolicy, KeyLimits};
use crate::protocol::Decision;
use crate::unavailable::Unavailable;

/// The in-process limit of [`FailPolicy::Local`]: core's [`KeyedRateLimiter`] with `share`
/// permits per key per period (a key with a limit of its own takes `share` scaled to it,
/// [`key_share`](LocalShare::key_share), through the keyed limiter's own limits, following
/// the key's limit in force in the process, live changes included), on the grid of the
/// caller's clock (origin at its instant 0),
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
///     assert_eq!(local.decide("k", None, Some(1), t, t, cause.clone()), Decision::FailedOpen(cause.clone()));
/// }
/// assert!(matches!(local.decide("k", None, Some(1), t, t, cause.clone()), Decision::Rejected { local: true, .. }));
/// // Another key, or the next window, has its own share.
/// assert!(local.decide("j", None, Some(1), t, t, cause.clone()).is_permit());
/// let next = Instant::from_nanos(1_000_000_000);
/// assert!(local.decide("k", None, Some(1), next, next, cause.clone()).is_permit());
/// # Ok::<(), fixed_window_redis::ConfigError>(())
/// ```
pub struct LocalShare {
    /// Boxed: most limiters have none, and a limiter is moved by value.
    local: Option<Box<Local>>,
}

/// The local limit of a process under [`FailPolicy::Local`] with a share above 0.
struct Local {
    /// On a clock that stands at zero: the windows are numbered from the one holding the
    /// clock's reading at build, and every decision is made at the caller's instant, so the
    /// grid is `[k·period, (k+1)·period)` of the caller's clock, whatever its age. Its
    /// keys' limits are their shares: the configuration's through its rule, a share that
    /// follows a live limit in its map.
    limiter: KeyedRateLimiter<LocalKey, ManualClock>,
    /// The policy's share.
    share: u32,
    /// The configured limit, which the shares of keys with limits of their own scale from.
    limit: u32,
    /// The configuration's own limits, whose shares the limiter's rule gives.
    built: KeyLimits,
}

/// A key of the local limiter: a caller's, or `None`, never decided, whose entry in the map of
/// own limits sizes the keys' words (see `sized`).
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
        let local = match config.fail_policy() {
            FailPolicy::Local { share } => {
                KeyedRateLimiter::builder(config.name(), share, config.period())
                    .and_then(|builder| sized(builder, config, share))
                    .ok()
                    .map(|builder| {
                        Box::new(Local {
                            limiter: builder.clock(ManualClock::new()).build(),
                            share,
                            limit: config.limit(),
                            built: config.own_limits(),
                        })
                    })
            }
            _ => None,
        };
        LocalShare { local }
    }

    /// The share, in this process, of a key whose own limit in force is `own` (live, else
    /// configured: [`Protocol::own_limit`](crate::Protocol::own_limit); `None` for a key of
    /// the limiter's limit): `share` scaled to the key's own limit, or `share` for a key
    /// without one (see [`key_share`](LocalShare::key_share)); `None` if the policy is not
    /// [`FailPolicy::Local`] with a share above 0. Scaled from the configured limit: a live
    /// change of the limiter's limit changes no share.
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
    /// use fixed_window_redis::{Config, FailPolicy, LocalShare, Protocol, Unavailable, UnavailableKind};
    ///
    /// let config = Config::of("tenants", 100, Duration::from_secs(1))?
    ///     .key_limit("paid", 1_000)?
    ///     .key_limit("trial", 5)?
    ///     .with_fail_policy(FailPolicy::Local { share: 10 });
    /// let local = LocalShare::new(&config);
    /// let protocol = Protocol::new(config);
    /// let share_of = |key| local.share_of(protocol.own_limit(key));
    /// assert_eq!((share_of("paid"), share_of("trial"), share_of("free")), (Some(100), Some(1), Some(10)));
    /// let (cause, t) = (Unavailable::new(UnavailableKind::Timeout, "no reply"), Instant::from_nanos(0));
    /// let own = protocol.own_limit("trial");
    /// assert!(local.decide("trial", own, Some(1), t, t, cause.clone()).is_permit());
    /// assert!(!local.decide("trial", own, Some(1), t, t, cause.clone()).is_permit());
    /// for _ in 0..100 {
    ///     assert!(local.decide("paid", Some(1_000), Some(1), t, t, cause.clone()).is_permit());
    /// }
    /// assert!(!local.decide("paid", Some(1_000), Some(1), t, t, cause).is_permit());
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn share_of(&self, own: Option<u32>) -> Option<u32> {
        self.local.as_ref().map(|local| local.share_of(own))
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
        self.local.is_some()
    }

    /// What an attempt for `weight` permits (`None`: a drain) on `key`, whose own limit in
    /// force in the process is `own` ([`Protocol::own_limit`](crate::Protocol::own_limit)),
    /// at local instant `now`, whose call must end by `deadline`, gets when the server could
    /// not decide it (`cause`): a permit of the local window ([`Decision::FailedOpen`]), a wait
    /// for its next window ([`Decision::Wait`]: the attempt then asks the server again), or a
    /// local rejection; fail closed ([`Decision::Unavailable`]) for a drain, for more than the
    /// key's share ([`share_of`](LocalShare::share_of)`(own)`) at once, or if the policy is not
    /// [`FailPolicy::Local`].
    ///
    /// The key's share follows `own`: once the process has adopted a live change of the key's
    /// limit, the next decision puts the share of the new limit in force, for the key's current
    /// local window too. The permits already granted locally in that window count against the
    /// new share, so a lowering to no more than them refuses the rest of the window and a raise
    /// frees room: the window never grants more than the share in force at each grant (so never
    /// more than the larger of what it had granted and the new share).
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
    /// assert!(local.decide("k", None, Some(1), t, later, cause.clone()).is_permit());
    /// // Its window is full: wait for the next one, which opens by the deadline.
    /// assert_eq!(local.decide("k", None, Some(1), t, later, cause.clone()), Decision::Wait { until: Instant::from_nanos(1_000_000_000) });
    /// // Two at once is more than the share: fail closed.
    /// assert_eq!(local.decide("j", None, Some(2), t, t, cause.clone()), Decision::Unavailable(cause.clone()));
    /// // The key's limit raised live to 30: its share is 3, the permit taken counting in it.
    /// assert!(local.decide("k", Some(30), Some(2), t, t, cause.clone()).is_permit());
    /// assert!(!local.decide("k", Some(30), Some(1), t, t, cause).is_permit());
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn decide(
        &self,
        key: &str,
        own: Option<u32>,
        weight: Option<u32>,
        now: Instant,
        deadline: Instant,
        cause: Unavailable,
    ) -> Decision {
        let (Some(local), Some(n)) = (&self.local, weight) else {
            return Decision::Unavailable(cause);
        };
        let key = Some(key.to_owned());
        local.follow(&key, own);
        match local.limiter.attempt_n(&key, n, now, deadline) {
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

impl Local {
    /// The share of a key whose own limit in force is `own`.
    fn share_of(&self, own: Option<u32>) -> u32 {
        own.map_or(self.share, |own| {
            LocalShare::key_share(self.share, own, self.limit)
        })
    }

    /// Puts in force for `key` the share of its own limit in force, `own`: the limiter's rule
    /// gives the configuration's; a key whose limit was changed live takes its share in the
    /// map, at once for its current window too (the keyed limiter's `set_key_limit`), and
    /// leaves it when its share is the configuration's again. Only such keys enter the map,
    /// so it holds no more keys than live changes were made.
    fn follow(&self, key: &LocalKey, own: Option<u32>) {
        let wanted = self.share_of(own);
        if self.limiter.key_limit(key) == wanted {
            return;
        }
        let built = self.share_of(key.as_deref().and_then(|key| self.built.own(key)));
        if wanted == built {
            self.limiter.clear_key_limit(key);
        } else {
            // Never refused: the share is at least 1, and the words count up to the largest
            // share any limit scales to (see `sized`).
            self.limiter.set_key_limit(key.clone(), wanted).ok();
        }
    }
}

/// `builder` (of `share` per key) giving each key with a limit of its own in `config` its
/// share scaled to that limit ([`LocalShare::key_share`]), its own limit coming from the map or the rule
/// as `config` decides, on words that count up to the share of any limit a key may be given
/// live.
///
/// # Errors
///
/// None in practice: the sizing entry's share is at least 1.
fn sized(
    builder: KeyedBuilder<LocalKey>,
    config: &Config,
    share: u32,
) -> Result<KeyedBuilder<LocalKey>, fixed_window::ConfigError> {
    let limits = config.own_limits();
    let limit = config.limit();
    // The keyed limiter sizes its words by the largest limit in its map, and counts a rule's
    // answer above what they hold as that: the sizing entry makes them hold the largest share
    // any limit scales to, configured or set live later (any limit up to `u32::MAX`), so no
    // key's share is cut.
    let largest = LocalShare::key_share(share, u32::MAX, limit);
    builder.key_limit(None, largest).map(|builder| {
        if limits.is_empty() {
            return builder;
        }
        builder.key_limits(move |key: &LocalKey| {
            let own = limits.own(key.as_deref()?)?;
            NonZeroU32::new(LocalShare::key_share(share, own, limit))
        })
    })
}

impl fmt::Debug for LocalShare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalShare")
            .field("share", &self.local.as_ref().map(|local| local.share))
            .field(
                "keys",
                &self.local.as_ref().map_or(0, |local| local.limiter.len()),
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
    use crate::protocol::{Decision, Protocol};
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
        let protocol = Protocol::new(config);
        assert_eq!(local.share_of(protocol.own_limit("big")), Some(1_000_000));
        assert_eq!(local.share_of(protocol.own_limit("small")), Some(10));
        let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
        let t = Instant::from_nanos(0);
        for _ in 0..2_000 {
            assert!(
                local
                    .decide("big", Some(1_000_000), Some(1), t, t, cause.clone())
                    .is_permit()
            );
        }
        assert!(
            local
                .decide("big", Some(1_000_000), Some(998_000), t, t, cause.clone())
                .is_permit()
        );
        assert!(
            !local
                .decide("big", Some(1_000_000), Some(1), t, t, cause)
                .is_permit()
        );
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
        let protocol = Protocol::new(config);
        assert_eq!(local.share_of(protocol.own_limit("k")), Some(10));
        assert_eq!(local.share_of(protocol.own_limit("j")), Some(200));
        let (cause, t) = (
            Unavailable::new(UnavailableKind::Timeout, "no reply"),
            Instant::ZERO,
        );
        let granted = (0..11)
            .filter(|_| {
                local
                    .decide("k", protocol.own_limit("k"), Some(1), t, t, cause.clone())
                    .is_permit()
            })
            .count();
        assert_eq!(granted, 10);
    }

    /// `n` single permits asked of `key` (own limit in force `own`) at `t`: how many were
    /// granted.
    fn granted(local: &LocalShare, key: &str, own: Option<u32>, n: u32, t: Instant) -> u32 {
        let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
        let mut granted = 0;
        for _ in 0..n {
            granted += u32::from(
                local
                    .decide(key, own, Some(1), t, t, cause.clone())
                    .is_permit(),
            );
        }
        granted
    }

    /// A live change of a key's limit changes its share within the local window: the permits
    /// granted in it count against the new share, so a lowering refuses the rest of the
    /// window, a raise frees room, and a clear gives the configured share back.
    #[test]
    fn the_share_follows_a_live_change_within_the_window() {
        let config = Config::of("t", 100, Duration::from_secs(1))
            .expect("a valid configuration")
            .with_fail_policy(FailPolicy::Local { share: 10 });
        let local = LocalShare::new(&config);
        let t = Instant::from_nanos(10);
        assert_eq!(granted(&local, "k", None, 5, t), 5);
        // Lowered live to 20: a share of 2, of which 5 are taken.
        assert_eq!(local.share_of(Some(20)), Some(2));
        assert_eq!(granted(&local, "k", Some(20), 3, t), 0);
        // Raised live to 1,000: a share of 100, 95 of it free.
        assert_eq!(granted(&local, "k", Some(1_000), 200, t), 95);
        // Cleared: the share of 10 again, the window over it.
        assert_eq!(granted(&local, "k", None, 3, t), 0);
        // Another key never changed keeps its share; the next window has the key's share.
        assert_eq!(granted(&local, "j", None, 20, t), 10);
        let next = Instant::from_nanos(1_000_000_000);
        assert_eq!(granted(&local, "k", None, 20, next), 10);
        assert_eq!(granted(&local, "k", Some(30), 20, next), 0);
        assert_eq!(granted(&local, "k", Some(50), 20, next), 0);
        assert_eq!(granted(&local, "k", Some(200), 20, next), 10);
    }

    /// A key with a configured limit changed live takes the live limit's share, and the
    /// configured one's again once the live limit is removed; a live limit far above every
    /// configured one, on the shortest period, scales the share uncut.
    #[test]
    fn a_configured_key_changed_live_and_back() {
        let config = Config::of("t", 10, Duration::from_micros(1))
            .and_then(|config| config.key_limit("paid", 100))
            .expect("a valid configuration")
            .with_fail_policy(FailPolicy::Local { share: 1 });
        let local = LocalShare::new(&config);
        let t = Instant::ZERO;
        assert_eq!(granted(&local, "paid", Some(100), 20, t), 10);
        let cause = Unavailable::new(UnavailableKind::Timeout, "no reply");
        let big = Some(50_000_000);
        assert_eq!(local.share_of(big), Some(5_000_000));
        assert!(
            local
                .decide("paid", big, Some(4_999_990), t, t, cause.clone())
                .is_permit()
        );
        assert_eq!(granted(&local, "paid", big, 2, t), 0);
        let next = Instant::from_nanos(1_000);
        assert_eq!(granted(&local, "paid", Some(100), 20, next), 10);
        // More than the share at once fails closed under the limit in force.
        assert_eq!(
            local.decide("paid", Some(100), Some(11), next, next, cause.clone()),
            Decision::Unavailable(cause)
        );
    }
}
