//! Registering a process: storing or adopting the shared configuration.

use core::time::Duration;

use fixed_window::Instant;

use super::{Decision, Protocol, ScriptCall};
use crate::error::SharedError;
use crate::script::ScriptReply;
use crate::unavailable::{Unavailable, UnavailableKind};

/// How often (at most) an active limiter reads the configuration again in the background, so
/// that a change of the limit made by another process reaches it: on a cluster, where
/// attempts do not read the configuration, even on keys whose counters no process of the new
/// limit has written; on one node, while it remembers windows full, which it rejects without
/// asking the server (a raise may have given them room); under a lease, whose shares are
/// spent without asking it (a change drops them); and while it holds keys' limits set live,
/// so that it finds them lost with the server's memory and writes them back
/// ([`Protocol::restore_call`]).
pub const LIMIT_REFRESH: Duration = Duration::from_secs(1);

impl Protocol {
    /// Whether a limiter that last read the configuration (or was made) at `last` reads it
    /// again at `now`, in the background: on a cluster, while it remembers windows full,
    /// under a lease (shares are spent without asking the server), or while it holds live
    /// limits (to find them lost), once [`LIMIT_REFRESH`] has passed.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Config, LIMIT_REFRESH, Protocol};
    ///
    /// let config = Config::of("api", 5, Duration::from_secs(1))?;
    /// let (made, later) = (Instant::ZERO, Instant::ZERO.saturating_add(LIMIT_REFRESH));
    /// // One node with nothing remembered asks the server at every attempt anyway.
    /// assert!(!Protocol::new(config.clone()).refresh_due(made, later));
    /// let cluster = Protocol::for_cluster(config);
    /// assert!(!cluster.refresh_due(made, Instant::from_nanos(1)));
    /// assert!(cluster.refresh_due(made, later));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn refresh_due(&self, last: Instant, now: Instant) -> bool {
        // Asked at every attempt: the count of windows remembered visits every shard of their
        // map under its lock, so it is asked last, when the cheaper tests have not settled it
        // (a leased grant is otherwise a few atomic operations).
        now >= last.saturating_add(LIMIT_REFRESH)
            && (self.is_cluster()
                || self.leasing.is_some()
                || self.holds_live()
                || self.remembered() > 0)
    }

    /// The call that stores this process's configuration on the server if none is stored
    /// (fixing the shared origin), or checks it against the stored one, without counting.
    ///
    /// # Examples
    ///
    /// See [`ScriptCall::args`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let call = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?).register_call();
    /// assert_eq!(call.args().nth(3), Some("register"));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn register_call(&self) -> ScriptCall {
        let mut call = self.call(None, "register");
        call.origin = self.config.origin_arg().cloned();
        call
    }

    /// The outcome of a [`register_call`](Protocol::register_call): the shared origin, in
    /// microseconds on the server's clock.
    ///
    /// # Errors
    ///
    /// [`SharedError::Conflict`] if the server holds a different configuration,
    /// [`SharedError::Unavailable`] if the server could not answer (whatever the fail policy:
    /// there is nothing to permit yet).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, SharedError};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// assert_eq!(protocol.registered(Ok(&[2, 1_000, 1_000, 0])), Ok(1_000));
    /// let conflict = protocol.registered(Ok(&[-1, 1_000_000, 6, 1_000]));
    /// assert!(matches!(conflict, Err(SharedError::Conflict(c)) if c.stored_limit == 6));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn registered(&self, reply: Result<&[i64], Unavailable>) -> Result<u64, SharedError> {
        let unavailable = |cause| SharedError::Unavailable {
            name: self.config.name(),
            cause,
        };
        match ScriptReply::parse(reply.map_err(unavailable)?) {
            Some(ScriptReply::Registered { origin, .. }) => {
                if let Some(registered) = &self.cluster {
                    // The first registration's origin stays: a process counts on one grid.
                    let _ = registered.set(origin.to_string().into());
                }
                Ok(origin)
            }
            // The limit was changed since this process learnt it: registered, under the
            // stored limit.
            Some(ScriptReply::Changed {
                limit,
                version,
                origin,
            }) => {
                self.adopt(limit, version);
                if let Some(registered) = &self.cluster {
                    let _ = registered.set(origin.to_string().into());
                }
                Ok(origin)
            }
            other => Err(self.refused(other, "the registration")),
        }
    }

    /// The decision on an attempt made while this process is not registered (see
    /// [`Registration`](crate::Registration)): nothing is sent, and the fail policy answers,
    /// with an [`UnavailableKind::NotRegistered`] cause carrying `cause`, why the last
    /// registration failed. Nothing is remembered: the attempts of a registered process are
    /// decided by [`begin`](Protocol::begin) and [`finish`](Protocol::finish) as before.
    ///
    /// # Examples
    ///
    /// Fail closed, the call fails; fail open, it gets a flagged permit nobody counted.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Decision, FailPolicy, Protocol, Unavailable, UnavailableKind};
    ///
    /// let config = Config::of("api", 1, Duration::from_secs(1))?;
    /// let refused = Unavailable::new(UnavailableKind::Connection, "connection refused");
    /// let Decision::Unavailable(cause) = Protocol::new(config.clone()).unregistered(&refused) else {
    ///     panic!("fail closed answers Unavailable");
    /// };
    /// assert_eq!(cause.kind(), UnavailableKind::NotRegistered);
    /// assert_eq!(cause.to_string(), "not registered: connection: connection refused");
    /// let open = Protocol::new(config.with_fail_policy(FailPolicy::Open));
    /// assert!(matches!(open.unregistered(&refused), Decision::FailedOpen(_)));
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn unregistered(&self, cause: &Unavailable) -> Decision {
        self.unavailable(Unavailable::new(
            UnavailableKind::NotRegistered,
            cause.to_string(),
        ))
    }
}
