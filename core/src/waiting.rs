//! The waiting loops, blocking and async, written once for every limiter: each round drives
//! the limiter's sans-IO step and sleeps through its clock until the step decides.

use core::time::Duration;

use crate::attempt::Attempt;
use crate::clock::Clock;
use crate::error::RateLimiterError;
use crate::instant::Instant;
use crate::interrupt::Interrupt;
use crate::permit::Permit;

/// What the waiting loops need of a limiter: its clock, a call's deadline, one acquire step,
/// and how it reports a rejection or an interruption.
///
/// Implemented by [`RateLimiter`](crate::RateLimiter) and by one key of a
/// [`KeyedRateLimiter`](crate::KeyedRateLimiter); they differ only in which state word the step
/// claims from and which events it emits.
pub(crate) trait Waiting {
    type Clock: Clock;

    fn clock(&self) -> &Self::Clock;

    /// The deadline of a call that starts at `start`.
    fn deadline(&self, start: Instant) -> Instant;

    /// One acquire step, emitting the `Permitted` or `Rejected` event it decides.
    fn attempt(&self, now: Instant, deadline: Instant) -> Attempt;

    /// The error of a rejection the step decided (its event already emitted).
    fn rejected(&self, retry_after: Duration) -> RateLimiterError;

    /// A rejection decided outside the step: emits its event and returns its error.
    fn reject(&self, now: Instant, next_window: Instant) -> RateLimiterError;

    fn interrupted(&self) -> RateLimiterError;
}

/// Takes a permit, sleeping through the clock (blocking the thread) until the step decides;
/// `interrupt`, if given, ends a sleep at once.
pub(crate) fn acquire_blocking<L: Waiting>(
    limiter: &L,
    interrupt: Option<&Interrupt>,
) -> Result<Permit, RateLimiterError> {
    let clock = limiter.clock();
    let mut now = clock.now();
    let deadline = limiter.deadline(now);
    let mut slept_from = None;
    // A call that never waits must not allocate, so the handle for an uninterruptible
    // wait is made only when a wait begins.
    let mut own_interrupt = None;
    loop {
        let pause = match step(limiter, now, deadline, slept_from) {
            Step::Done(result) => return result,
            Step::Sleep(pause) => pause,
        };
        let interrupt =
            interrupt.unwrap_or_else(|| own_interrupt.get_or_insert_with(Interrupt::new));
        clock
            .sleep(pause, interrupt)
            .map_err(|_| limiter.interrupted())?;
        slept_from = Some(now);
        now = clock.now();
    }
}

/// Takes a permit, awaiting the clock's asynchronous sleep until the step decides.
pub(crate) async fn acquire_async<L: Waiting>(limiter: &L) -> Result<Permit, RateLimiterError> {
    let clock = limiter.clock();
    let mut now = clock.now();
    let deadline = limiter.deadline(now);
    let mut slept_from = None;
    loop {
        let pause = match step(limiter, now, deadline, slept_from) {
            Step::Done(result) => return result,
            Step::Sleep(pause) => pause,
        };
        clock
            .sleep_async(pause)
            .await
            .map_err(|_| limiter.interrupted())?;
        slept_from = Some(now);
        now = clock.now();
    }
}

/// One round of a waiting call, shared by the blocking and async loops, which differ only in
/// how they sleep: the call's result, or how long to sleep before the next round.
/// `slept_from` is the reading before the previous sleep, if there was one.
fn step<L: Waiting>(
    limiter: &L,
    now: Instant,
    deadline: Instant,
    slept_from: Option<Instant>,
) -> Step {
    match limiter.attempt(now, deadline) {
        Attempt::Permitted { remaining } => Step::Done(Ok(Permit { at: now, remaining })),
        Attempt::Rejected { retry_after } => Step::Done(Err(limiter.rejected(retry_after))),
        // A stopped clock (or one that stepped back across the sleep) would otherwise keep
        // the caller sleeping forever.
        Attempt::Wait { until } if slept_from.is_some_and(|before| now <= before) => {
            Step::Done(Err(limiter.reject(now, until)))
        }
        Attempt::Wait { until } => Step::Sleep(until.saturating_duration_since(now)),
    }
}

/// What a waiting call does next.
enum Step {
    /// Return this.
    Done(Result<Permit, RateLimiterError>),
    /// Sleep this long, then attempt again.
    Sleep(Duration),
}
