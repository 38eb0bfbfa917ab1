//! How a limiter decides: its settings, listeners and budget, applied to a state word at a
//! reading of the clock.

use core::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::attempt::Attempt;
use crate::budget::{Budget, Claim};
use crate::event::{Listener, RateLimiterEvent};
use crate::instant::Instant;
use crate::permit::Permit;
use crate::rejection::Rejection;
use crate::settings::Settings;
use crate::state::State;

/// Everything a limiter decides with but its clock and its state word, so that one policy can
/// decide for several words (a word per key) and every caller of the step shares one copy of
/// the rules, the events and the errors.
pub(crate) struct Policy {
    pub(crate) settings: Settings,
    pub(crate) listeners: Vec<Listener>,
    pub(crate) budget: Budget,
}

impl Policy {
    /// The sans-IO step on `state` at `now`, for a call whose wait must end by `deadline`,
    /// with its event emitted.
    // Inlined into the caller's loop, the paths lose a call's prologue and epilogue.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn attempt(&self, state: &State, now: Instant, deadline: Instant) -> Attempt {
        match self.budget.claim(state, now) {
            Claim::Permitted { remaining } => {
                self.permitted(now, remaining);
                Attempt::Permitted { remaining }
            }
            Claim::Full { next: Some(next) } if next <= deadline => Attempt::Wait { until: next },
            Claim::Full { next } => {
                let retry_after = Rejection::new(&self.settings, now, next).retry_after();
                self.rejected(now, retry_after);
                Attempt::Rejected { retry_after }
            }
        }
    }

    /// A permit from `state` at the reading `read` takes (after loading the word) if its
    /// window has one, never waiting, with its event emitted.
    // Inlined into the caller's loop, the paths lose a call's prologue and epilogue.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn try_acquire(
        &self,
        state: &State,
        read: impl FnOnce() -> Instant,
    ) -> Result<Permit, Rejection<'_>> {
        let (now, claim) = self.budget.claim_reading(state, read);
        match claim {
            Claim::Permitted { remaining } => {
                self.permitted(now, remaining);
                Ok(Permit { at: now, remaining })
            }
            Claim::Full { next } => {
                let rejection = Rejection::new(&self.settings, now, next);
                if !self.listeners.is_empty() {
                    self.emit(&RateLimiterEvent::Rejected {
                        at: now,
                        name: self.settings.name,
                        retry_after: rejection.retry_after(),
                    });
                }
                Err(rejection)
            }
        }
    }

    #[inline]
    fn permitted(&self, at: Instant, remaining: u32) {
        if !self.listeners.is_empty() {
            self.emit(&RateLimiterEvent::Permitted {
                at,
                name: self.settings.name,
                remaining,
            });
        }
    }

    /// Emits a rejection at `at`: from the step, or decided outside it (a waiting call whose
    /// clock stalled).
    #[inline]
    pub(crate) fn rejected(&self, at: Instant, retry_after: core::time::Duration) {
        if !self.listeners.is_empty() {
            self.emit(&RateLimiterEvent::Rejected {
                at,
                name: self.settings.name,
                retry_after,
            });
        }
    }

    #[cold]
    fn emit(&self, event: &RateLimiterEvent) {
        for listener in &self.listeners {
            // A listener's panic is its own failure, not the caller's or the limiter's: the
            // state word is already updated, so unwinding through here would only lose the
            // call's result.
            let _ = catch_unwind(AssertUnwindSafe(|| listener(event)));
        }
    }
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policy")
            .field("settings", &self.settings)
            .field("listeners", &self.listeners.len())
            .field("budget", &self.budget)
            .finish()
    }
}
