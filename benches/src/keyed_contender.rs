//! One keyed `try_acquire` over ours and the peers.

use core::hash::BuildHasher;

use fixed_window::{Clock, KeyedRateLimiter, KeyedRateLimiterError, Permit};
use governor::clock::{Clock as GovernorClock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, NotUntil};

use crate::mutex_keyed_window::MutexKeyedWindow;

/// A keyed limiter a benchmark can hammer: one non-waiting attempt for a `u64` key.
///
/// As with [`Contender`](crate::Contender), the outcome is returned whole so the benchmark's
/// `black_box` keeps every limiter building the value its users would get.
///
/// # Examples
///
/// ```
/// use fixed_window_benches::{KeyedContender, keyed_configs};
///
/// let limiter = keyed_configs::ours_open(fixed_window::ManualClock::new(), 10);
/// assert!(limiter.try_acquire_key(3).is_ok());
/// ```
pub trait KeyedContender: Sync {
    /// What one attempt returns.
    type Outcome<'a>
    where
        Self: 'a;

    /// Takes a permit for `key` if one is free now, never waiting.
    fn try_acquire_key(&self, key: u64) -> Self::Outcome<'_>;
}

impl<C: Clock, S: BuildHasher + Sync> KeyedContender for KeyedRateLimiter<u64, C, S> {
    // The error borrows the key; the benchmark hands the key in by value, so the outcome
    // keeps only the permit or the limiter's error.
    type Outcome<'a>
        = Result<Permit, fixed_window::RateLimiterError>
    where
        Self: 'a;

    #[inline]
    fn try_acquire_key(&self, key: u64) -> Self::Outcome<'_> {
        self.try_acquire(&key)
            .map_err(|err: KeyedRateLimiterError<&u64>| err.error())
    }
}

impl KeyedContender for DefaultKeyedRateLimiter<u64> {
    type Outcome<'a> = Result<(), NotUntil<<DefaultClock as GovernorClock>::Instant>>;

    #[inline]
    fn try_acquire_key(&self, key: u64) -> Self::Outcome<'_> {
        self.check_key(&key)
    }
}

impl<C: Clock> KeyedContender for MutexKeyedWindow<u64, C> {
    type Outcome<'a>
        = Result<u32, core::time::Duration>
    where
        Self: 'a;

    #[inline]
    fn try_acquire_key(&self, key: u64) -> Self::Outcome<'_> {
        self.try_acquire(&key)
    }
}
