//! One `try_acquire` over ours and the peers.

use fixed_window::{Clock, Permit, RateLimiter, Rejection};
use governor::clock::{Clock as GovernorClock, DefaultClock, FakeRelativeClock};
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{DefaultDirectRateLimiter, NotUntil, RateLimiter as Governor};

use crate::mutex_window::MutexWindow;

/// A limiter a benchmark can hammer: one non-waiting attempt to take a permit.
///
/// The outcome is returned whole (not collapsed to a `bool`) so the benchmark's `black_box`
/// keeps every limiter building the value its users would get.
///
/// # Examples
///
/// ```
/// use fixed_window_benches::{Contender, configs};
///
/// let open = configs::ours_open(fixed_window::ManualClock::new());
/// assert!(open.try_acquire().is_ok());
/// ```
pub trait Contender: Sync {
    /// What one attempt returns; it may borrow the limiter, as ours and governor's do.
    type Outcome<'a>
    where
        Self: 'a;

    /// Takes a permit if one is free now, never waiting.
    fn try_acquire(&self) -> Self::Outcome<'_>;
}

impl<C: Clock> Contender for RateLimiter<C> {
    type Outcome<'a>
        = Result<Permit, Rejection<'a>>
    where
        C: 'a;

    // A pure forwarder: inlined always, so the benchmark loop calls the limiter as a user's
    // code calls it directly, not through an extra call LLVM may or may not inline.
    #[expect(clippy::inline_always, reason = "the harness must not add a call")]
    #[inline(always)]
    fn try_acquire(&self) -> Self::Outcome<'_> {
        RateLimiter::try_acquire(self)
    }
}

impl<C: Clock> Contender for MutexWindow<C> {
    type Outcome<'a>
        = Result<u32, core::time::Duration>
    where
        C: 'a;

    // A pure forwarder: inlined always, so the benchmark loop calls the limiter as a user's
    // code calls it directly, not through an extra call LLVM may or may not inline.
    #[expect(clippy::inline_always, reason = "the harness must not add a call")]
    #[inline(always)]
    fn try_acquire(&self) -> Self::Outcome<'_> {
        MutexWindow::try_acquire(self)
    }
}

/// governor's direct (not keyed) limiter on its fake clock.
pub type GovernorFake = Governor<
    NotKeyed,
    InMemoryState,
    FakeRelativeClock,
    NoOpMiddleware<<FakeRelativeClock as GovernorClock>::Instant>,
>;

impl Contender for DefaultDirectRateLimiter {
    type Outcome<'a> = Result<(), NotUntil<<DefaultClock as GovernorClock>::Instant>>;

    // A pure forwarder: inlined always, so the benchmark loop calls the limiter as a user's
    // code calls it directly, not through an extra call LLVM may or may not inline.
    #[expect(clippy::inline_always, reason = "the harness must not add a call")]
    #[inline(always)]
    fn try_acquire(&self) -> Self::Outcome<'_> {
        self.check()
    }
}

impl Contender for GovernorFake {
    type Outcome<'a> = Result<(), NotUntil<<FakeRelativeClock as GovernorClock>::Instant>>;

    // A pure forwarder: inlined always, so the benchmark loop calls the limiter as a user's
    // code calls it directly, not through an extra call LLVM may or may not inline.
    #[expect(clippy::inline_always, reason = "the harness must not add a call")]
    #[inline(always)]
    fn try_acquire(&self) -> Self::Outcome<'_> {
        self.check()
    }
}
