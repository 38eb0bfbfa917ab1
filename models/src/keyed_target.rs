//! Which keyed limiter a model runs, core's or a planted one, and how it is built.

use fixed_window::{Backoff, Clock, KeyedRateLimiter};

use crate::config::Config;
use crate::keyed::KeyedSubject;
use crate::keyed_planted::{KeyedPlantedBug, PlantedKeyed};
use crate::subject::{Events, record};

/// Which keyed limiter a model runs: core's, or one with a planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyedTarget {
    /// `fixed_window::KeyedRateLimiter`, the code users run.
    Core,
    /// A planted keyed limiter that the checkers must catch.
    Planted(KeyedPlantedBug),
}

impl KeyedTarget {
    /// A keyed limiter of this kind with `config`'s limit, period and max wait, on `clock`,
    /// sending the events of key `k` to `events[k]`. Its origin is `clock.now()` when this is
    /// called, which the caller must have put in `config.origin`.
    ///
    /// # Panics
    ///
    /// If `config` has a zero limit, or (for a planted limiter) values too large for its packed
    /// state (see [`PlantedKeyed::new`]).
    pub fn build<C: Clock + 'static>(
        self,
        config: &Config,
        clock: C,
        events: &[Events],
    ) -> Box<dyn KeyedSubject> {
        match self {
            KeyedTarget::Core => {
                let sinks = events.to_vec();
                let limiter =
                    KeyedRateLimiter::of("keyed-model", config.limit, config.period_duration())
                        .expect("a model's configuration has a positive limit and period")
                        .with_max_wait(config.max_wait_duration())
                        .with_backoff(Backoff::default())
                        .with_listener(move |key: &u8, event| {
                            if let (Some(sink), Some(event)) =
                                (sinks.get(usize::from(*key)), record(event))
                            {
                                sink.push(event);
                            }
                        })
                        .with_clock(clock);
                Box::new(limiter)
            }
            KeyedTarget::Planted(bug) => {
                Box::new(PlantedKeyed::new(bug, config, clock, events.to_vec()))
            }
        }
    }
}
