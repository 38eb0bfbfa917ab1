//! How a waiting call pauses: how it sleeps, and what it does between reading the state and
//! writing it. The waiting loop is written once, as a future; a blocking call drives it with a
//! pause whose futures are ready at once, an asynchronous call with the clock's own sleep.

use core::future::{Future, ready};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use fixed_window::{Clock, Interrupt, Interrupted};

/// How a call pauses.
pub(crate) trait Pause {
    /// Sleeps `duration` on `clock`.
    fn sleep<C: Clock>(
        &mut self,
        clock: &C,
        duration: Duration,
    ) -> impl Future<Output = Result<(), Interrupted>>;

    /// Lets other callers run between a racing bug's read of the state and its write.
    fn between_read_and_write(&mut self) -> impl Future<Output = ()>;
}

/// A blocking call: it sleeps in the clock's blocking sleep and never lets anyone in between
/// (real threads, or a checker's, interleave it on their own).
pub(crate) struct Blocking<'a> {
    /// The handle that may interrupt the sleeps, if the caller gave one.
    given: Option<&'a Interrupt>,
    /// The handle made when the first sleep begins, if none was given: made lazily, as core
    /// does, so a call that never waits adds no synchronisation for a checker to explore.
    made: Option<Interrupt>,
}

impl<'a> Blocking<'a> {
    pub(crate) fn new(given: Option<&'a Interrupt>) -> Blocking<'a> {
        Blocking { given, made: None }
    }
}

impl Pause for Blocking<'_> {
    fn sleep<C: Clock>(
        &mut self,
        clock: &C,
        duration: Duration,
    ) -> impl Future<Output = Result<(), Interrupted>> {
        let interrupt = match self.given {
            Some(given) => given,
            None => self.made.get_or_insert_with(Interrupt::new),
        };
        ready(clock.sleep(duration, interrupt))
    }

    fn between_read_and_write(&mut self) -> impl Future<Output = ()> {
        ready(())
    }
}

/// An asynchronous call: it awaits the clock's asynchronous sleep, and yields to its executor
/// between a racing bug's read and write, so that even an executor on one thread (the
/// simulator's) runs other callers in the gap.
pub(crate) struct Async;

impl Pause for Async {
    fn sleep<C: Clock>(
        &mut self,
        clock: &C,
        duration: Duration,
    ) -> impl Future<Output = Result<(), Interrupted>> {
        clock.sleep_async(duration)
    }

    fn between_read_and_write(&mut self) -> impl Future<Output = ()> {
        YieldNow(false)
    }
}

/// Pending once, then ready: every other task due now runs in between.
pub(crate) struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            context.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Runs `future` to its end on this thread. With a [`Blocking`] pause every future the loop
/// awaits is ready at once, so the first poll finishes it; polling again is only the contract
/// of a future that said it was pending.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}
