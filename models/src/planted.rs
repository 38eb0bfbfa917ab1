//! Deliberately broken limiters: each has one flaw from the list the checkers must catch.
//!
//! They are written independently of core (core's primitives are private) on this crate's
//! sync shim, so under loom or shuttle their atomics are the checker's and every load, store
//! and compare-and-set is a scheduling point, as in core. Apart from its flaw each is a correct
//! fixed-window limiter, so a checker that flags one flags the flaw.

use core::time::Duration;

use fixed_window::{Attempt, Clock, Instant, Interrupt};

use crate::config::Config;
use crate::outcome::{Event, Outcome};
use crate::subject::{Events, Subject};
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::hint;

/// The flaw planted in a [`Planted`] limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flaw {
    /// Claims with a load then a plain store instead of a compare-and-set: two racing callers
    /// can both take the last permit.
    LoadThenStore,
    /// A new window inherits the permits the previous one left unused.
    CarryOver,
    /// A new window starts at the caller's `now` instead of on the grid of whole periods.
    AdvanceFromNow,
    /// The window ends one nanosecond late: at exactly the boundary the old window is still in
    /// effect.
    BoundaryOffByOne,
    /// Checks that the count is below the limit, then increments it with a separate
    /// `fetch_add`: under a race the count passes the limit and so do the permits.
    Overcount,
    /// A caller that loses the compare-and-set race gives up and is rejected instead of
    /// retrying: permits are lost while the window still has them.
    GiveUpOnLostRace,
}

/// Bits of the state word holding the biased count; the window start takes the rest.
const COUNT_BITS: u32 = 20;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// A fixed-window limiter with one planted [`Flaw`].
///
/// The state is one `AtomicU64`: the window's start instant in the high 44 bits and a biased
/// count `used + limit` in the low 20 (biased so that carried-over permits, a negative count,
/// fit).
pub struct Planted<C> {
    flaw: Flaw,
    limit: u64,
    period: u64,
    origin: u64,
    max_wait: Duration,
    clock: C,
    events: Events,
    state: AtomicU64,
}

impl<C: Clock> Planted<C> {
    /// A limiter with `flaw`, `config`'s limit, period and max wait, whose first window starts
    /// at `clock.now()`.
    ///
    /// # Panics
    ///
    /// If the limit is zero or at least 2^18, or if the clock reads 2^44 ns or later: the
    /// packed state has no room for them (models use small numbers).
    pub fn new(flaw: Flaw, config: &Config, clock: C, events: Events) -> Planted<C> {
        let limit = u64::from(config.limit);
        assert!(
            (1..1 << (COUNT_BITS - 2)).contains(&limit),
            "a planted limiter needs 1 <= limit < 2^18"
        );
        let origin = clock.now().as_nanos();
        let state = AtomicU64::new(encode(origin, limit));
        Planted {
            flaw,
            limit,
            period: config.period,
            origin,
            max_wait: config.max_wait_duration(),
            clock,
            events,
            state,
        }
    }

    /// The acquire step, as core's `attempt`, with the flaw.
    fn attempt(&self, now: Instant, deadline: Instant) -> Attempt {
        let now_nanos = now.as_nanos();
        loop {
            let current = self.state.load(Ordering::SeqCst);
            let (start, biased) = decode(current);
            let end = start.saturating_add(self.period);
            let advance = match self.flaw {
                Flaw::BoundaryOffByOne => now_nanos > end,
                _ => now_nanos >= end,
            };
            let (start, biased) = if advance {
                let new_start = match self.flaw {
                    Flaw::AdvanceFromNow => now_nanos,
                    _ => self.origin + (now_nanos - self.origin) / self.period * self.period,
                };
                let new_biased = match self.flaw {
                    // used − limit: the unused permits become extra room.
                    Flaw::CarryOver => biased.saturating_sub(self.limit),
                    _ => self.limit,
                };
                (new_start, new_biased)
            } else {
                (start, biased)
            };
            if biased < 2 * self.limit {
                let remaining = (2 * self.limit - biased - 1).try_into().unwrap_or(u32::MAX);
                let claimed = encode(start, biased + 1);
                match self.flaw {
                    Flaw::LoadThenStore => {
                        self.state.store(claimed, Ordering::SeqCst);
                        return Attempt::Permitted { remaining };
                    }
                    Flaw::Overcount => {
                        if advance
                            && self
                                .state
                                .compare_exchange(
                                    current,
                                    encode(start, biased),
                                    Ordering::SeqCst,
                                    Ordering::SeqCst,
                                )
                                .is_err()
                        {
                            hint::spin_loop();
                            continue;
                        }
                        let (_, before) = decode(self.state.fetch_add(1, Ordering::SeqCst));
                        let remaining = (2 * self.limit)
                            .saturating_sub(before + 1)
                            .try_into()
                            .unwrap_or(u32::MAX);
                        return Attempt::Permitted { remaining };
                    }
                    _ => {
                        if self
                            .state
                            .compare_exchange(current, claimed, Ordering::SeqCst, Ordering::SeqCst)
                            .is_ok()
                        {
                            return Attempt::Permitted { remaining };
                        }
                        if self.flaw == Flaw::GiveUpOnLostRace {
                            let next = Instant::from_nanos(start.saturating_add(self.period));
                            return Attempt::Rejected {
                                retry_after: next.saturating_duration_since(now),
                            };
                        }
                        hint::spin_loop();
                        continue;
                    }
                }
            }
            let next = Instant::from_nanos(start.saturating_add(self.period));
            return if next <= deadline {
                Attempt::Wait { until: next }
            } else {
                Attempt::Rejected {
                    retry_after: next.saturating_duration_since(now),
                }
            };
        }
    }

    /// Drives [`attempt`](Planted::attempt) as core's blocking loop does, emitting events.
    fn acquire_until(&self, waits: bool) -> Outcome {
        let mut now = self.clock.now();
        let deadline = if waits {
            now.saturating_add(self.max_wait)
        } else {
            now
        };
        let mut slept_from = None;
        // Made only when a wait begins, as core does, so a call that never waits adds no
        // synchronisation for the checkers to explore.
        let mut interrupt = None;
        loop {
            match self.attempt(now, deadline) {
                Attempt::Permitted { remaining } => {
                    self.events.push(Event::Permitted { at: now, remaining });
                    return Outcome::Permitted {
                        at: Some(now),
                        remaining: Some(remaining),
                    };
                }
                Attempt::Rejected { retry_after } => return self.reject(now, retry_after),
                Attempt::Wait { until } => {
                    let stalled = slept_from.is_some_and(|before| now <= before);
                    if !waits || stalled {
                        return self.reject(now, until.saturating_duration_since(now));
                    }
                    if self
                        .clock
                        .sleep(
                            until.saturating_duration_since(now),
                            interrupt.get_or_insert_with(Interrupt::new),
                        )
                        .is_err()
                    {
                        return Outcome::Interrupted;
                    }
                    slept_from = Some(now);
                    now = self.clock.now();
                }
            }
        }
    }

    fn reject(&self, now: Instant, retry_after: Duration) -> Outcome {
        self.events.push(Event::Rejected {
            at: now,
            retry_after,
        });
        Outcome::Rejected { retry_after }
    }
}

fn encode(start: u64, biased: u64) -> u64 {
    assert!(
        start < 1 << (u64::BITS - COUNT_BITS),
        "a planted limiter's instants must stay below 2^44 ns"
    );
    (start << COUNT_BITS) | (biased & COUNT_MASK)
}

fn decode(word: u64) -> (u64, u64) {
    (word >> COUNT_BITS, word & COUNT_MASK)
}

impl<C: Clock> Subject for Planted<C> {
    fn try_acquire(&self) -> Outcome {
        self.acquire_until(false)
    }

    fn acquire(&self) -> Outcome {
        self.acquire_until(true)
    }

    fn call(&self, op: &mut dyn FnMut()) -> Outcome {
        let outcome = self.acquire_until(true);
        if outcome.is_permitted() {
            op();
        }
        outcome
    }
}

impl<C> core::fmt::Debug for Planted<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Planted")
            .field("flaw", &self.flaw)
            .field("limit", &self.limit)
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}
