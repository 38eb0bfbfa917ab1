//! The Redis keys a limiter's configuration names: its configuration key and each client
//! key's counter, on one node and on a cluster.

use crate::config::{Config, PREFIX};

impl Config {
    /// The Redis key holding the shared configuration: `fixed-window:{<name>}`. On one node,
    /// every key of the limiter carries the name as its hash tag
    /// ([`counter_key`](Config::counter_key)), so a call may read them all; on a cluster, the
    /// counters are tagged by their own keys ([`cluster_counter_key`](Config::cluster_counter_key)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let config = fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.config_key(), "fixed-window:{api}");
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn config_key(&self) -> &str {
        &self.stored_key
    }

    /// The Redis key holding the keys' limits set live
    /// ([`SharedRateLimiter::set_key_limit`](crate::SharedRateLimiter::set_key_limit)):
    /// `fixed-window:{<name>}/limits`, in the hash slot of the configuration key, so that one
    /// script call reads both; no counter key is ever named so (a counter's key follows the
    /// tag with `:`). It never expires.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let config = fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.live_limits_key(), "fixed-window:{api}/limits");
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn live_limits_key(&self) -> String {
        format!("{}/limits", self.stored_key)
    }

    /// The Redis key holding `key`'s counter on one node: `fixed-window:{<name>}:<key>`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let config = fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.counter_key("client-7"), "fixed-window:{api}:client-7");
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn counter_key(&self, key: &str) -> String {
        let mut counter = String::with_capacity(self.stored_key.len() + 1 + key.len());
        counter.push_str(&self.stored_key);
        counter.push(':');
        counter.push_str(key);
        counter
    }

    /// The Redis key holding `key`'s counter on a cluster: `fixed-window:<name>:{<key>}`. The
    /// client key is the hash tag, so each counter is in the slot of its key, and a limiter's
    /// counters spread over every primary. (A name has no `{`, so the name part of a counter
    /// key ends where its tag begins, and no two limiters' keys are the same.)
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let config = fixed_window_redis::Config::of("api", 1, Duration::from_secs(1))?;
    /// assert_eq!(config.cluster_counter_key("client-7"), "fixed-window:api:{client-7}");
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn cluster_counter_key(&self, key: &str) -> String {
        let name = self.name();
        let mut counter = String::with_capacity(PREFIX.len() + name.len() + key.len() + 3);
        counter.push_str(PREFIX);
        counter.push_str(name);
        counter.push_str(":{");
        counter.push_str(key);
        counter.push('}');
        counter
    }
}
