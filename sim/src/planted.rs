//! The planted limiters of `fixed-window-broken`, driven through the same simulator
//! to show that the oracle catches every one of them.
//!
//! The catalogue holds the bugs and the one algorithm they are planted in; this is only the
//! adapter: it keeps a planted limiter's state in a wide cell (the scenarios' clocks run to
//! `Instant::MAX` and their limits to millions), records its decisions in the trace as the real
//! limiter's listener does, and answers as the real limiter would. Its asynchronous path yields
//! between reading the state and writing it for a bug that races only, so the simulator's one
//! thread interleaves callers there.

use core::time::Duration;

use fixed_window::{ConfigError, Interrupt, Origin, Peek, RateLimiterError, Settings};
use fixed_window_broken::{Grant, Refusal, Wide};

use crate::record::{OpOutput, Record};
use crate::scenario::{Config, Scenario};
use crate::subject::{Granted, Operation, Subject};
use crate::virtual_clock::VirtualClock;
use crate::world::World;

pub use fixed_window_broken::PlantedBug;

/// A limiter with one [`PlantedBug`], as the simulator drives it.
#[derive(Debug)]
pub struct Planted {
    name: &'static str,
    config: Config,
    limiter: fixed_window_broken::PlantedLimiter<Wide, VirtualClock>,
}

impl Planted {
    /// A planted limiter with `bug`, configured as `scenario`'s, on `clock`, its windows
    /// aligned as the scenario's: to Unix time as the planted limiter aligns them (the one
    /// place [`PlantedBug::EpochOffByOnePeriod`] and [`PlantedBug::EpochNextBoundaryWhenYoung`]
    /// show), or else on the scenario's grid.
    ///
    /// # Errors
    ///
    /// The same configuration errors as the real limiter.
    pub fn new(
        bug: PlantedBug,
        name: &'static str,
        scenario: &Scenario,
        clock: VirtualClock,
    ) -> Result<Planted, ConfigError> {
        let config = &scenario.config;
        let settings =
            Settings::new(name, config.limit, config.period)?.with_max_wait(config.max_wait);
        let limiter = if scenario.origin_choice == Origin::UnixEpoch {
            fixed_window_broken::PlantedLimiter::aligned_to_unix_time(bug, settings, clock)
        } else if let Some(grid) = scenario.grid() {
            fixed_window_broken::PlantedLimiter::on_grid(bug, settings, clock, grid)
        } else {
            // A zero period, which the settings refuse before this.
            fixed_window_broken::PlantedLimiter::new(bug, settings, clock)
        };
        Ok(Planted {
            name,
            config: *config,
            limiter,
        })
    }

    /// Records how a call ended, as the real limiter's listener does, and answers as the real
    /// limiter would.
    fn answer(&self, ended: Result<Grant, Refusal>, n: u32) -> Result<Granted, RateLimiterError> {
        let caller = World::with(World::current);
        match ended {
            Ok(Grant { at, remaining }) => {
                let at = at.as_nanos();
                World::with(|world| {
                    world.record(Record::Permitted {
                        caller,
                        at,
                        remaining,
                    });
                });
                Ok(Granted { at, remaining })
            }
            Err(Refusal::Rejected { at, retry_after }) => {
                World::with(|world| {
                    world.record(Record::Rejected {
                        caller,
                        at: at.as_nanos(),
                        retry_after: retry_after.as_nanos(),
                    });
                });
                Err(RateLimiterError::Rejected {
                    name: self.name,
                    limit: self.limiter.limit(),
                    period: self.config.period,
                    max_wait: self.config.max_wait,
                    retry_after,
                })
            }
            Err(Refusal::Interrupted) => Err(RateLimiterError::Interrupted { name: self.name }),
            // A waiting call whose weight a lowering of the limit passed.
            Err(Refusal::TooMany { limit }) => Err(RateLimiterError::TooMany {
                name: self.name,
                limit,
                requested: n,
            }),
        }
    }
}

/// The real limiter's refusal of `n` permits above the limit in force, `limit`, before any
/// attempt: the planted limiters leave it to their callers, as no planted bug is in it.
///
/// # Errors
///
/// `TooMany` if `n` is above `limit`.
pub(crate) fn too_many(name: &'static str, limit: u32, n: u32) -> Result<(), RateLimiterError> {
    if n > limit {
        return Err(RateLimiterError::TooMany {
            name,
            limit,
            requested: n,
        });
    }
    Ok(())
}

impl Subject for Planted {
    async fn call_async(&self, op: Operation) -> Result<OpOutput, RateLimiterError> {
        self.answer(self.limiter.acquire_async().await, 1)?;
        Ok(op.await)
    }

    async fn acquire_async(&self, n: u32) -> Result<Granted, RateLimiterError> {
        too_many(self.name, self.limiter.limit(), n)?;
        self.answer(self.limiter.acquire_n_async(n).await, n)
    }

    fn try_acquire(&self, n: u32) -> Result<Granted, RateLimiterError> {
        too_many(self.name, self.limiter.limit(), n)?;
        self.answer(self.limiter.try_acquire_n(n), n)
    }

    fn drain(&self) -> Duration {
        self.limiter.drain()
    }

    fn peek(&self) -> Peek {
        self.limiter.peek()
    }

    fn set_limit(&self, limit: u32) -> Result<(), ConfigError> {
        self.limiter.set_limit(limit)
    }

    fn limit_ceiling(&self) -> u32 {
        self.limiter.limit_ceiling()
    }

    fn call_blocking(
        &self,
        interrupt: &Interrupt,
        op: &mut dyn FnMut() -> OpOutput,
    ) -> Result<OpOutput, RateLimiterError> {
        self.answer(self.limiter.acquire(Some(interrupt)), 1)?;
        Ok(op())
    }
}
