//! What the simulator drives: the real limiter, or a planted one, behind one
//! small trait, so that both go through exactly the same scenarios and the same oracle.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::panic::{self, PanicHookInfo};
use std::sync::Once;

use fixed_window::{ConfigError, Interrupt, Peek, RateLimiter, RateLimiterError};

use crate::record::{OpKind, OpOutput, Record};
use crate::virtual_clock::VirtualClock;
use crate::world::World;

/// The payload of every panic the simulator causes on purpose (operations and listeners that
/// panic). Any other payload caught from a call is a panic that escaped the limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimulatedPanic;

/// A granted permit, as the simulator sees it: the reading it was claimed at and the permits
/// left in its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Granted {
    /// The clock's reading when the permit was claimed, in nanoseconds.
    pub at: u64,
    /// Permits left in the window.
    pub remaining: u32,
}

/// A simulated operation, as the future `call_async` runs: when polled, it records that it
/// ran and returns (or panics) as its [`OpKind`] says. One concrete type, so handing it to a
/// call costs no allocation.
#[derive(Debug)]
pub struct Operation {
    kind: OpKind,
}

impl Operation {
    pub(crate) fn new(kind: OpKind) -> Operation {
        Operation { kind }
    }

    /// Runs the operation in the caller's turn, recording that it ran.
    pub(crate) fn run(&self) -> OpOutput {
        World::with(|world| {
            if let Some(at) = world.reading() {
                world.record(Record::OpRan {
                    caller: world.current(),
                    at,
                });
            }
        });
        match self.kind {
            OpKind::Succeeds => OpOutput::Succeeded,
            OpKind::Fails => OpOutput::Failed,
            // Without the panic hook, as listeners panic (see `simulation::panicking`).
            OpKind::Panics => std::panic::resume_unwind(Box::new(SimulatedPanic)),
        }
    }
}

impl Future for Operation {
    type Output = OpOutput;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<OpOutput> {
        Poll::Ready(self.run())
    }
}

/// A rate limiter as the simulator drives it: the entry points a user calls.
///
/// [`RateLimiter`] implements it by calling its own methods; the planted limiters of
/// [`PlantedBug`](crate::PlantedBug) implement it to show that the oracle catches their planted
/// bugs. The simulator is generic over it, so the futures are polled where they are, unboxed.
pub trait Subject: Send + Sync + 'static {
    /// Runs `op` if a permit is granted, awaiting the clock's sleep for a later window.
    fn call_async(
        &self,
        op: Operation,
    ) -> impl Future<Output = Result<OpOutput, RateLimiterError>> + '_;

    /// Awaits `n` permits of one window (`acquire_async` for one, `acquire_n_async`
    /// otherwise).
    fn acquire_async(&self, n: u32)
    -> impl Future<Output = Result<Granted, RateLimiterError>> + '_;

    /// Takes `n` permits if the window has them now (`try_acquire` for one, `try_acquire_n`
    /// otherwise).
    ///
    /// # Errors
    ///
    /// `Rejected` if the window has fewer left, `TooMany` if `n` is above the limit.
    fn try_acquire(&self, n: u32) -> Result<Granted, RateLimiterError>;

    /// Drains the window in effect (the caller's key's, for a keyed limiter), returning the
    /// time to the next window.
    fn drain(&self) -> Duration;

    /// What the window in effect (the caller's key's, for a keyed limiter) has left, taking
    /// nothing.
    fn peek(&self) -> Peek;

    /// Puts `limit` in force at once, the window's count kept.
    ///
    /// # Errors
    ///
    /// As the limiter's `set_limit`: a zero limit, or one above the ceiling.
    fn set_limit(&self, limit: u32) -> Result<(), ConfigError>;

    /// The largest limit [`set_limit`](Subject::set_limit) takes.
    fn limit_ceiling(&self) -> u32;

    /// Gives `key` a limit of its own at once (`None`: takes it away), its window's count
    /// kept. A limiter without keys has no key to give one to: it refuses (the simulator draws
    /// keys' limits for keyed scenarios only).
    ///
    /// # Errors
    ///
    /// As the keyed limiter's `set_key_limit`: a zero limit, or one above the ceiling.
    fn set_key_limit(&self, key: u64, limit: Option<u32>) -> Result<(), ConfigError> {
        let _ = (key, limit);
        Err(ConfigError::ZeroLimit)
    }

    /// Runs `op` if a permit is granted, blocking in the clock's sleep for a later window.
    ///
    /// # Errors
    ///
    /// `Rejected` or `Interrupted`, as the limiter's `call_interruptible`.
    fn call_blocking(
        &self,
        interrupt: &Interrupt,
        op: &mut dyn FnMut() -> OpOutput,
    ) -> Result<OpOutput, RateLimiterError>;
}

impl Subject for RateLimiter<VirtualClock> {
    fn call_async(
        &self,
        op: Operation,
    ) -> impl Future<Output = Result<OpOutput, RateLimiterError>> + '_ {
        RateLimiter::call_async(self, op)
    }

    async fn acquire_async(&self, n: u32) -> Result<Granted, RateLimiterError> {
        // One permit takes its own entry point, as a caller of one would.
        let permit = if n == 1 {
            RateLimiter::acquire_async(self).await?
        } else {
            RateLimiter::acquire_n_async(self, n).await?
        };
        Ok(Granted {
            at: permit.at().as_nanos(),
            remaining: permit.remaining(),
        })
    }

    fn try_acquire(&self, n: u32) -> Result<Granted, RateLimiterError> {
        let permit = if n == 1 {
            RateLimiter::try_acquire(self)?
        } else {
            RateLimiter::try_acquire_n(self, n)?
        };
        Ok(Granted {
            at: permit.at().as_nanos(),
            remaining: permit.remaining(),
        })
    }

    fn drain(&self) -> Duration {
        RateLimiter::drain(self)
    }

    fn peek(&self) -> Peek {
        RateLimiter::peek(self)
    }

    fn set_limit(&self, limit: u32) -> Result<(), ConfigError> {
        RateLimiter::set_limit(self, limit)
    }

    fn limit_ceiling(&self) -> u32 {
        RateLimiter::limit_ceiling(self)
    }

    fn call_blocking(
        &self,
        interrupt: &Interrupt,
        op: &mut dyn FnMut() -> OpOutput,
    ) -> Result<OpOutput, RateLimiterError> {
        self.call_interruptible(interrupt, op)
    }
}

/// Installs, once per process, a panic hook that stays silent for [`SimulatedPanic`] and for
/// panics in a simulated caller's turn (the simulator catches and reports those), and hands
/// every other panic to the hook that was there before.
pub fn silence_simulated_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            let quiet = info.payload().is::<SimulatedPanic>() || World::in_a_turn();
            if !quiet {
                previous(info);
            }
        }));
    });
}
