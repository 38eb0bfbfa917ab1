//! `fixed_window::KeyedRateLimiter` as the simulator drives it: each caller's call goes to the
//! real keyed limiter's own entry point for the caller's key, and its listener records, after
//! each event, the key it was told and the keys the limiter holds.

use core::hash::BuildHasherDefault;
use core::time::Duration;
use std::hash::DefaultHasher;
use std::sync::{Arc, Weak};

use fixed_window::{
    ConfigError, Interrupt, KeyedRateLimiter, KeyedRateLimiterError, Peek, RateLimiterError,
};

use crate::record::{OpOutput, Record};
use crate::scenario::Scenario;
use crate::simulation::{LIMITER_NAME, panicking, record_event};
use crate::subject::{Granted, Operation, Subject};
use crate::virtual_clock::VirtualClock;
use crate::world::World;

/// Keys are hashed with std's `SipHash` under fixed keys rather than random ones, so that the
/// table's shards, and so its sweeps and its `len()`, are the same on every run of a seed.
type FixedHasher = BuildHasherDefault<DefaultHasher>;

/// The keyed limiter under test, and each caller's key.
pub(crate) struct KeyedSubject {
    limiter: KeyedRateLimiter<u64, VirtualClock, FixedHasher>,
    /// Each caller's key, by caller id.
    keys: Vec<u64>,
}

impl KeyedSubject {
    /// The keyed limiter `scenario` configures, on `clock`, its grid starting at the clock's
    /// reading now, with the scenario's panicking listeners around the one that records.
    pub(crate) fn new(
        scenario: &Scenario,
        clock: VirtualClock,
    ) -> Result<Arc<KeyedSubject>, ConfigError> {
        let config = &scenario.config;
        let mut builder =
            KeyedRateLimiter::<u64>::builder(LIMITER_NAME, config.limit, config.period)?;
        for &(key, limit) in &scenario.key_limits.built {
            builder = builder.key_limit(key, limit)?;
        }
        let builder = builder
            .max_wait(config.max_wait)
            .origin(scenario.origin_choice)
            .hasher(FixedHasher::default())
            .clock(clock);
        let keys = scenario.callers.iter().map(|caller| caller.key).collect();
        Ok(Arc::new_cyclic(|this: &Weak<KeyedSubject>| {
            let mut builder = builder;
            let listeners = &scenario.panicking_listeners;
            for listener in listeners.iter().filter(|l| l.before_recorder) {
                let panics = panicking(listener.every);
                builder = builder.listener(move |_: &u64, event| panics(event));
            }
            let this = this.clone();
            builder = builder.listener(move |key: &u64, event| {
                record_event(event);
                // The subject is alive while a run calls it: the run holds it.
                let len = this.upgrade().map_or(0, |subject| subject.limiter.len());
                World::with(|world| {
                    world.record(Record::Held {
                        caller: world.current(),
                        key: *key,
                        len: u64::try_from(len).unwrap_or(u64::MAX),
                    });
                });
            });
            for listener in listeners.iter().filter(|l| !l.before_recorder) {
                let panics = panicking(listener.every);
                builder = builder.listener(move |_: &u64, event| panics(event));
            }
            // Built here, once: the grid's origin is the clock's reading now (virtual time 0).
            let limiter = builder.build();
            KeyedSubject { limiter, keys }
        }))
    }

    /// The key of the caller whose turn it is.
    fn key(&self) -> u64 {
        World::with(World::current)
            .and_then(|caller| self.keys.get(caller as usize).copied())
            .unwrap_or(0)
    }
}

/// The plain error of a keyed one for `key`; one that names another key is reported with
/// fields that are not the limiter's, which the oracle flags.
fn plain(error: &KeyedRateLimiterError<&u64>, key: u64) -> RateLimiterError {
    if **error.key() == key {
        return error.error();
    }
    RateLimiterError::Rejected {
        name: "an error naming another key",
        limit: 0,
        period: core::time::Duration::ZERO,
        max_wait: core::time::Duration::ZERO,
        retry_after: error.retry_after().unwrap_or_default(),
    }
}

impl Subject for KeyedSubject {
    async fn call_async(&self, op: Operation) -> Result<OpOutput, RateLimiterError> {
        let key = self.key();
        self.limiter
            .call_async(&key, op)
            .await
            .map_err(|error| plain(&error, key))
    }

    async fn acquire_async(&self, n: u32) -> Result<Granted, RateLimiterError> {
        let key = self.key();
        let permit = if n == 1 {
            self.limiter.acquire_async(&key).await
        } else {
            self.limiter.acquire_n_async(&key, n).await
        }
        .map_err(|error| plain(&error, key))?;
        Ok(Granted {
            at: permit.at().as_nanos(),
            remaining: permit.remaining(),
        })
    }

    fn try_acquire(&self, n: u32) -> Result<Granted, RateLimiterError> {
        let key = self.key();
        let permit = if n == 1 {
            self.limiter.try_acquire(&key)
        } else {
            self.limiter.try_acquire_n(&key, n)
        }
        .map_err(|error| plain(&error, key))?;
        Ok(Granted {
            at: permit.at().as_nanos(),
            remaining: permit.remaining(),
        })
    }

    fn drain(&self) -> Duration {
        self.limiter.drain(&self.key())
    }

    fn peek(&self) -> Peek {
        self.limiter.peek(&self.key())
    }

    fn set_limit(&self, limit: u32) -> Result<(), ConfigError> {
        self.limiter.set_limit(limit)
    }

    fn limit_ceiling(&self) -> u32 {
        self.limiter.limit_ceiling()
    }

    fn set_key_limit(&self, key: u64, limit: Option<u32>) -> Result<(), ConfigError> {
        if let Some(limit) = limit {
            return self.limiter.set_key_limit(key, limit);
        }
        self.limiter.clear_key_limit(&key);
        Ok(())
    }

    fn call_blocking(
        &self,
        interrupt: &Interrupt,
        op: &mut dyn FnMut() -> OpOutput,
    ) -> Result<OpOutput, RateLimiterError> {
        let key = self.key();
        self.limiter
            .call_interruptible(&key, interrupt, op)
            .map_err(|error| plain(&error, key))
    }
}

impl core::fmt::Debug for KeyedSubject {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeyedSubject")
            .field("limiter", &self.limiter)
            .field("callers", &self.keys.len())
            .finish()
    }
}
