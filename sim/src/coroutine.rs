//! Blocking callers' coroutines: stackful, resumed one at a time on the simulator's thread.
//!
//! A blocking call runs the limiter's real blocking path on a stack of its own; when the
//! limiter sleeps on the virtual clock, the sleep registers its timer and [`suspend`]s the
//! coroutine, and the simulator resumes it with how the sleep ended. A coroutine's stack is a
//! mapping of memory that costs microseconds to make and unmake, several simulated calls'
//! worth, so finished coroutines wait in a [`Pool`] (the simulation world's, one per thread)
//! for the next blocking call instead.

use std::cell::RefCell;

use fixed_window::Interrupted;
use generator::{Generator, Gn};

use crate::record::Outcome;

/// A coroutine's stack, in words: room for the limiter's call, a panic's unwinding and the
/// panic hook's message, with a guard page below it. Pages are only touched as used.
const STACK_WORDS: usize = 32 * 1024;

/// The most finished coroutines a pool keeps for later calls: as many as a scenario may have
/// blocking callers.
const POOL_SIZE: usize = 64;

/// A blocking call to run, on a coroutine, to its end.
pub(crate) type Call = Box<dyn FnOnce() -> Handback>;

/// What a coroutine hands back to the simulator when it suspends or its call ends.
#[derive(Debug)]
pub(crate) enum Handback {
    /// Its call began a sleep, its timer registered; it waits to be woken.
    Sleeping,
    /// Its call ended; the message of a panic that escaped it, if one did.
    Done(Outcome, Option<String>),
    /// It has no call, and waits for one.
    Idle,
}

/// What the simulator resumes a coroutine with.
enum Input {
    /// Run this call.
    Run(Call),
    /// The sleep it waits in ended so.
    Woken(Result<(), Interrupted>),
    /// End, for good.
    Stop,
}

/// One coroutine, running a blocking call or idle.
pub(crate) struct Coroutine(Generator<'static, Input, Handback>);

impl std::fmt::Debug for Coroutine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coroutine").finish_non_exhaustive()
    }
}

/// Coroutines that wait for a call: made once, used by call after call.
#[derive(Debug)]
pub(crate) struct Pool(RefCell<Vec<Coroutine>>);

impl Pool {
    pub(crate) const fn new() -> Pool {
        Pool(RefCell::new(Vec::new()))
    }

    /// Starts `call` on a coroutine from the pool (or a new one), until the call sleeps or
    /// ends.
    pub(crate) fn start(&self, call: Call) -> (Coroutine, Handback) {
        let pooled = self.0.borrow_mut().pop();
        let mut coroutine = pooled.unwrap_or_else(Coroutine::new);
        let handback = coroutine.send(Input::Run(call));
        (coroutine, handback)
    }

    /// Takes back a coroutine whose call ended.
    pub(crate) fn release(&self, coroutine: Coroutine) {
        let mut pool = self.0.borrow_mut();
        if pool.len() < POOL_SIZE {
            pool.push(coroutine);
        }
    }
}

impl Coroutine {
    /// Resumes the sleeping call with how its sleep ended, until it sleeps again or ends.
    pub(crate) fn wake(&mut self, woken: Result<(), Interrupted>) -> Handback {
        self.send(Input::Woken(woken))
    }

    fn new() -> Coroutine {
        let mut coroutine = Coroutine(Gn::<Input>::new_opt(STACK_WORDS, serve));
        // Runs it to its first wait for a call.
        coroutine.0.raw_send(None);
        coroutine
    }

    fn send(&mut self, input: Input) -> Handback {
        // A coroutine whose call let a panic out ends with it, and the panic goes on in the
        // simulator, so `None` (resuming one that ended) cannot happen.
        self.0.raw_send(Some(input)).unwrap_or(Handback::Idle)
    }
}

impl Drop for Coroutine {
    /// Lets the coroutine's body return before its stack goes: the coroutine library would
    /// otherwise unwind it with a panic of its own, swapping the process's panic hook while
    /// it does. A call still sleeping is woken as interrupted first, which ends it.
    fn drop(&mut self) {
        for _ in 0..STOP_ATTEMPTS {
            if self.0.is_done() {
                return;
            }
            self.0.raw_send(Some(Input::Stop));
        }
    }
}

/// How many times a coroutine being dropped is told to stop: a sleeping call first ends
/// (its sleep interrupted), then the idle body returns; a call that sleeps again regardless
/// is left to the coroutine library.
const STOP_ATTEMPTS: usize = 8;

/// A coroutine's body: runs the calls it is given, one after another, until told to stop.
fn serve() -> Handback {
    let mut input = wait(Handback::Idle);
    loop {
        match input {
            Some(Input::Run(call)) => {
                let ended = call();
                input = wait(ended);
            }
            // Woken with no call to wake: nothing to do but wait again.
            Some(Input::Woken(_)) => input = wait(Handback::Idle),
            Some(Input::Stop) | None => return Handback::Idle,
        }
    }
}

/// Suspends the running coroutine, handing `handback` to the simulator, until it is resumed.
#[expect(
    deprecated,
    reason = "generator's scoped API needs its handle passed down to the sleep, which the \
              limiter's `Clock::sleep` cannot carry; the free function finds the running \
              coroutine itself, as loom's scheduler does"
)]
fn wait(handback: Handback) -> Option<Input> {
    generator::yield_::<Input, Handback>(handback)
}

/// Whether the caller runs on a coroutine, where a sleep can wait for its timer.
pub(crate) fn on_coroutine() -> bool {
    generator::is_generator()
}

/// Suspends the running call's coroutine, its sleep's timer registered, until the simulator
/// wakes it with how the sleep ended.
pub(crate) fn suspend() -> Result<(), Interrupted> {
    match wait(Handback::Sleeping) {
        Some(Input::Woken(woken)) => woken,
        // `Stop` comes from a coroutine dropped mid-call, which wants the call over: ending
        // the sleep as interrupted ends it. (A call is never given to a sleeping one.)
        Some(Input::Run(_) | Input::Stop) | None => Err(Interrupted),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::{Handback, Pool, on_coroutine, suspend};
    use crate::record::Outcome;

    fn pooled(pool: &Pool) -> usize {
        pool.0.borrow().len()
    }

    /// A call that sleeps once and ends as its sleep did.
    fn sleeper() -> super::Call {
        Box::new(|| {
            assert!(on_coroutine());
            let outcome = match suspend() {
                Ok(()) => Outcome::Unfinished,
                Err(_) => Outcome::Interrupted,
            };
            Handback::Done(outcome, None)
        })
    }

    #[test]
    fn a_call_sleeps_is_woken_and_ends_and_its_coroutine_serves_the_next_call() {
        assert!(!on_coroutine());
        let pool = Pool::new();
        let (mut first, handback) = pool.start(sleeper());
        assert!(matches!(handback, Handback::Sleeping));
        // A second call while the first sleeps gets a coroutine of its own.
        let (mut second, handback) = pool.start(sleeper());
        assert!(matches!(handback, Handback::Sleeping));
        let ended = second.wake(Err(fixed_window::Interrupted));
        assert!(matches!(ended, Handback::Done(Outcome::Interrupted, None)));
        let ended = first.wake(Ok(()));
        assert!(matches!(ended, Handback::Done(Outcome::Unfinished, None)));
        pool.release(first);
        pool.release(second);
        assert_eq!(pooled(&pool), 2);
        let (third, handback) = pool.start(Box::new(|| Handback::Done(Outcome::Cancelled, None)));
        assert!(matches!(handback, Handback::Done(Outcome::Cancelled, None)));
        assert_eq!(pooled(&pool), 1, "the third call reused a pooled coroutine");
        pool.release(third);
    }

    #[test]
    fn a_coroutine_dropped_while_its_call_sleeps_ends_the_call_first() {
        let woken = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&woken);
        let (coroutine, handback) = Pool::new().start(Box::new(move || {
            // Unwound by the coroutine library instead, the call would never get here.
            let interrupted = suspend().is_err();
            seen.store(interrupted, Ordering::Relaxed);
            Handback::Done(Outcome::Interrupted, None)
        }));
        assert!(matches!(handback, Handback::Sleeping));
        drop(coroutine);
        assert!(woken.load(Ordering::Relaxed));
    }
}
