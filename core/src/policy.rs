//! How a limiter decides: its settings, listeners and budget, applied to a state word at a
//! reading of the clock.

use core::num::NonZeroU64;
use core::time::Duration;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::attempt::Attempt;
use crate::budget::{Budget, Outcome};
use crate::error::RateLimiterError;
use crate::event::{Listener, RateLimiterEvent};
use crate::instant::Instant;
use crate::origin::Origin;
use crate::permit::Permit;
use crate::rejection::Rejection;
use crate::settings::Settings;
use crate::state::State;
use crate::weight::{Rest, Units, Weight};

/// Everything a limiter decides with but its clock and its state word, so that one policy can
/// decide for several words (a word per key) and every caller of the step shares one copy of
/// the rules, the events and the errors.
///
/// `L` is the limiter's kind of listener: [`Listener`] for the plain limiter, one that also
/// takes the key for a keyed limiter.
pub(crate) struct Policy<L = Listener> {
    pub(crate) settings: Settings,
    pub(crate) listeners: Vec<L>,
    pub(crate) budget: Budget,
    /// Where the grid was chosen to start: kept so that a limiter remade by a `with_*` makes
    /// the same choice.
    pub(crate) origin: Origin,
}

/// Where a step claims its permit, and how its events reach the limiter's listeners: the
/// plain limiter's one [`State`], or one key's word in a keyed limiter.
///
/// The step, the rejection and the waiting loops are written once, over this trait, so the
/// two limiters differ only in which word they claim from and what their listeners hear.
pub(crate) trait Source {
    /// The limiter's kind of listener.
    type Listener;

    /// Claims `weight` permits from the window holding `now`.
    fn claim<W: Weight>(&self, budget: &Budget, now: Instant, weight: W) -> Outcome;

    /// Claims `weight` permits at the reading `read` takes, returning the reading with the
    /// outcome. A source may load its word before reading the clock (see
    /// [`Budget::claim_reading`]).
    fn claim_reading<W: Weight>(
        &self,
        budget: &Budget,
        read: impl FnOnce() -> Instant,
        weight: W,
    ) -> (Instant, Outcome);

    /// Hands `event`, which this source's claim decided, to `listener`.
    fn notify(&self, listener: &Self::Listener, event: &RateLimiterEvent);
}

impl Source for State {
    type Listener = Listener;

    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn claim<W: Weight>(&self, budget: &Budget, now: Instant, weight: W) -> Outcome {
        budget.claim(self, now, weight)
    }

    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    fn claim_reading<W: Weight>(
        &self,
        budget: &Budget,
        read: impl FnOnce() -> Instant,
        weight: W,
    ) -> (Instant, Outcome) {
        budget.claim_reading(self, read, weight)
    }

    #[inline]
    fn notify(&self, listener: &Listener, event: &RateLimiterEvent) {
        listener(event);
    }
}

impl<L> Policy<L> {
    /// The sans-IO step on `source` at `now`, taking `weight` permits, for a call whose wait
    /// must end by `deadline`, with its event emitted.
    // Inlined into the caller's loop, the paths lose a call's prologue and epilogue.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    ///
    /// # Errors
    ///
    /// The weight's excess if it is above the limit the decision read (only a count can be).
    pub(crate) fn attempt<S: Source<Listener = L>, W: Weight>(
        &self,
        source: &S,
        now: Instant,
        deadline: Instant,
        weight: W,
    ) -> Result<Attempt, W::Excess> {
        self.decide(source, now, deadline, weight)
            .map(|(attempt, _)| attempt)
    }

    /// [`attempt`](Policy::attempt), with the limit the decision read, for the error a
    /// rejection becomes.
    ///
    /// # Errors
    ///
    /// The weight's excess if it is above the limit the decision read: a count checked
    /// against the limit when its call began, which a lowering has passed since. It is neither
    /// waited for nor rejected (no event): no window could ever grant it.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn decide<S: Source<Listener = L>, W: Weight>(
        &self,
        source: &S,
        now: Instant,
        deadline: Instant,
        weight: W,
    ) -> Result<(Attempt, u32), W::Excess> {
        match source.claim(&self.budget, now, weight) {
            Outcome::Permitted { remaining } => {
                self.permitted(source, now, remaining);
                // A permit's error is never made, so its limit is never read.
                Ok((Attempt::Permitted { remaining }, 0))
            }
            Outcome::Full { wait, limit } => {
                weight.fits(limit)?;
                match wait {
                    // The next window's start, `now + wait`, is an instant: no overflow.
                    Some(wait) if now.as_nanos() + wait.get() <= deadline.as_nanos() => Ok((
                        Attempt::Wait {
                            until: Instant::from_nanos(now.as_nanos() + wait.get()),
                        },
                        limit,
                    )),
                    _ => {
                        let retry_after = Rejection::new(&self.settings, limit, wait).retry_after();
                        self.rejected(source, now, retry_after);
                        Ok((Attempt::Rejected { retry_after }, limit))
                    }
                }
            }
        }
    }

    /// The settings with the limit now in force: what a limiter remade from this one (a
    /// `with_*`) starts with.
    pub(crate) fn current_settings(&self) -> Settings {
        // The budget's limit is never zero; the fallback only keeps this free of a panic.
        self.settings
            .with_limit(self.budget.limit())
            .unwrap_or(self.settings)
    }

    /// `n` permits as a weight to claim, or the error if no window can hold them under the
    /// limit now in force.
    #[inline]
    pub(crate) fn units(&self, n: u32) -> Result<Units, RateLimiterError> {
        self.settings.units(n, self.budget.limit())
    }

    /// `weight` permits from `source` at the reading `read` takes (after loading the word,
    /// where the source can) if its window has them, never waiting, with its event emitted.
    // Inlined into the caller's loop, the paths lose a call's prologue and epilogue.
    #[expect(clippy::inline_always, reason = "measured on the hot path")]
    #[inline(always)]
    pub(crate) fn try_acquire<S: Source<Listener = L>, W: Weight>(
        &self,
        source: &S,
        read: impl FnOnce() -> Instant,
        weight: W,
    ) -> Result<Permit, Rejection<'_>> {
        let (now, outcome) = source.claim_reading(&self.budget, read, weight);
        match outcome {
            Outcome::Permitted { remaining } => {
                self.permitted(source, now, remaining);
                Ok(Permit::new(now, remaining))
            }
            Outcome::Full { wait, limit } => {
                if !self.listeners.is_empty() {
                    self.rejected_at(source, now, wait, limit, weight);
                }
                Err(Rejection::new(&self.settings, limit, wait))
            }
        }
    }

    /// The error a weighted call that found its window full ends with: `TooMany` if a
    /// lowering since its call began put its weight above the limit the decision read (no
    /// window could hold it), else the rejection's.
    #[cold]
    pub(crate) fn refused(&self, rejection: &Rejection<'_>, units: Units) -> RateLimiterError {
        match units.fits(rejection.limit()) {
            Ok(()) => rejection.to_error(),
            Err(excess) => self.settings.too_many(excess),
        }
    }

    /// Fills the window in effect at the reading `read` takes on `source`: whatever it has
    /// left is taken, so it counts as full until it ends. No event: nothing is granted. The
    /// time from that reading until the window holding it ends.
    pub(crate) fn drain<S: Source<Listener = L>>(
        &self,
        source: &S,
        read: impl FnOnce() -> Instant,
    ) -> Duration {
        let (now, _) = source.claim_reading(&self.budget, read, Rest);
        self.reset_after(now)
    }

    /// Time from `at` until the window holding it ends (`Duration::MAX` if none follows it):
    /// what an HTTP answer reports as the time to reset, and a drain as the time to wait.
    pub(crate) fn reset_after(&self, at: Instant) -> Duration {
        let grid = self.budget.grid();
        grid.end(grid.index_of(at))
            .map_or(Duration::MAX, |end| end.saturating_duration_since(at))
    }

    /// Emits the rejection of a call for `weight` that found its window full at `now` under
    /// `limit`, the next opening `wait` nanoseconds later (`None`: never); none for a weight
    /// above `limit`, which is refused as too many, not rejected (see [`Policy::decide`]).
    // Out of line, with the wait computed inside: built on the hot path, the rejection was
    // stored to the stack on every call for this branch's sake (callgrind: the rejection path
    // on the manual clock 43 instructions before, 40 after).
    #[cold]
    #[inline(never)]
    fn rejected_at<S: Source<Listener = L>, W: Weight>(
        &self,
        source: &S,
        now: Instant,
        wait: Option<NonZeroU64>,
        limit: u32,
        weight: W,
    ) {
        if weight.fits(limit).is_err() {
            return;
        }
        let retry_after = Rejection::new(&self.settings, limit, wait).retry_after();
        self.rejected(source, now, retry_after);
    }

    #[inline]
    fn permitted<S: Source<Listener = L>>(&self, source: &S, at: Instant, remaining: u32) {
        if !self.listeners.is_empty() {
            self.emit(
                source,
                &RateLimiterEvent::Permitted {
                    at,
                    name: self.settings.name,
                    remaining,
                },
            );
        }
    }

    /// Emits a rejection at `at`: from the step, or decided outside it (a waiting call whose
    /// clock stalled).
    #[inline]
    pub(crate) fn rejected<S: Source<Listener = L>>(
        &self,
        source: &S,
        at: Instant,
        retry_after: Duration,
    ) {
        if !self.listeners.is_empty() {
            self.emit(
                source,
                &RateLimiterEvent::Rejected {
                    at,
                    name: self.settings.name,
                    retry_after,
                },
            );
        }
    }

    #[cold]
    fn emit<S: Source<Listener = L>>(&self, source: &S, event: &RateLimiterEvent) {
        for listener in &self.listeners {
            // A listener's panic is its own failure, not the caller's or the limiter's: the
            // state word is already updated, so unwinding through here would only lose the
            // call's result.
            let _ = catch_unwind(AssertUnwindSafe(|| source.notify(listener, event)));
        }
    }
}
