//! What a call gets when the server cannot decide.

/// What the caller sees when the server cannot decide (a connection error, a timeout, a
/// server error).
///
/// # Examples
///
/// ```
/// use fixed_window_redis::FailPolicy;
///
/// assert_eq!(FailPolicy::default(), FailPolicy::Closed);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FailPolicy {
    /// The call fails with [`SharedError::Unavailable`](crate::SharedError::Unavailable): no
    /// permit without the server's count.
    #[default]
    Closed,
    /// The call gets a permit marked as granted without the server
    /// ([`SharedPermit::failed_open`](crate::SharedPermit::failed_open)), and listeners get a
    /// [`SharedEvent::Unavailable`](crate::SharedEvent::Unavailable) saying so. Such permits are
    /// not counted anywhere: while the server is unreachable there is no limit.
    Open,
}
