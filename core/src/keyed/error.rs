//! Why a keyed call did not run, and for which key.

use core::fmt;
use core::time::Duration;

use crate::error::RateLimiterError;

/// A [`RateLimiterError`] with the key it happened to.
///
/// The limiter's methods return it with the key borrowed (`KeyedRateLimiterError<&K>`), so a
/// rejection never clones the key; [`cloned`](KeyedRateLimiterError::cloned) makes an owned
/// one when the error must outlive the key (to pass it up with `?` as a
/// `Box<dyn Error>`, which must be `'static`: `limiter.try_acquire(&key).map_err(|err|
/// err.cloned())?`). The tower layer's errors own the key they extracted from the request.
///
/// # Examples
///
/// The second call of key 7 in a window of one is rejected; the error names the key and
/// carries the estimated wait.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::{KeyedRateLimiter, ManualClock};
///
/// let limiter = KeyedRateLimiter::of("api", 1, Duration::from_secs(60))?.with_clock(ManualClock::new());
/// limiter.try_acquire(&7_u32)?;
/// let err = limiter.try_acquire(&7_u32).unwrap_err();
/// assert_eq!(err.key(), &&7);
/// assert_eq!(err.retry_after(), Some(Duration::from_secs(60)));
/// assert_eq!(err.to_string(), "key 7: rate limiter 'api' rejected the call: 1 permits per 60s used up, max wait 0ns, next window in 60s");
/// let owned: fixed_window::KeyedRateLimiterError<u32> = err.cloned();
/// assert_eq!(owned.into_key(), 7);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyedRateLimiterError<Q> {
    key: Q,
    error: RateLimiterError,
}

impl<Q> KeyedRateLimiterError<Q> {
    /// `error`, which happened to `key`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::{KeyedRateLimiterError, RateLimiterError};
    ///
    /// let err = KeyedRateLimiterError::new("10.0.0.1", RateLimiterError::Interrupted { name: "api" });
    /// assert_eq!(err.key(), &"10.0.0.1");
    /// ```
    pub fn new(key: Q, error: RateLimiterError) -> KeyedRateLimiterError<Q> {
        KeyedRateLimiterError { key, error }
    }

    /// The key the call was made for.
    ///
    /// # Examples
    ///
    /// See [`KeyedRateLimiterError::new`].
    ///
    /// ```
    /// use fixed_window::{KeyedRateLimiterError, RateLimiterError};
    ///
    /// let err = KeyedRateLimiterError::new(3, RateLimiterError::Interrupted { name: "api" });
    /// assert_eq!(*err.key(), 3);
    /// ```
    pub fn key(&self) -> &Q {
        &self.key
    }

    /// The key, taken out of the error.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::{KeyedRateLimiterError, RateLimiterError};
    ///
    /// let err = KeyedRateLimiterError::new(String::from("tenant-a"), RateLimiterError::Interrupted { name: "api" });
    /// assert_eq!(err.into_key(), "tenant-a");
    /// ```
    pub fn into_key(self) -> Q {
        self.key
    }

    /// The limiter's error, without the key.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::{KeyedRateLimiterError, RateLimiterError};
    ///
    /// let inner = RateLimiterError::Interrupted { name: "api" };
    /// assert_eq!(KeyedRateLimiterError::new(1, inner).error(), inner);
    /// ```
    pub fn error(&self) -> RateLimiterError {
        self.error
    }

    /// The limiter's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::{KeyedRateLimiterError, RateLimiterError};
    ///
    /// let err = KeyedRateLimiterError::new(1, RateLimiterError::Interrupted { name: "api" });
    /// assert_eq!(err.name(), "api");
    /// ```
    pub fn name(&self) -> &'static str {
        self.error.name()
    }

    /// The estimated wait until the key's next window, for a rejection.
    ///
    /// # Examples
    ///
    /// An interruption has no estimate.
    ///
    /// ```
    /// use fixed_window::{KeyedRateLimiterError, RateLimiterError};
    ///
    /// let err = KeyedRateLimiterError::new(1, RateLimiterError::Interrupted { name: "api" });
    /// assert_eq!(err.retry_after(), None);
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        self.error.retry_after()
    }
}

impl<K: Clone> KeyedRateLimiterError<&K> {
    /// The same error owning a clone of its key.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window::{KeyedRateLimiterError, RateLimiterError};
    ///
    /// let key = String::from("user-42");
    /// let borrowed = KeyedRateLimiterError::new(&key, RateLimiterError::Interrupted { name: "api" });
    /// let owned: KeyedRateLimiterError<String> = borrowed.cloned();
    /// assert_eq!(owned.key(), "user-42");
    /// ```
    #[must_use]
    pub fn cloned(self) -> KeyedRateLimiterError<K> {
        KeyedRateLimiterError {
            key: self.key.clone(),
            error: self.error,
        }
    }
}

impl<Q: fmt::Debug> fmt::Display for KeyedRateLimiterError<Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key {:?}: {}", self.key, self.error)
    }
}

impl<Q: fmt::Debug> std::error::Error for KeyedRateLimiterError<Q> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
