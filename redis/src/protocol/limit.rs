//! The limit in effect and its version, and changes of it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use super::Protocol;
use super::script_call::{LimitArgs, ScriptCall};
use crate::config::ConfigError;
use crate::error::SharedError;
use crate::script::ScriptReply;
use crate::unavailable::Unavailable;

impl Protocol {
    /// The limit in effect: the configured one, until a change is learnt from the server (a
    /// [`Decision::LimitChanged`](crate::Decision::LimitChanged), [`registered`](Protocol::registered) or
    /// [`limit_set`](Protocol::limit_set)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!((protocol.limit(), protocol.limit_version()), (5, 0));
    /// // The server says the limit is 8 since its second change.
    /// assert_eq!(protocol.registered(Ok(&[3, 8, 2, 1_000])), Ok(1_000));
    /// assert_eq!((protocol.limit(), protocol.limit_version()), (8, 2));
    /// assert_eq!(protocol.config().limit(), 5); // as configured
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limit(&self) -> u32 {
        unpack(self.current.load(Ordering::Acquire)).0
    }

    /// The limit in effect for `key`: its own, set live on the server
    /// ([`set_key_limit_call`](Protocol::set_key_limit_call)) or else given by the
    /// configuration ([`Config::key_limit`](crate::Config::key_limit), else
    /// [`Config::key_limits`](crate::Config::key_limits)), else the limiter's
    /// [`limit`](Protocol::limit).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?.key_limit("paid", 50)?);
    /// assert_eq!((protocol.key_limit("paid"), protocol.key_limit("free")), (50, 5));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn key_limit(&self, key: &str) -> u32 {
        self.own_limit(key).unwrap_or_else(|| self.limit())
    }

    /// The limit of its own `key` has in effect, if it has one: its live limit
    /// ([`set_key_limit_call`](Protocol::set_key_limit_call)), else the configuration's
    /// ([`Config::key_limit`](crate::Config::key_limit), else
    /// [`Config::key_limits`](crate::Config::key_limits)); `None` for a key decided by the
    /// limiter's [`limit`](Protocol::limit). The limit a key's local share scales to
    /// ([`LocalShare::decide`](crate::LocalShare::decide)).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?.key_limit("paid", 50)?);
    /// let call = protocol.limits_call();
    /// assert_eq!(protocol.limits_read(&call, Ok((&[3, 5, 1, 1_000], Some("7 4:free")))), Ok(1_000));
    /// assert_eq!((protocol.own_limit("paid"), protocol.own_limit("free"), protocol.own_limit("k")), (Some(50), Some(7), None));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn own_limit(&self, key: &str) -> Option<u32> {
        if self.any_live.load(Ordering::Acquire)
            && let Some(&limit) = self.live_limits().keys.get(key)
        {
            return Some(limit);
        }
        self.config.own_limit(key)
    }

    /// The version of the limit in effect: 0 for the configured limit, then the version the
    /// server gave the last change learnt.
    ///
    /// # Examples
    ///
    /// See [`limit`](Protocol::limit).
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// assert_eq!(Protocol::new(Config::of("api", 5, Duration::from_secs(1))?).limit_version(), 0);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limit_version(&self) -> u32 {
        unpack(self.current.load(Ordering::Acquire)).1
    }

    /// The call that changes the shared limit to `limit` on the server: it stores `limit`
    /// with the next version of the limit, keeping the stored period and origin; give its
    /// reply to [`limit_set`](Protocol::limit_set). Every process learns the change from its
    /// next attempt (see [`Decision::LimitChanged`](crate::Decision::LimitChanged)).
    ///
    /// # Errors
    ///
    /// [`ConfigError::Settings`] if `limit` is 0, as when configuring.
    ///
    /// # Examples
    ///
    /// See [`ScriptCall::limit_version`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!(protocol.set_limit_call(0).unwrap_err().field(), "limit");
    /// let call = protocol.set_limit_call(8)?;
    /// assert!(call.keys().eq(["fixed-window:{api}"]));
    /// assert_eq!(call.args().nth(3), Some("limit"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_limit_call(&self, limit: u32) -> Result<ScriptCall, ConfigError> {
        // Core's rule for a limit, as at build.
        fixed_window::Settings::new(self.config.name(), limit, self.config.period())?;
        let mut call = self.call(None, "limit");
        call.limit = LimitArgs::new(limit, self.limit_version());
        call.origin = match &self.cluster {
            Some(registered) => registered.get().cloned(),
            None => self.config.origin_arg().cloned(),
        };
        Ok(call)
    }

    /// The outcome of a [`set_limit_call`](Protocol::set_limit_call): the limit now in effect,
    /// adopted by this process (unless it learnt a still newer one meanwhile).
    ///
    /// # Errors
    ///
    /// [`SharedError::Conflict`] if the server holds another period; [`SharedError::Unavailable`]
    /// if the server could not answer (whatever the fail policy): the limit may or may not
    /// have changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, SharedError};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!(protocol.limit_set(Ok(&[3, 2, 1, 1_000])), Ok(2));
    /// assert_eq!(protocol.limit(), 2);
    /// let conflict = protocol.limit_set(Ok(&[-1, 2_000_000, 2, 1_000]));
    /// assert!(matches!(conflict, Err(SharedError::Conflict(c)) if c.stored_period == Duration::from_secs(2)));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limit_set(&self, reply: Result<&[i64], Unavailable>) -> Result<u32, SharedError> {
        let unavailable = |cause| SharedError::Unavailable {
            name: self.config.name(),
            cause,
        };
        match ScriptReply::parse(reply.map_err(unavailable)?) {
            Some(ScriptReply::Changed { limit, version, .. }) => {
                if self.is_tracking() {
                    // The live limits read are still those of the new version if it is the
                    // next one; otherwise another change came between, and they are read
                    // again before the next attempt.
                    self.adopt_next(limit, version, None);
                    return Ok(limit);
                }
                self.adopt(limit, version);
                Ok(self.limit())
            }
            other => Err(self.refused(other, "the change of the limit")),
        }
    }

    /// Adopts `limit` of `version` if that is newer than the one in effect, forgetting every
    /// window remembered full (under a higher limit it may have room) and dropping every
    /// leased share (counted under the old limit). Whether it did. A process that reads live
    /// limits does not adopt a version without them: it notes it, for its driver to read
    /// them ([`limits_due`](Protocol::limits_due)).
    pub(super) fn adopt(&self, limit: u32, version: u32) -> bool {
        if self.is_tracking() {
            self.told.fetch_max(version, Ordering::AcqRel);
            return false;
        }
        self.adopt_unchecked(limit, version)
    }

    /// [`adopt`](Protocol::adopt), whether or not live limits are read.
    pub(super) fn adopt_unchecked(&self, limit: u32, version: u32) -> bool {
        let new = pack(limit, version);
        let mut current = self.current.load(Ordering::Acquire);
        loop {
            if unpack(current).1 >= version {
                return false;
            }
            match self.current.compare_exchange_weak(
                current,
                new,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(seen) => current = seen,
            }
        }
        self.memory.clear();
        if let Some((shares, _)) = &self.leasing {
            shares.drop_all();
        }
        true
    }

    /// The script's arguments for the limit in effect.
    pub(super) fn limit_args(&self) -> Arc<LimitArgs> {
        let current = self.current.load(Ordering::Acquire);
        if current == self.configured.packed {
            return Arc::clone(&self.configured);
        }
        let mut changed = self.changed.lock().unwrap_or_else(PoisonError::into_inner);
        match &*changed {
            Some(args) if args.packed == current => Arc::clone(args),
            _ => {
                let (limit, version) = unpack(current);
                let args = LimitArgs::new(limit, version);
                *changed = Some(Arc::clone(&args));
                args
            }
        }
    }
}

/// A limit and its version in one word, the version above.
pub(super) fn pack(limit: u32, version: u32) -> u64 {
    u64::from(version) << 32 | u64::from(limit)
}

/// `(limit, version)` of a packed word.
pub(super) fn unpack(packed: u64) -> (u32, u32) {
    // Each half is one u32.
    #[allow(clippy::cast_possible_truncation)]
    (packed as u32, (packed >> 32) as u32)
}
