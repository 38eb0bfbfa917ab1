//! The catalogue's planted keyed limiters (`fixed_window_broken::PlantedKeyedLimiter`), driven
//! through the same simulator to show that the oracle catches every one of them: only an adapter
//! that records their decisions, and the keys they hold, as the real keyed limiter's listener does.

use core::time::Duration;

use fixed_window::{ConfigError, Interrupt, Peek, RateLimiterError, Settings};
use fixed_window_broken::{Grant, KeyedPlantedBug, PlantedKeyedLimiter as Catalogued, Refusal};

use crate::planted::too_many;
use crate::record::{OpOutput, Record};
use crate::scenario::Scenario;
use crate::subject::{Granted, Operation, Subject};
use crate::virtual_clock::VirtualClock;
use crate::world::World;

/// A keyed limiter with one [`KeyedPlantedBug`], as the simulator drives it, and each caller's key.
#[derive(Debug)]
pub(crate) struct PlantedKeyed {
    name: &'static str,
    scenario_config: crate::scenario::Config,
    limiter: Catalogued<VirtualClock>,
    /// Each caller's key, by caller id.
    keys: Vec<u64>,
}

impl PlantedKeyed {
    /// A keyed limiter with `bug`, configured as `scenario` says, on `clock`.
    pub(crate) fn new(
        bug: KeyedPlantedBug,
        name: &'static str,
        scenario: &Scenario,
        clock: VirtualClock,
    ) -> Result<PlantedKeyed, ConfigError> {
        let config = scenario.config;
        let settings =
            Settings::new(name, config.limit, config.period)?.with_max_wait(config.max_wait);
        let limiter = match scenario.grid() {
            Some(grid) => Catalogued::on_grid(bug, settings, clock, grid),
            // A zero period, which the settings refuse before this.
            None => Catalogued::new(bug, settings, clock),
        };
        for &(key, limit) in &scenario.key_limits.built {
            limiter.set_key_limit(key, Some(limit))?;
        }
        Ok(PlantedKeyed {
            name,
            scenario_config: config,
            limiter,
            keys: scenario.callers.iter().map(|caller| caller.key).collect(),
        })
    }

    /// The key of the caller whose turn it is.
    fn key(&self) -> u64 {
        World::with(World::current)
            .and_then(|caller| self.keys.get(caller as usize).copied())
            .unwrap_or(0)
    }

    /// Records how an attempt for `key` ended, as the real keyed limiter's listener does, and
    /// answers as the real limiter would.
    fn answer(
        &self,
        key: u64,
        ended: Result<Grant, Refusal>,
        n: u32,
    ) -> Result<Granted, RateLimiterError> {
        let record = |event: Record| {
            let len = u64::try_from(self.limiter.len()).unwrap_or(u64::MAX);
            World::with(|world| {
                world.record(event);
                world.record(Record::Held {
                    caller: world.current(),
                    key,
                    len,
                });
            });
        };
        let caller = World::with(World::current);
        match ended {
            Ok(Grant { at, remaining }) => {
                let at = at.as_nanos();
                record(Record::Permitted {
                    caller,
                    at,
                    remaining,
                });
                Ok(Granted { at, remaining })
            }
            Err(Refusal::Rejected { at, retry_after }) => {
                record(Record::Rejected {
                    caller,
                    at: at.as_nanos(),
                    retry_after: retry_after.as_nanos(),
                });
                let config = &self.scenario_config;
                Err(RateLimiterError::Rejected {
                    name: self.name,
                    limit: self.limiter.key_limit(key),
                    period: config.period,
                    max_wait: config.max_wait,
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

impl Subject for PlantedKeyed {
    async fn call_async(&self, op: Operation) -> Result<OpOutput, RateLimiterError> {
        let key = self.key();
        self.answer(key, self.limiter.acquire_async(key).await, 1)?;
        Ok(op.await)
    }

    async fn acquire_async(&self, n: u32) -> Result<Granted, RateLimiterError> {
        let key = self.key();
        too_many(self.name, self.limiter.key_limit(key), n)?;
        self.answer(key, self.limiter.acquire_n_async(key, n).await, n)
    }

    fn try_acquire(&self, n: u32) -> Result<Granted, RateLimiterError> {
        let key = self.key();
        too_many(self.name, self.limiter.key_limit(key), n)?;
        self.answer(key, self.limiter.try_acquire_n(key, n), n)
    }

    fn drain(&self) -> Duration {
        self.limiter.drain(self.key())
    }

    fn peek(&self) -> Peek {
        self.limiter.peek(self.key())
    }

    fn set_limit(&self, limit: u32) -> Result<(), ConfigError> {
        self.limiter.set_limit(limit)
    }

    fn limit_ceiling(&self) -> u32 {
        u32::MAX
    }

    fn set_key_limit(&self, key: u64, limit: Option<u32>) -> Result<(), ConfigError> {
        self.limiter.set_key_limit(key, limit)
    }

    fn call_blocking(
        &self,
        interrupt: &Interrupt,
        op: &mut dyn FnMut() -> OpOutput,
    ) -> Result<OpOutput, RateLimiterError> {
        let key = self.key();
        self.answer(key, self.limiter.acquire(key, Some(interrupt)), 1)?;
        Ok(op())
    }
}
