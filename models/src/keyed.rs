//! The keyed limiter under test: operations on a key, and a sweep that reclaims ended keys,
//! behind one small trait that core's `KeyedRateLimiter` and the planted keyed limiter both
//! implement.
//!
//! Each key of a keyed limiter must behave as one plain limiter, so a run is judged key by key:
//! every key's operations form a history of the plain limiter's kind, which the invariants and
//! the linearizability checker judge unchanged. [`OneKey`] is a key seen as a plain
//! [`Subject`], so the plain [`Recorder`](crate::Recorder) records it.

use fixed_window::{Clock, KeyedRateLimiter, RateLimiterError};

use crate::outcome::Outcome;
use crate::subject::Subject;

/// A keyed limiter the checkers can drive: the three ways a caller asks for a permit for a key,
/// and a sweep.
pub trait KeyedSubject: Send + Sync {
    /// Takes a permit for `key` if its window has one, never waiting.
    fn try_acquire(&self, key: u8) -> Outcome;

    /// Takes a permit for `key`, waiting up to the configured max wait.
    fn acquire(&self, key: u8) -> Outcome;

    /// Runs `op` if a permit for `key` is granted (waiting as `acquire` does).
    fn call(&self, key: u8, op: &mut dyn FnMut()) -> Outcome;

    /// Removes the keys whose window has ended, at the clock's reading.
    fn sweep(&self);

    /// How many keys the limiter holds.
    fn len(&self) -> usize;

    /// Whether it holds none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One key of a keyed limiter, as a plain [`Subject`].
///
/// # Examples
///
/// Two keys of a keyed limiter of one permit each, recorded separately.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{Instant, ManualClock};
/// use fixed_window_models::{Config, Events, KeyedTarget, Outcome, OneKey, Subject};
///
/// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(10), Duration::ZERO);
/// let events = [Events::new(), Events::new()];
/// let limiter = KeyedTarget::Core.build(&config, ManualClock::new(), &events);
/// assert!(OneKey::new(&*limiter, 0).try_acquire().is_permitted());
/// assert!(OneKey::new(&*limiter, 1).try_acquire().is_permitted());
/// assert!(matches!(OneKey::new(&*limiter, 0).try_acquire(), Outcome::Rejected { .. }));
/// ```
#[derive(Clone, Copy)]
pub struct OneKey<'a> {
    limiter: &'a dyn KeyedSubject,
    key: u8,
}

impl<'a> OneKey<'a> {
    /// `key` of `limiter`.
    pub fn new(limiter: &'a dyn KeyedSubject, key: u8) -> OneKey<'a> {
        OneKey { limiter, key }
    }
}

impl core::fmt::Debug for OneKey<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OneKey").field("key", &self.key).finish()
    }
}

impl Subject for OneKey<'_> {
    fn try_acquire(&self) -> Outcome {
        self.limiter.try_acquire(self.key)
    }

    fn acquire(&self) -> Outcome {
        self.limiter.acquire(self.key)
    }

    fn call(&self, op: &mut dyn FnMut()) -> Outcome {
        self.limiter.call(self.key, op)
    }
}

fn outcome<T>(result: Result<T, RateLimiterError>, permitted: impl Fn(&T) -> Outcome) -> Outcome {
    match result {
        Ok(value) => permitted(&value),
        Err(err) => err
            .retry_after()
            .map_or(Outcome::Interrupted, |retry_after| Outcome::Rejected {
                retry_after,
            }),
    }
}

fn permit(permit: &fixed_window::Permit) -> Outcome {
    Outcome::Permitted {
        at: Some(permit.at()),
        remaining: Some(permit.remaining()),
    }
}

impl<C: Clock> KeyedSubject for KeyedRateLimiter<u8, C> {
    fn try_acquire(&self, key: u8) -> Outcome {
        outcome(
            KeyedRateLimiter::try_acquire(self, &key).map_err(|err| err.error()),
            permit,
        )
    }

    fn acquire(&self, key: u8) -> Outcome {
        outcome(
            KeyedRateLimiter::acquire(self, &key).map_err(|err| err.error()),
            permit,
        )
    }

    fn call(&self, key: u8, op: &mut dyn FnMut()) -> Outcome {
        outcome(
            KeyedRateLimiter::call(self, &key, op).map_err(|err| err.error()),
            |()| Outcome::Permitted {
                at: None,
                remaining: None,
            },
        )
    }

    fn sweep(&self) {
        self.shrink();
    }

    fn len(&self) -> usize {
        KeyedRateLimiter::len(self)
    }
}
