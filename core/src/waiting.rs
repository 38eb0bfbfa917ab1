//! The waiting calls, blocking and async, written once for every limiter: functions of a
//! policy, the source its step claims from, and a clock. Each round drives the sans-IO step
//! and sleeps through the clock until the step decides.

use core::time::Duration;

use crate::attempt::Attempt;
use crate::clock::Clock;
use crate::error::RateLimiterError;
use crate::instant::Instant;
use crate::interrupt::Interrupt;
use crate::permit::Permit;
use crate::policy::{Policy, Source};
use crate::weight::Weight;

/// A waiting call on `source`, blocking the thread through `clock`'s sleep; `interrupt` (or
/// none) ends a sleep early.
#[inline]
pub(crate) fn wait_blocking<C: Clock, S: Source, W: Weight>(
    policy: &Policy<S::Listener>,
    source: &S,
    clock: &C,
    interrupt: Option<&Interrupt>,
    weight: W,
) -> Result<Permit, RateLimiterError> {
    let start = clock.now();
    let deadline = policy.settings.deadline(start);
    match step(policy, source, start, deadline, None, weight) {
        Step::Done(result) => result,
        Step::Sleep(pause) => keep_waiting_blocking(
            policy,
            source,
            clock,
            interrupt,
            (start, deadline, pause),
            weight,
        ),
    }
}

/// The rest of a blocking wait, from its first sleep: out of line, so the calls that are
/// decided at once (most of them) stay short.
#[cold]
#[inline(never)]
fn keep_waiting_blocking<C: Clock, S: Source, W: Weight>(
    policy: &Policy<S::Listener>,
    source: &S,
    clock: &C,
    interrupt: Option<&Interrupt>,
    (mut now, deadline, mut pause): (Instant, Instant, Duration),
    weight: W,
) -> Result<Permit, RateLimiterError> {
    // Made only when a wait begins, so a call that never waits never allocates.
    let own_interrupt;
    let interrupt = if let Some(interrupt) = interrupt {
        interrupt
    } else {
        own_interrupt = Interrupt::new();
        &own_interrupt
    };
    loop {
        clock
            .sleep(pause, interrupt)
            .map_err(|_| policy.settings.interrupted())?;
        let slept_from = Some(now);
        now = clock.now();
        pause = match step(policy, source, now, deadline, slept_from, weight) {
            Step::Done(result) => return result,
            Step::Sleep(pause) => pause,
        };
    }
}

/// A waiting call on `source`, awaiting `clock`'s asynchronous sleep.
pub(crate) async fn wait_async<C: Clock, S: Source, W: Weight>(
    policy: &Policy<S::Listener>,
    source: &S,
    clock: &C,
    weight: W,
) -> Result<Permit, RateLimiterError> {
    let mut now = clock.now();
    let deadline = policy.settings.deadline(now);
    let mut slept_from = None;
    loop {
        let pause = match step(policy, source, now, deadline, slept_from, weight) {
            Step::Done(result) => return result,
            Step::Sleep(pause) => pause,
        };
        clock
            .sleep_async(pause)
            .await
            .map_err(|_| policy.settings.interrupted())?;
        slept_from = Some(now);
        now = clock.now();
    }
}

/// One round of a waiting call on `source`, shared by the blocking and async loops, which
/// differ only in how they sleep: the call's result, or how long to sleep before the next
/// round. `slept_from` is the reading before the previous sleep, if there was one.
// Inlined, a call decided at once (most are) costs a third fewer instructions.
#[expect(clippy::inline_always, reason = "measured on the hot path")]
#[inline(always)]
pub(crate) fn step<S: Source, W: Weight>(
    policy: &Policy<S::Listener>,
    source: &S,
    now: Instant,
    deadline: Instant,
    slept_from: Option<Instant>,
    weight: W,
) -> Step {
    let (attempt, limit) = match policy.decide(source, now, deadline, weight) {
        Ok(decided) => decided,
        Err(excess) => return Step::Done(Err(policy.settings.too_many(excess))),
    };
    match attempt {
        Attempt::Permitted { remaining } => Step::Done(Ok(Permit::new(now, remaining))),
        Attempt::Rejected { retry_after } => {
            Step::Done(Err(policy.settings.rejected(limit, retry_after)))
        }
        // A stopped clock (or one that stepped back across the sleep) would otherwise keep the
        // caller sleeping forever. The rejection is decided here, not in the step, so its event
        // is emitted here.
        Attempt::Wait { until } if slept_from.is_some_and(|before| now <= before) => {
            let retry_after = until.saturating_duration_since(now);
            policy.rejected(source, now, retry_after);
            Step::Done(Err(policy.settings.rejected(limit, retry_after)))
        }
        Attempt::Wait { until } => Step::Sleep(until.saturating_duration_since(now)),
    }
}

/// What a waiting call does next.
pub(crate) enum Step {
    /// Return this.
    Done(Result<Permit, RateLimiterError>),
    /// Sleep this long, then attempt again.
    Sleep(Duration),
}
