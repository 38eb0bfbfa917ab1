//! The planted limiters of `fixed-window-broken`, driven by the models to prove
//! the checkers can fail.
//!
//! The catalogue holds the bugs and the one algorithm they are planted in; this is only the
//! adapter: it keeps a planted limiter's state in the catalogue's packed cell, one atomic word from
//! the sync shim switched by the same cfgs as core's, so under loom or shuttle every load, store,
//! compare-and-set and add is a scheduling point, as in core; and it logs the limiter's decisions
//! as events.
//!
//! The models' numbers are small (the packed word holds instants below 2^44 ns), so a bug that
//! shows only near the end of the timeline ([`PlantedBug::extremes_only`]) never shows here; one
//! that races only ([`PlantedBug::races_only`]) shows only on loom's and shuttle's histories.

use fixed_window::{Clock, Settings};
use fixed_window_broken::{Grant, Packed, PlantedLimiter, Refusal};

use crate::config::Config;
use crate::outcome::{Event, Outcome};
use crate::subject::{Events, Subject};

pub use fixed_window_broken::PlantedBug;

/// A limiter with one [`PlantedBug`], its events sent to an [`Events`] log.
#[derive(Debug)]
pub struct Planted<C> {
    limiter: PlantedLimiter<Packed, C>,
    events: Events,
}

impl<C: Clock> Planted<C> {
    /// A limiter with `bug`, `config`'s limit, period and max wait, on the grid through
    /// `config.boundary`, built at `clock.now()`.
    ///
    /// # Panics
    ///
    /// If the limit is zero or above 255, or if the clock reads 2^44 ns or later: the packed
    /// state has no room for them (models use small numbers).
    pub fn new(bug: PlantedBug, config: &Config, clock: C, events: Events) -> Planted<C> {
        let settings = Settings::new("planted", config.limit, config.period_duration())
            .expect("a model's configuration has a positive limit and period")
            .with_max_wait(config.max_wait_duration());
        let limiter = PlantedLimiter::starting_at(bug, settings, clock, config.boundary);
        Planted { limiter, events }
    }

    /// Logs how a call ended and says it as the checkers do.
    fn outcome(&self, ended: Result<Grant, Refusal>) -> Outcome {
        match ended {
            Ok(Grant { at, remaining }) => {
                self.events.push(Event::Permitted { at, remaining });
                Outcome::Permitted {
                    at: Some(at),
                    remaining: Some(remaining),
                }
            }
            Err(Refusal::Rejected { at, retry_after }) => {
                self.events.push(Event::Rejected { at, retry_after });
                Outcome::Rejected { retry_after }
            }
            Err(Refusal::Interrupted) => Outcome::Interrupted,
            // Every call here is for one permit, which every limit (at least one) can hold.
            Err(Refusal::TooMany { limit }) => {
                unreachable!("one permit refused as more than the limit {limit}")
            }
        }
    }
}

impl<C: Clock> Subject for Planted<C> {
    fn try_acquire(&self) -> Outcome {
        self.outcome(self.limiter.try_acquire())
    }

    fn acquire(&self) -> Outcome {
        self.outcome(self.limiter.acquire(None))
    }

    fn call(&self, op: &mut dyn FnMut()) -> Outcome {
        let outcome = self.acquire();
        if outcome.is_permitted() {
            op();
        }
        outcome
    }
}
