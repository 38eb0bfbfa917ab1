//! Which limiter a model runs, the real core or a planted one, and how it is built.

use fixed_window::{Backoff, Clock, Origin, RateLimiter};

use crate::config::Config;
use crate::planted::{Planted, PlantedBug};
use crate::subject::{Events, Subject, record};

/// Which limiter a model runs: the real core, or one with a planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// `fixed_window::RateLimiter`, the code users run, with its default backoff.
    Core,
    /// The same, with this backoff: `Backoff::new(1)` spins after the first lost race and
    /// yields after the next, so a small model reaches both branches of the retry loop.
    CoreWithBackoff(Backoff),
    /// A planted limiter that the checkers must catch.
    Planted(PlantedBug),
}

impl Target {
    /// A limiter of this kind with `config`'s limit, period and max wait, on `clock`, sending
    /// its events to `events`. Its origin is `clock.now()` when this is called, which the
    /// caller must have put in `config.origin`.
    ///
    /// # Panics
    ///
    /// If `config` has a zero limit, or (for a planted limiter) instants or limits too large
    /// for its packed state (see [`Planted::new`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::{Instant, ManualClock};
    /// use fixed_window_models::{Config, Events, Outcome, Target};
    ///
    /// let config = Config::new(Instant::ZERO, 1, Duration::from_nanos(10), Duration::ZERO);
    /// let limiter = Target::Core.build(&config, ManualClock::new(), &Events::new());
    /// assert!(limiter.try_acquire().is_permitted());
    /// assert!(matches!(limiter.try_acquire(), Outcome::Rejected { .. }));
    /// ```
    pub fn build<C: Clock + 'static>(
        self,
        config: &Config,
        clock: C,
        events: &Events,
    ) -> Box<dyn Subject> {
        match self {
            Target::Core => {
                Target::CoreWithBackoff(Backoff::default()).build(config, clock, events)
            }
            Target::CoreWithBackoff(backoff) => {
                let sink = events.clone();
                let limiter = RateLimiter::builder("model", config.limit, config.period_duration())
                    .expect("a model's configuration has a positive limit and period")
                    .origin(Origin::At(config.boundary))
                    .clock(clock)
                    .build()
                    .with_max_wait(config.max_wait_duration())
                    .with_backoff(backoff)
                    .with_listener(move |event| {
                        if let Some(event) = record(event) {
                            sink.push(event);
                        }
                    });
                Box::new(limiter)
            }
            Target::Planted(bug) => Box::new(Planted::new(bug, config, clock, events.clone())),
        }
    }
}
