//! Limits of their own for some keys: a map given at build and a function of the key; every
//! other key has the limiter's limit, its default. The words and shapes are the keyed
//! limiter's (`KeyedBuilder::key_limit`, `key_limits`).

use core::fmt;
use core::num::NonZeroU32;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::{Config, ConfigError};

/// A rule giving some keys a limit of their own: `None` leaves a key the default.
type LimitRule = Arc<dyn Fn(&str) -> Option<NonZeroU32> + Send + Sync>;

/// The keys' own limits, as a configuration holds them (shared by its clones).
#[derive(Clone, Default)]
pub(crate) struct KeyLimits {
    /// Limits given to single keys at build.
    map: Arc<BTreeMap<Box<str>, NonZeroU32>>,
    /// A function of the key, asked when the map has no limit for it.
    rule: Option<LimitRule>,
}

impl KeyLimits {
    /// The key's own limit, if it has one: the map's, else the rule's.
    #[inline]
    pub(crate) fn own(&self, key: &str) -> Option<u32> {
        if self.map.is_empty() && self.rule.is_none() {
            return None;
        }
        self.map
            .get(key)
            .copied()
            .or_else(|| self.rule.as_ref().and_then(|rule| rule(key)))
            .map(NonZeroU32::get)
    }
}

impl KeyLimits {
    /// Whether no key has a limit of its own.
    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty() && self.rule.is_none()
    }
}

impl PartialEq for KeyLimits {
    /// The same map, and the same rule (the one function, shared by clones) or none.
    fn eq(&self, other: &KeyLimits) -> bool {
        let same_rule = match (&self.rule, &other.rule) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_rule && self.map == other.map
    }
}

impl Eq for KeyLimits {}

impl fmt::Debug for KeyLimits {
    // Counts only: a tenant's key may not belong in a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyLimits")
            .field("own", &self.map.len())
            .field("rule", &self.rule.is_some())
            .finish()
    }
}

impl Config {
    /// This configuration giving `key` a limit of its own, `limit` permits per window, in
    /// place of the limiter's (which stays every other key's); a later entry for the same key
    /// replaces an earlier one. As the limit and period, a key's own limit is shared: every
    /// process must decide the key by the same limit, or its attempts on the key get
    /// [`SharedError::Conflict`](crate::SharedError::Conflict) until the key's window ends
    /// (see docs/rules.md).
    ///
    /// # Errors
    ///
    /// [`ConfigError::Settings`] if `limit` is 0, as for the limiter's limit.
    ///
    /// # Examples
    ///
    /// A paid tenant with ten times the default.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, ConfigError, Protocol};
    ///
    /// let config = Config::of("tenants", 100, Duration::from_secs(3600))?.key_limit("paid", 1000)?;
    /// let protocol = Protocol::new(config.clone());
    /// assert_eq!((protocol.key_limit("paid"), protocol.key_limit("free")), (1000, 100));
    /// let zero = fixed_window::ConfigError::ZeroLimit;
    /// assert_eq!(config.key_limit("other", 0), Err(ConfigError::Settings(zero)));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn key_limit(mut self, key: &str, limit: u32) -> Result<Config, ConfigError> {
        let limit = NonZeroU32::new(limit)
            .ok_or(ConfigError::Settings(fixed_window::ConfigError::ZeroLimit))?;
        Arc::make_mut(&mut self.key_limits.map).insert(key.into(), limit);
        Ok(self)
    }

    /// This configuration asking `rule` for the limit of each key that has none of its own in
    /// the map ([`key_limit`](Config::key_limit)); `None` leaves the key the limiter's
    /// limit. The rule is asked on every attempt on such a key, so it should be cheap and
    /// give a key the same answer each time; every process must give each key the same answer
    /// (see [`key_limit`](Config::key_limit)).
    ///
    /// # Examples
    ///
    /// Keys named `admin-*` get 50 permits a window, every other key 5.
    ///
    /// ```
    /// use core::num::NonZeroU32;
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let config = Config::of("users", 5, Duration::from_secs(1))?
    ///     .key_limits(|key| key.starts_with("admin-").then_some(NonZeroU32::new(50)?));
    /// let protocol = Protocol::new(config);
    /// assert_eq!((protocol.key_limit("admin-ada"), protocol.key_limit("bob")), (50, 5));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    #[must_use]
    pub fn key_limits(
        mut self,
        rule: impl Fn(&str) -> Option<NonZeroU32> + Send + Sync + 'static,
    ) -> Config {
        self.key_limits.rule = Some(Arc::new(rule));
        self
    }

    /// The keys' own limits (a clone shares the map and rule).
    pub(crate) fn own_limits(&self) -> KeyLimits {
        self.key_limits.clone()
    }

    /// The key's own limit, if it has one (see [`key_limit`](Config::key_limit)).
    #[inline]
    pub(crate) fn own_limit(&self, key: &str) -> Option<u32> {
        self.key_limits.own(key)
    }
}
