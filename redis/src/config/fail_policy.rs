//! What a call gets when the server cannot decide.

/// What the caller sees when the server cannot decide (a connection error, a timeout, a
/// server error, credentials refused, a limiter not registered yet).
///
/// | policy | while the server cannot decide | bound per key |
/// |---|---|---|
/// | `Closed` | [`SharedError::Unavailable`](crate::SharedError::Unavailable) | no permit |
/// | `Open` | a permit nobody counts | none |
/// | `Local { share }` | this process's own fixed window: `share` permits per period | `share` per window of the process's grid, per process |
///
/// # Examples
///
/// ```
/// use fixed_window_redis::FailPolicy;
///
/// assert_eq!(FailPolicy::default(), FailPolicy::Closed);
/// // Four replicas sharing a limit of 100: a quarter each while the server is away.
/// let local = FailPolicy::Local { share: 25 };
/// assert_ne!(local, FailPolicy::Open);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
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
    /// Fail open with a bound: while the server cannot decide, this process limits each key
    /// itself, by an in-process fixed window of the limiter's period on its own grid (its
    /// clock's timeline), with `share` permits per window; each call asks the server first,
    /// so the server decides again as soon as it answers. A permit so granted is marked as
    /// granted without the server ([`SharedPermit::failed_open`](crate::SharedPermit::failed_open));
    /// a key whose local window is full is rejected (`retry_after` to its end) or waits for
    /// it, as by the server.
    ///
    /// The bound during an outage, per key: each process grants at most `share` per window
    /// of its grid, so all together at most `processes × share` per period-long window of
    /// one process's grid; a window of the server's grid overlaps two of a process's, so at
    /// most `2 × processes × share` in it. Choose `share` as the limit divided by the
    /// processes to keep an outage near the limit. A share of 0 fails closed. Drains
    /// ([`drain`](crate::SharedRateLimiter::drain)) and calls for more than `share` permits
    /// at once fail closed. The local count is not carried to the server when it returns.
    Local {
        /// The permits per key per window this process grants while the server cannot
        /// decide; a key with a limit of its own takes it scaled to that limit
        /// ([`LocalShare::key_share`](crate::LocalShare::key_share)).
        share: u32,
    },
}
