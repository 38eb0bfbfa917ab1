//! What the server's memory policy may take from a shared limiter: with a memory limit, every
//! policy but `noeviction` can evict its counters, and the `allkeys-*` policies its
//! configuration key too.

use std::sync::Arc;

/// The server evicts keys when its memory is full, and the limiter's may be among them: an
/// evicted counter forgets its window's count (up to `limit` more permits for that key in that
/// window), an evicted configuration key forgets the origin (the next attempt stores a new one,
/// and windows realign). Counters expire, so every evicting policy may take them; the
/// configuration key never expires, so only the `allkeys-*` policies take it.
///
/// A limiter reads the server's `maxmemory` and `maxmemory-policy` (`CONFIG GET`) when it
/// registers, if its user may, and reports this through
/// [`SharedRateLimiter::eviction_risk`](crate::SharedRateLimiter::eviction_risk) and a
/// [`SharedEvent::EvictionRisk`](crate::SharedEvent::EvictionRisk) to its listeners.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::EvictionRisk;
///
/// let risk = EvictionRisk::of("allkeys-lru", 1 << 30).expect("allkeys-lru evicts any key");
/// assert!(risk.configuration());
/// let risk = EvictionRisk::of("volatile-ttl", 1 << 30).expect("volatile-ttl evicts counters");
/// assert!(!risk.configuration());
/// assert_eq!(EvictionRisk::of("noeviction", 1 << 30), None); // writes fail instead
/// assert_eq!(EvictionRisk::of("allkeys-lru", 0), None); // no memory limit
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EvictionRisk {
    policy: Arc<str>,
    maxmemory: u64,
}

impl EvictionRisk {
    /// The risk on a server with `maxmemory` bytes at most (0: no limit) and the eviction
    /// `policy` named as `CONFIG GET maxmemory-policy` gives it; `None` if nothing of the
    /// limiter's can be evicted: no limit, or `noeviction` (under which a write past the limit
    /// fails with `OOM`, and the call is [`Unavailable`](crate::Unavailable) by the fail
    /// policy).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::EvictionRisk;
    ///
    /// let risk = EvictionRisk::of("volatile-lru", 100 << 20);
    /// assert_eq!(risk.map(|risk| (risk.maxmemory(), risk.configuration())), Some((100 << 20, false)));
    /// ```
    pub fn of(policy: &str, maxmemory: u64) -> Option<EvictionRisk> {
        if maxmemory == 0 || policy == "noeviction" {
            return None;
        }
        Some(EvictionRisk {
            policy: policy.into(),
            maxmemory,
        })
    }

    /// The server's eviction policy, such as `allkeys-lru`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::EvictionRisk;
    ///
    /// assert_eq!(EvictionRisk::of("allkeys-lfu", 1).map(|risk| risk.policy().to_owned()).as_deref(), Some("allkeys-lfu"));
    /// ```
    pub fn policy(&self) -> &str {
        &self.policy
    }

    /// The server's memory limit, in bytes.
    ///
    /// # Examples
    ///
    /// See [`EvictionRisk::of`].
    ///
    /// ```
    /// use fixed_window_redis::EvictionRisk;
    ///
    /// assert_eq!(EvictionRisk::of("allkeys-random", 42).map(|risk| risk.maxmemory()), Some(42));
    /// ```
    pub fn maxmemory(&self) -> u64 {
        self.maxmemory
    }

    /// Whether the configuration key may be evicted too (an `allkeys-*` policy): the origin
    /// is then lost, and windows realign on the next attempt. Counters may be evicted under
    /// every policy that makes a risk.
    ///
    /// # Examples
    ///
    /// See [`EvictionRisk`].
    ///
    /// ```
    /// use fixed_window_redis::EvictionRisk;
    ///
    /// assert_eq!(EvictionRisk::of("allkeys-random", 1).map(|risk| risk.configuration()), Some(true));
    /// ```
    pub fn configuration(&self) -> bool {
        self.policy.starts_with("allkeys-")
    }
}
