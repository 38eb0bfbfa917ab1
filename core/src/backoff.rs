//! What a caller does after losing the compare-and-set race: spin a little, then yield.

use crate::sync::{hint, thread};

/// How a caller that lost the race for the state word waits before retrying.
///
/// The first [`spin_retries`](Backoff::spin_retries) retries of one attempt each spin once
/// (`std::hint::spin_loop`); every later retry yields the thread (`std::thread::yield_now`).
/// A lost race means another caller has just written the word, so a retry soon after is likely
/// to win; spinning keeps that retry cheap, while yielding under sustained contention lets the
/// winners finish instead of burning their core.
///
/// # Examples
///
/// The default spins [`Backoff::SPIN_LIMIT`] times before yielding; a custom one can yield at
/// once.
///
/// ```
/// use fixed_window::Backoff;
///
/// assert_eq!(Backoff::default().spin_retries(), Backoff::SPIN_LIMIT);
/// assert_eq!(Backoff::new(0).spin_retries(), 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Backoff {
    spin_retries: u32,
}

impl Backoff {
    /// The default number of retries that spin before the first yield.
    ///
    /// One spin costs about 25 ns on the machines this crate is measured on and one yield about
    /// 500 ns, so six spins (~150 ns) stay well under the price of a single yield: a caller
    /// tries several cheap retries before paying for a context switch. The contention
    /// benchmarks (`cargo xtask bench`) sweep this value.
    pub const SPIN_LIMIT: u32 = 6;

    /// A backoff that spins for the first `spin_retries` retries, then yields.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(fixed_window::Backoff::new(3).spin_retries(), 3);
    /// ```
    pub const fn new(spin_retries: u32) -> Backoff {
        Backoff { spin_retries }
    }

    /// How many retries spin before the first yield.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(fixed_window::Backoff::new(9).spin_retries(), 9);
    /// ```
    pub const fn spin_retries(&self) -> u32 {
        self.spin_retries
    }

    /// Waits before retry number `retry` (counting from 0) of one attempt.
    #[inline]
    pub(crate) fn snooze(self, retry: u32) {
        if retry < self.spin_retries {
            hint::spin_loop();
        } else {
            thread::yield_now();
        }
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(Backoff::SPIN_LIMIT)
    }
}
