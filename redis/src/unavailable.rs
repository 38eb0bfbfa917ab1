//! Why the server could not decide an attempt.

use core::fmt;
use std::sync::Arc;

/// What kind of failure made the server unable to decide.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::UnavailableKind;
///
/// assert!(UnavailableKind::Timeout.may_have_counted());
/// assert!(!UnavailableKind::Server.may_have_counted());
/// assert!(!UnavailableKind::NotRegistered.may_have_counted()); // nothing was sent
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnavailableKind {
    /// No reply within the configured timeout (a slow or paused server, a lost packet).
    Timeout,
    /// The connection could not be made, or broke during the call.
    Connection,
    /// The server answered with an error (read-only replica, out of memory, loading, a script
    /// error).
    Server,
    /// The server answered something the script never returns.
    Reply,
    /// The server or the TLS handshake refused this client: a wrong user name or password, an
    /// ACL that forbids a command or key the limiter needs, or a server certificate the client
    /// does not trust. Nothing ran. The limiter makes a new connection after a back-off (at
    /// most 500 ms) while calls come, so it decides again once the credentials, the ACL or the
    /// certificates work; a rotated password is given with
    /// [`SharedRateLimiter::set_client`](crate::SharedRateLimiter::set_client).
    Denied,
    /// The limiter has not registered with the server yet (it was started while the server
    /// was unreachable, and no registration has succeeded since), so the attempt was not sent;
    /// the message says why the last registration failed.
    NotRegistered,
    /// The script ran, but fewer replicas than the configuration asks for
    /// ([`Config::with_wait_for_replicas`](crate::Config::with_wait_for_replicas)) acknowledged
    /// its writes in time: what it counted may be lost if its primary fails over now, so no
    /// permit rests on it.
    Unreplicated,
}

impl UnavailableKind {
    /// Whether the script may have run and counted although the caller got no answer. A
    /// timeout or a broken connection can lose the reply of a script that ran; a server error
    /// comes before the script writes anything, and an attempt of a limiter not registered
    /// yet is never sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::UnavailableKind;
    ///
    /// assert!(UnavailableKind::Connection.may_have_counted());
    /// ```
    pub fn may_have_counted(self) -> bool {
        match self {
            UnavailableKind::Timeout
            | UnavailableKind::Connection
            | UnavailableKind::Reply
            | UnavailableKind::Unreplicated => true,
            UnavailableKind::Server | UnavailableKind::Denied | UnavailableKind::NotRegistered => {
                false
            }
        }
    }
}

/// The cause of an attempt the server could not decide: its kind and the client library's
/// message.
///
/// Cheap to clone (the message is shared), so events and errors can each carry it.
///
/// # Examples
///
/// A driver other than the production client (a simulator) makes its own.
///
/// ```
/// use fixed_window_redis::{Unavailable, UnavailableKind};
///
/// let cause = Unavailable::new(UnavailableKind::Timeout, "no reply within 250ms");
/// assert_eq!(cause.kind(), UnavailableKind::Timeout);
/// assert_eq!(cause.to_string(), "timeout: no reply within 250ms");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unavailable {
    kind: UnavailableKind,
    message: Arc<str>,
}

impl Unavailable {
    /// A cause of `kind` described by `message`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{Unavailable, UnavailableKind};
    ///
    /// let cause = Unavailable::new(UnavailableKind::Connection, "connection refused");
    /// assert_eq!(cause.message(), "connection refused");
    /// ```
    pub fn new(kind: UnavailableKind, message: impl Into<Arc<str>>) -> Unavailable {
        Unavailable {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure it was.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{Unavailable, UnavailableKind};
    ///
    /// assert_eq!(Unavailable::new(UnavailableKind::Reply, "[7]").kind(), UnavailableKind::Reply);
    /// ```
    pub fn kind(&self) -> UnavailableKind {
        self.kind
    }

    /// The client library's description of it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{Unavailable, UnavailableKind};
    ///
    /// assert_eq!(Unavailable::new(UnavailableKind::Server, "READONLY").message(), "READONLY");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the script may have counted this attempt although no answer came back
    /// (see [`UnavailableKind::may_have_counted`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{Unavailable, UnavailableKind};
    ///
    /// assert!(Unavailable::new(UnavailableKind::Timeout, "").may_have_counted());
    /// ```
    pub fn may_have_counted(&self) -> bool {
        self.kind.may_have_counted()
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            UnavailableKind::Timeout => "timeout",
            UnavailableKind::Connection => "connection",
            UnavailableKind::Server => "server error",
            UnavailableKind::Reply => "unexpected reply",
            UnavailableKind::Denied => "access denied",
            UnavailableKind::NotRegistered => "not registered",
            UnavailableKind::Unreplicated => "not replicated",
        };
        write!(f, "{kind}: {}", self.message)
    }
}

impl std::error::Error for Unavailable {}

/// The cause a redis-rs error stands for: access denied (authentication failed, an ACL
/// refusal, an untrusted server certificate); a timeout; a reply the script never returns (one
/// that does not convert to the expected type, or that redis-rs cannot parse); a connection
/// error (I/O, a dropped or refused connection, an error the connection cannot recover from);
/// anything else the server's.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::{Unavailable, UnavailableKind};
///
/// let err = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
/// assert_eq!(Unavailable::from(&err).kind(), UnavailableKind::Connection);
/// let err = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
/// assert_eq!(Unavailable::from(&err).kind(), UnavailableKind::Timeout);
/// // An `OK` where the script's array of integers was expected.
/// let wrong = redis::from_redis_value::<Vec<i64>>(redis::Value::Okay).unwrap_err();
/// assert_eq!(Unavailable::from(&redis::RedisError::from(wrong)).kind(), UnavailableKind::Reply);
/// ```
impl From<&redis::RedisError> for Unavailable {
    fn from(err: &redis::RedisError) -> Unavailable {
        let kind = if denied(err) {
            UnavailableKind::Denied
        } else if err.is_timeout() {
            UnavailableKind::Timeout
        } else if matches!(
            err.kind(),
            redis::ErrorKind::Parse | redis::ErrorKind::UnexpectedReturnType
        ) {
            // Checked before the connection errors: redis-rs counts a parse error as one the
            // connection cannot recover from (it reconnects), but what the caller learns is
            // that the answer was not the script's.
            UnavailableKind::Reply
        } else if err.is_io_error()
            || err.is_connection_dropped()
            || err.is_connection_refusal()
            || err.is_unrecoverable_error()
        {
            UnavailableKind::Connection
        } else {
            UnavailableKind::Server
        };
        let message = if kind == UnavailableKind::Denied && script_denied(err) {
            format!(
                "{err} (the script runs TIME, GET and SET on the limiter's keys: the user needs \
                 them, with EVALSHA and SCRIPT LOAD)"
            )
        } else {
            err.to_string()
        };
        Unavailable::new(kind, message)
    }
}

/// Whether the server (or the TLS handshake) refused this client: no retry over the same
/// connection helps until the credentials, the ACL or the trusted certificates change, and
/// the connection is made anew (see `renewal`).
pub(crate) fn denied(err: &redis::RedisError) -> bool {
    if err.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(err.code(), Some("NOAUTH" | "NOPERM" | "WRONGPASS"))
    {
        return true;
    }
    script_denied(err) || untrusted_certificate(err)
}

/// A command the script runs that the user may not: Redis 7.0 reports it as a plain error
/// from the script, naming the script's line rather than the command.
fn script_denied(err: &redis::RedisError) -> bool {
    err.detail()
        .is_some_and(|detail| detail.contains("can't run this command"))
}

/// Whether the TLS handshake failed on the server's certificate (rustls's error, carried in
/// the I/O error redis-rs returns; or, from redis-rs's cluster client, which keeps only the
/// text of the first node's error, rustls's words for it).
#[cfg(feature = "tls")]
fn untrusted_certificate(err: &redis::RedisError) -> bool {
    use std::error::Error;

    let rejected = |error: &(dyn Error + 'static)| {
        error.downcast_ref::<rustls::Error>().is_some_and(|tls| {
            matches!(
                tls,
                rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented
            )
        })
    };
    let mut next = err.source();
    while let Some(mut error) = next {
        // redis-rs keeps the I/O error behind an `Arc`, and `io::Error` keeps rustls's inside.
        if let Some(shared) = error.downcast_ref::<std::sync::Arc<dyn Error + Send + Sync>>() {
            error = &**shared;
        }
        let inner = error
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref);
        if rejected(error) || inner.is_some_and(|inner| rejected(inner)) {
            return true;
        }
        next = error.source();
    }
    err.kind() == redis::ErrorKind::Io
        && err.detail().is_some_and(|detail| {
            detail.contains("invalid peer certificate")
                || detail.contains("peer sent no certificates")
        })
}

/// Without TLS there is no certificate to distrust.
#[cfg(not(feature = "tls"))]
fn untrusted_certificate(_: &redis::RedisError) -> bool {
    false
}
