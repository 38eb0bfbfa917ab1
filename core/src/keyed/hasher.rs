//! The keyed limiter's default hasher: fast, and seeded at random for each limiter.

use core::fmt;
use core::hash::BuildHasher;

/// How a [`KeyedRateLimiter`](crate::KeyedRateLimiter) hashes its keys unless told otherwise:
/// `foldhash`'s fast hash (the default of `hashbrown`), with a seed drawn at random for each
/// limiter.
///
/// A keyed call hashes its key once; with std's `SipHash` that hash is about 40 % of the
/// call's instructions, with this one a few percent.
///
/// # Collisions chosen by others
///
/// The keys of a rate limiter (client addresses, tokens) are often chosen by the callers it
/// limits, so what matters is whether they can choose keys that collide, turning lookups
/// into scans. The random seed means no fixed set of keys collides in every limiter: keys
/// that collide in one process do not in another, nor in another limiter of the same
/// process. What the seed does not stop is an attacker who learns it, from precise timings
/// of many calls; `foldhash` makes no claim against that, and neither does this type. Where
/// that is a concern, pass std's [`RandomState`](std::hash::RandomState) (`SipHash` with
/// random keys, built to resist it) to
/// [`with_hasher`](crate::KeyedRateLimiter::with_hasher), at the cost of about 170
/// instructions a call.
///
/// # Examples
///
/// Two hashers hash the same key differently (with overwhelming probability), and one hashes
/// it the same every time.
///
/// ```
/// use core::hash::BuildHasher;
/// use fixed_window::KeyHasher;
///
/// let (one, other) = (KeyHasher::default(), KeyHasher::default());
/// assert_eq!(one.hash_one("10.0.0.1"), one.hash_one("10.0.0.1"));
/// assert_ne!(one.hash_one("10.0.0.1"), other.hash_one("10.0.0.1"));
/// ```
#[derive(Clone, Default)]
pub struct KeyHasher(foldhash::fast::RandomState);

impl BuildHasher for KeyHasher {
    type Hasher = foldhash::fast::FoldHasher<'static>;

    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        self.0.build_hasher()
    }
}

impl fmt::Debug for KeyHasher {
    // The seed stays out of logs: it is what keeps keys from being chosen to collide.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyHasher").finish_non_exhaustive()
    }
}
