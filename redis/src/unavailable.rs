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
    /// The limiter has not registered with the server yet (it was started while the server
    /// was unreachable, and no registration has succeeded since), so the attempt was not sent;
    /// the message says why the last registration failed.
    NotRegistered,
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
            UnavailableKind::Timeout | UnavailableKind::Connection | UnavailableKind::Reply => true,
            UnavailableKind::Server | UnavailableKind::NotRegistered => false,
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
            UnavailableKind::NotRegistered => "not registered",
        };
        write!(f, "{kind}: {}", self.message)
    }
}

impl std::error::Error for Unavailable {}

/// The cause a redis-rs error stands for: a timeout; a reply the script never returns (one
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
        let kind = if err.is_timeout() {
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
        Unavailable::new(kind, err.to_string())
    }
}
