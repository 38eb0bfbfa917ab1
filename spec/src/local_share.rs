//! The local share of `FailPolicy::Local { share }` per key (`docs/rules.md`: The shared
//! limiter, limits per key): a key without a limit of its own takes `share` per window of its
//! process's grid; a key with one takes `share` scaled to it, so that its share is the same
//! fraction of its own limit as `share` is of the limiter's.

/// The permits one process grants `key` per window of its grid while the server cannot decide,
/// under a fail policy of `share` per key in a limiter configured with `limit`, the key's own
/// limit being `own` (`None`: the limiter's): `share`; or `⌊share × own / limit⌋`, at least 1
/// and at most `own`.
///
/// # Examples
///
/// ```
/// use fixed_window_spec::local_share;
///
/// assert_eq!(local_share(100, None, 10), 100);
/// assert_eq!(local_share(100, Some(10), 1_000), 1);
/// assert_eq!(local_share(100, Some(1), 1_000), 1);
/// assert_eq!(local_share(10, Some(1_000), 100), 100);
/// assert_eq!(local_share(50, Some(2), 10), 2);
/// assert_eq!(local_share(u32::MAX, Some(u32::MAX), 1), u32::MAX);
/// ```
#[must_use]
pub fn local_share(share: u32, own: Option<u32>, limit: u32) -> u32 {
    let Some(own) = own else {
        return share;
    };
    let scaled = u128::from(share) * u128::from(own) / u128::from(limit.max(1));
    // At most `own`, so it fits.
    u32::try_from(scaled.clamp(1, u128::from(own).max(1))).unwrap_or(u32::MAX)
}
