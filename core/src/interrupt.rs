//! Interrupting a blocking wait: a token shared between the waiter and whoever interrupts it.

use core::fmt;
use core::time::Duration;

use crate::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A wait was interrupted before it finished.
///
/// Returned by [`Clock::sleep`](crate::Clock::sleep) and turned by the limiter into
/// [`RateLimiterError::Interrupted`](crate::RateLimiterError::Interrupted); the limiter never
/// retries silently after one.
///
/// # Examples
///
/// It prints as a plain message.
///
/// ```
/// use fixed_window::Interrupted;
///
/// assert_eq!(Interrupted.to_string(), "the wait was interrupted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the wait was interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// A handle that interrupts blocking waits, the Rust counterpart of a thread's interrupt status.
///
/// Clones share one flag. Pass the handle to
/// [`RateLimiter::call_interruptible`](crate::RateLimiter::call_interruptible) or
/// [`RateLimiter::acquire_interruptible`](crate::RateLimiter::acquire_interruptible), keep a
/// clone elsewhere, and call [`interrupt`](Interrupt::interrupt) to wake the waiter at once:
/// its call fails with [`RateLimiterError::Interrupted`](crate::RateLimiterError::Interrupted).
/// The flag stays set afterwards (as Java restores the interrupt status), so every later wait
/// with the same handle fails too until [`clear`](Interrupt::clear) is called. A call that gets
/// a permit without waiting is not affected.
///
/// # Examples
///
/// Interrupting a handle before the wait makes the wait fail at once.
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Interrupt;
///
/// let interrupt = Interrupt::new();
/// let remote = interrupt.clone();
/// remote.interrupt();
/// assert!(interrupt.is_interrupted());
/// assert!(interrupt.wait_timeout(Duration::from_secs(2)).is_err());
/// interrupt.clear();
/// assert!(interrupt.wait_timeout(Duration::ZERO).is_ok());
/// ```
#[derive(Clone, Default)]
pub struct Interrupt {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    interrupted: Mutex<bool>,
    wake: Condvar,
}

impl Interrupt {
    /// A handle that is not interrupted.
    ///
    /// # Examples
    ///
    /// A new handle is clear.
    ///
    /// ```
    /// assert!(!fixed_window::Interrupt::new().is_interrupted());
    /// ```
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Sets the flag and wakes every thread waiting on this handle.
    ///
    /// # Examples
    ///
    /// A waiting thread is woken at once (or, if the interrupt comes first, never starts
    /// waiting): its wait fails either way.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Interrupt;
    ///
    /// let interrupt = Interrupt::new();
    /// let waiter = {
    ///     let interrupt = interrupt.clone();
    ///     std::thread::spawn(move || interrupt.wait_timeout(Duration::from_secs(2)))
    /// };
    /// interrupt.interrupt();
    /// assert!(waiter.join().unwrap().is_err());
    /// ```
    pub fn interrupt(&self) {
        *self.flag() = true;
        self.shared.wake.notify_all();
    }

    /// Clears the flag, so later waits with this handle run normally.
    ///
    /// # Examples
    ///
    /// ```
    /// let interrupt = fixed_window::Interrupt::new();
    /// interrupt.interrupt();
    /// interrupt.clear();
    /// assert!(!interrupt.is_interrupted());
    /// ```
    pub fn clear(&self) {
        *self.flag() = false;
    }

    /// Whether the flag is set.
    ///
    /// # Examples
    ///
    /// ```
    /// let interrupt = fixed_window::Interrupt::new();
    /// interrupt.interrupt();
    /// assert!(interrupt.is_interrupted());
    /// ```
    pub fn is_interrupted(&self) -> bool {
        *self.flag()
    }

    /// Blocks the calling thread for `timeout` of real time, or until the handle is interrupted.
    ///
    /// This is the waiting primitive behind [`SystemClock::sleep`](crate::SystemClock); a
    /// custom clock that really sleeps can use it too.
    ///
    /// # Errors
    ///
    /// [`Interrupted`] if the flag is set on entry or becomes set during the wait.
    ///
    /// # Examples
    ///
    /// A short wait on a clear handle completes.
    ///
    /// ```
    /// use core::time::Duration;
    ///
    /// let interrupt = fixed_window::Interrupt::new();
    /// assert_eq!(interrupt.wait_timeout(Duration::from_millis(1)), Ok(()));
    /// ```
    pub fn wait_timeout(&self, timeout: Duration) -> Result<(), Interrupted> {
        let mut flag = self.flag();
        let mut left = timeout;
        loop {
            if *flag {
                return Err(Interrupted);
            }
            if left.is_zero() {
                return Ok(());
            }
            let started = std::time::Instant::now();
            let (guard, _) = self
                .shared
                .wake
                .wait_timeout(flag, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            flag = guard;
            // Spurious wake-ups are allowed, so the remaining time is recomputed each round.
            left = left.saturating_sub(started.elapsed());
        }
    }

    fn flag(&self) -> MutexGuard<'_, bool> {
        // The flag is a plain bool, so a poisoned lock still holds a meaningful value.
        self.shared
            .interrupted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interrupt")
            .field("interrupted", &self.is_interrupted())
            .finish()
    }
}
