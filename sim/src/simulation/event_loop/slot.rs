//! What the loop holds for each caller (its [`Slot`]): nothing before it arrives, then its call
//! in flight (an asynchronous call's future, pinned in memory reused from call to call, or a
//! blocking call's coroutine), then nothing once the call has ended.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use fixed_window::{Interrupt, RateLimiterError};

use super::outcome::{describe, failure};
use crate::coroutine::{Call, Coroutine, Handback};
use crate::record::{OpKind, OpOutput, Outcome};
use crate::scenario::Config;
use crate::subject::{Granted, Operation, Subject};

/// An asynchronous call's future, pinned in memory that the run reuses from call to call (an
/// emptied one waits in [`Simulation`](super::Simulation)'s spares).
pub(super) type Pinned<F> = Pin<Box<Option<F>>>;

/// An asynchronous call in flight: the future of `call_async` (`C`) or `acquire_async` (`A`).
pub(super) enum Task<C, A> {
    Call(Pinned<C>),
    Acquire(Pinned<A>),
}

impl<C, A> Task<C, A>
where
    C: Future<Output = Result<OpOutput, RateLimiterError>>,
    A: Future<Output = Result<Granted, RateLimiterError>>,
{
    /// Polls the call of `weight` permits.
    pub(super) fn poll(
        &mut self,
        context: &mut Context<'_>,
        config: &Config,
        weight: u32,
    ) -> Poll<Outcome> {
        match self {
            Task::Call(call) => match call.as_mut().as_pin_mut() {
                Some(call) => call.poll(context).map(|result| match result {
                    Ok(output) => Outcome::Permitted {
                        remaining: None,
                        op: Some(output),
                    },
                    Err(error) => failure(&error, config, weight),
                }),
                // A task's memory holds its future until the task leaves its slot.
                None => Poll::Pending,
            },
            Task::Acquire(acquire) => match acquire.as_mut().as_pin_mut() {
                Some(acquire) => acquire.poll(context).map(|result| match result {
                    Ok(granted) => Outcome::Permitted {
                        remaining: Some(granted.remaining),
                        op: None,
                    },
                    Err(error) => failure(&error, config, weight),
                }),
                None => Poll::Pending,
            },
        }
    }
}

/// Pins `future` in spare memory if there is some.
pub(super) fn pinned<F>(spares: &mut Vec<Pinned<F>>, future: F) -> Pinned<F> {
    match spares.pop() {
        Some(mut spare) => {
            spare.as_mut().set(Some(future));
            spare
        }
        None => Box::pin(Some(future)),
    }
}

/// Drops the future in `pinned` and keeps its memory in `spares`.
pub(super) fn spare<F>(spares: &mut Vec<Pinned<F>>, mut pinned: Pinned<F>) {
    pinned.as_mut().set(None);
    spares.push(pinned);
}

pub(super) enum Slot<C, A> {
    Waiting,
    Async(Task<C, A>),
    /// A blocking call in flight. Boxed, so that every variant holds at most one pointer:
    /// a slot is then a pair of words, which moves in and out of the table as two registers
    /// rather than through a copy on the stack that stalls the load behind it.
    Blocking(Box<Blocking>),
    Done,
}

/// A blocking call in flight: its coroutine, and the interrupt handle its call watches.
pub(super) struct Blocking {
    pub(super) coroutine: Coroutine,
    pub(super) interrupt: Interrupt,
}

/// A blocking caller's call, to run on a coroutine: the limiter's `call_interruptible`,
/// watching `interrupt`, with an operation that does as `op` says.
pub(super) fn blocking_call<S: Subject>(
    subject: Arc<S>,
    interrupt: Interrupt,
    op: OpKind,
    config: Config,
) -> Call {
    Box::new(move || {
        let operation = Operation::new(op);
        let result = catch_unwind(AssertUnwindSafe(|| {
            subject.call_blocking(&interrupt, &mut || operation.run())
        }));
        let (outcome, message) = match result {
            Ok(Ok(output)) => (
                Outcome::Permitted {
                    remaining: None,
                    op: Some(output),
                },
                None,
            ),
            Ok(Err(error)) => (failure(&error, &config, 1), None),
            Err(payload) => describe(&*payload),
        };
        Handback::Done(outcome, message)
    })
}
