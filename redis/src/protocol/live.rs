//! Limits of their own set live: a key's limit changed on the server for every process
//! ([`set_key_limit_call`](Protocol::set_key_limit_call)), read together with the version of
//! the limit it belongs to ([`limits_call`](Protocol::limits_call)), and sent with each
//! attempt on the key.
//!
//! Every change bumps the version of the limit, as a change of the limiter's limit does, so a
//! process of an older version is told "changed" by its next attempt. A process that reads
//! live limits adopts a version only together with the live limits read in the same script
//! call: an attempt never carries a version with live limits of another, so every process
//! deciding a key at one version decides it by the same limit.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use super::Protocol;
use super::limit::{pack, unpack};
use super::live_restore::live_text;
use super::script_call::{KeyChangeArgs, LimitArgs, Own, ScriptCall, TailArgs};
use crate::config::ConfigError;
use crate::error::SharedError;
use crate::key::check_key;
use crate::script::ScriptReply;
use crate::unavailable::{Unavailable, UnavailableKind};

/// The keys' limits set live, as last read, with the limiter's limit and the version they
/// were read with.
#[derive(Debug, Default)]
pub(super) struct LiveLimits {
    /// The limiter's limit at `version`.
    pub(super) limit: u32,
    /// The version of the limit the keys were read at.
    pub(super) version: u32,
    /// Each key with a limit set live, and that limit.
    pub(super) keys: HashMap<Box<str>, u32>,
}

impl Protocol {
    /// The live limits as last read.
    pub(super) fn live_limits(&self) -> Arc<LiveLimits> {
        Arc::clone(&self.live.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Whether this process holds a live limit for some key.
    pub(super) fn holds_live(&self) -> bool {
        self.any_live.load(Ordering::Acquire) && !self.live_limits().keys.is_empty()
    }

    /// Whether this process reads live limits (see [`limits_due`](Protocol::limits_due)).
    pub(super) fn is_tracking(&self) -> bool {
        self.tracking.load(Ordering::Acquire)
    }

    /// `call`, made under the limit in effect, deciding `key` by its own limit if it has one:
    /// its live limit, with the limit and version the live limits were read with, else the
    /// configuration's.
    pub(super) fn deciding(&self, mut call: ScriptCall, key: &str) -> ScriptCall {
        // The call read the version first; a newer one is published only after the live
        // limits read with it, so these are at least as new.
        if self.any_live.load(Ordering::Acquire) {
            let live = self.live_limits();
            if call.limit.packed != pack(live.limit, live.version) {
                call.limit = LimitArgs::new(live.limit, live.version);
            }
            if let Some(&limit) = live.keys.get(key) {
                return call.owning(Some(Own::Live(limit)));
            }
        }
        let own = self.config.own_limit(key).map(Own::Built);
        call.owning(own)
    }

    /// Whether a reply told of a newer version of the limit that this process, reading live
    /// limits, has not adopted: the driver sends a [`limits_call`](Protocol::limits_call)
    /// before making the attempt again. Never, for a process that never read them (it adopts
    /// a newer version from the reply itself).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Config, Decision, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let call = protocol.limits_call();
    /// assert_eq!(protocol.limits_read(&call, Ok((&[2, 1_000, 1_000, 0], None))), Ok(1_000));
    /// let t = Instant::ZERO;
    /// // Another process changed a limit: version 1, which this one has not read.
    /// assert_eq!(protocol.finish("k", t, t, t, Ok(&[3, 5, 1, 1_000])), Decision::LimitChanged { limit: 5 });
    /// assert!(protocol.limits_due());
    /// assert_eq!(protocol.limit_version(), 0);
    /// let call = protocol.limits_call();
    /// assert_eq!(protocol.limits_read(&call, Ok((&[3, 5, 1, 1_000], Some("7 4:paid")))), Ok(1_000));
    /// assert!(!protocol.limits_due());
    /// assert_eq!((protocol.limit_version(), protocol.key_limit("paid")), (1, 7));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limits_due(&self) -> bool {
        self.is_tracking() && self.told.load(Ordering::Acquire) > self.limit_version()
    }

    /// The call that registers this process (as [`register_call`](Protocol::register_call)
    /// does) and reads the live limits with the version of the limit they belong to; give its
    /// reply to [`limits_read`](Protocol::limits_read). Its keys are the configuration key and
    /// the live limits' key ([`Config::live_limits_key`](crate::Config::live_limits_key)), in
    /// one hash slot.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let call = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?).limits_call();
    /// assert!(call.keys().eq(["fixed-window:{api}", "fixed-window:{api}/limits"]));
    /// assert!(call.args().eq(["1000000", "5", "1000", "limits", "1"]));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limits_call(&self) -> ScriptCall {
        let mut call = self.call(None, "limits");
        call.counter_keys = vec![self.config.live_limits_key()];
        call.positions = vec![0];
        call.attempts = String::from("1");
        call.origin = self.config.origin_arg().cloned();
        call
    }

    /// The outcome of a [`limits_call`](Protocol::limits_call) (or of a
    /// [`restore_call`](Protocol::restore_call)): its four numbers and the live limits' text,
    /// `None` if the server holds none (never set, or lost with its memory). Registered as by
    /// [`registered`](Protocol::registered); the live limits are adopted with the version they
    /// were read at (the call's, or the newer one the reply gives), and from then on this
    /// process adopts a newer version only with them.
    ///
    /// Except when they were lost: none stored at the version this process holds live limits
    /// at (or an older one), where every process at one version holds the same ones and a
    /// change stores them (empty at least). This process then keeps its own, and
    /// [`restore_call`](Protocol::restore_call) writes them back.
    ///
    /// # Errors
    ///
    /// As [`registered`](Protocol::registered); [`SharedError::Unavailable`] too if the live
    /// limits' text is malformed.
    ///
    /// # Examples
    ///
    /// See [`limits_due`](Protocol::limits_due).
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, SharedError};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let call = protocol.limits_call();
    /// assert!(matches!(protocol.limits_read(&call, Ok((&[2, 9, 9, 0], Some("7 4:pa")))), Err(SharedError::Unavailable { .. })));
    /// assert_eq!(protocol.limits_read(&call, Ok((&[3, 6, 2, 9], Some("50 4:paid1 2:vi")))), Ok(9));
    /// assert_eq!((protocol.key_limit("paid"), protocol.key_limit("vi"), protocol.key_limit("k")), (50, 1, 6));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn limits_read(
        &self,
        call: &ScriptCall,
        reply: Result<(&[i64], Option<&str>), Unavailable>,
    ) -> Result<u64, SharedError> {
        let unavailable = |cause| SharedError::Unavailable {
            name: self.config.name(),
            cause,
        };
        let (numbers, text) = reply.map_err(unavailable)?;
        let (limit, version, origin) = match ScriptReply::parse(numbers) {
            Some(ScriptReply::Registered { origin, .. }) => {
                let (limit, version) = unpack(call.limit.packed);
                let lost = text.is_none() && {
                    let live = self.live_limits();
                    !live.keys.is_empty() && live.version <= version
                };
                // Kept, to be written back (`restore_call`), not replaced by none.
                self.lost.store(lost, Ordering::Release);
                if lost {
                    self.registered_origin(origin);
                    return Ok(origin);
                }
                (limit, version, origin)
            }
            Some(ScriptReply::Changed {
                limit,
                version,
                origin,
            }) => (limit, version, origin),
            other => return Err(self.refused(other, "the read of the live limits")),
        };
        self.lost.store(false, Ordering::Release);
        let keys = parse_live(text.unwrap_or_default()).ok_or_else(|| {
            unavailable(Unavailable::new(
                UnavailableKind::Reply,
                "the live limits stored are malformed",
            ))
        })?;
        self.adopt_live(limit, version, keys);
        self.registered_origin(origin);
        Ok(origin)
    }

    /// Notes `origin`, read by a registration, on a cluster (where calls carry it).
    fn registered_origin(&self, origin: u64) {
        if let Some(registered) = &self.cluster {
            // The first registration's origin stays: a process counts on one grid.
            let _ = registered.set(origin.to_string().into());
        }
    }

    /// The call that changes `key`'s limit on the server for every process, live: to
    /// `limit`, or back to the limit the configuration gives the key (`None`). Its version of
    /// the limit goes up by one, the limiter's limit, period and origin kept; give its reply
    /// to [`key_limit_set`](Protocol::key_limit_set).
    ///
    /// # Errors
    ///
    /// [`SharedError::InvalidKey`] if `key` cannot name a counter; [`SharedError::Config`] if
    /// `limit` is 0, as when configuring. Nothing is sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, SharedError};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let call = protocol.set_key_limit_call("paid", Some(50))?;
    /// assert!(call.keys().eq(["fixed-window:{api}", "fixed-window:{api}/limits"]));
    /// assert!(call.args().eq(["1000000", "5", "1000", "key-limit", "1", "", "", "", "paid", "50"]));
    /// assert!(protocol.set_key_limit_call("paid", None)?.args().eq(["1000000", "5", "1000", "key-limit", "1", "", "", "", "paid", ""]));
    /// assert!(matches!(protocol.set_key_limit_call("paid", Some(0)), Err(SharedError::Config { .. })));
    /// assert!(matches!(protocol.set_key_limit_call("", Some(1)), Err(SharedError::InvalidKey { .. })));
    /// // A process holding live limits sends them too: what the change is made to where the
    /// // server lost them.
    /// let call = protocol.limits_call();
    /// protocol.limits_read(&call, Ok((&[3, 5, 1, 1_000], Some("7 4:paid"))))?;
    /// let call = protocol.set_key_limit_call("vip", Some(9))?;
    /// let args: Vec<&str> = call.args().collect();
    /// assert_eq!(args, ["1000000", "5", "1000", "key-limit", "1", "", "", "1", "vip", "9", "7 4:paid"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_key_limit_call(
        &self,
        key: &str,
        limit: Option<u32>,
    ) -> Result<ScriptCall, SharedError> {
        let name = self.config.name();
        check_key(key).map_err(|error| SharedError::InvalidKey { name, error })?;
        if limit == Some(0) {
            return Err(SharedError::Config {
                name,
                error: ConfigError::Settings(fixed_window::ConfigError::ZeroLimit),
            });
        }
        let mut call = self.limits_call();
        call.mode = "key-limit";
        call.origin = match &self.cluster {
            Some(registered) => registered.get().cloned(),
            None => self.config.origin_arg().cloned(),
        };
        call.tail = Some(Box::new(TailArgs::KeyChange(KeyChangeArgs {
            key: key.into(),
            limit: limit
                .map(|limit| limit.to_string())
                .unwrap_or_default()
                .into(),
            held: live_text(&self.live_limits().keys).into(),
        })));
        Ok(call)
    }

    /// The outcome of a [`set_key_limit_call`](Protocol::set_key_limit_call) for `key` and
    /// `limit`: the change is adopted by this process if no other change came between (its
    /// version is the next one), else read before its next attempt
    /// ([`limits_due`](Protocol::limits_due)).
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
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?.key_limit("paid", 50)?);
    /// protocol.key_limit_set("paid", Some(80), Ok(&[3, 5, 1, 1_000]))?;
    /// assert_eq!((protocol.key_limit("paid"), protocol.limit_version()), (80, 1));
    /// protocol.key_limit_set("paid", None, Ok(&[3, 5, 2, 1_000]))?;
    /// assert_eq!((protocol.key_limit("paid"), protocol.limit_version()), (50, 2));
    /// // Another change came between: read before the next attempt.
    /// protocol.key_limit_set("paid", Some(9), Ok(&[3, 5, 4, 1_000]))?;
    /// assert_eq!((protocol.key_limit("paid"), protocol.limits_due()), (50, true));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn key_limit_set(
        &self,
        key: &str,
        limit: Option<u32>,
        reply: Result<&[i64], Unavailable>,
    ) -> Result<(), SharedError> {
        let unavailable = |cause| SharedError::Unavailable {
            name: self.config.name(),
            cause,
        };
        match ScriptReply::parse(reply.map_err(unavailable)?) {
            Some(ScriptReply::Changed {
                limit: limiter_limit,
                version,
                ..
            }) => {
                self.adopt_next(limiter_limit, version, Some((key, limit)));
                Ok(())
            }
            other => Err(self.refused(other, "the change of a key's limit")),
        }
    }

    /// Adopts version `version` of the limit, `limit`, made by this process's own change
    /// (`change`: a key's live limit set or removed), if it is the next one after the
    /// version in effect: the live limits held, so changed, are then those of `version`.
    /// Otherwise another change came between, whose live limits are not known here: the
    /// version is noted, to be read.
    pub(super) fn adopt_next(&self, limit: u32, version: u32, change: Option<(&str, Option<u32>)>) {
        let current = self.limit_version();
        let live = self.live_limits();
        let next = current.checked_add(1) == Some(version)
            && (live.version == current || !self.any_live.load(Ordering::Acquire));
        if !next {
            self.tracking.store(true, Ordering::Release);
            self.told.fetch_max(version, Ordering::AcqRel);
            return;
        }
        let mut keys = live.keys.clone();
        match change {
            Some((key, Some(own))) => {
                keys.insert(key.into(), own);
            }
            Some((key, None)) => {
                keys.remove(key);
            }
            None => {}
        }
        self.adopt_live(limit, version, keys);
    }

    /// Adopts the live limits `keys` read at version `version` of the limit, `limit`, unless
    /// a newer version is in effect; the version with them if it is newer (see
    /// [`adopt`](Protocol::adopt)). From then on this process reads live limits.
    fn adopt_live(&self, limit: u32, version: u32, keys: HashMap<Box<str>, u32>) {
        // Held while the version is published, so that adoptions publish in order.
        let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
        self.tracking.store(true, Ordering::Release);
        if version < self.limit_version() {
            return;
        }
        if !keys.is_empty() {
            // Before the version: an attempt reading the new version finds it set.
            self.any_live.store(true, Ordering::Release);
        }
        *live = Arc::new(LiveLimits {
            limit,
            version,
            keys,
        });
        self.adopt_unchecked(limit, version);
    }
}

/// The live limits' text as the script stores it: `limit len:key` one after the other, `len`
/// the key's length in bytes. `None` if it is malformed.
pub(super) fn parse_live(mut text: &str) -> Option<HashMap<Box<str>, u32>> {
    let mut keys = HashMap::new();
    while !text.is_empty() {
        let (limit, rest) = text.split_once(' ')?;
        let (len, rest) = rest.split_once(':')?;
        let len: usize = len.parse().ok()?;
        let key = rest.get(..len).filter(|key| !key.is_empty())?;
        let limit = limit.parse::<u32>().ok().filter(|&limit| limit > 0)?;
        keys.insert(key.into(), limit);
        text = rest.get(len..)?;
    }
    Some(keys)
}

#[cfg(test)]
mod tests {
    use super::parse_live;

    #[test]
    fn the_live_limits_text_is_read_by_the_length_of_each_key() {
        let keys = parse_live("7 4:paid12 5:a b:c1 1: ").expect("well formed");
        assert_eq!(keys.len(), 3);
        assert_eq!(keys.get("paid"), Some(&7));
        assert_eq!(keys.get("a b:c"), Some(&12));
        assert_eq!(keys.get(" "), Some(&1));
        assert_eq!(parse_live("").map(|keys| keys.len()), Some(0));
        for malformed in ["7", "7 4:pai", "0 1:k", "x 1:k", "7 0:", "7 1:kk"] {
            assert_eq!(parse_live(malformed), None, "{malformed}");
        }
    }
}
