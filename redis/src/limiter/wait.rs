//! How a call waits, for the server and for its sleeps: by awaiting, or by blocking its
//! thread. The limiter's attempt and waiting loops are written once, as futures over a
//! [`Wait`]; a blocking call's waits have ended by the time their futures are made, so its
//! loop runs to its end in one poll.

use core::cell::OnceCell;
use core::future::{Future, ready};
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::Arc;

use fixed_window::{Clock, Interrupt, Interrupted};

use super::in_flight::Awaited;
use super::key_limit::read_limits;
use crate::coalescer::Reply;
use crate::connection::Connection;
use crate::protocol::{Protocol, ScriptCall};
use crate::registrar::Registrar;
use crate::unavailable::Unavailable;

/// How a call waits.
pub(super) trait Wait {
    /// The server's reply to `call`.
    fn acquire(&self, connection: &Connection, call: ScriptCall) -> impl Future<Output = Reply>;

    /// The limiter registered, or why it could not be.
    fn register(
        &self,
        connection: &Connection,
        registrar: Arc<Registrar>,
    ) -> impl Future<Output = Result<(), Unavailable>>;

    /// `pause` of `clock`'s time gone by, or the sleep interrupted.
    fn sleep<'c, C: Clock>(
        &self,
        clock: &'c C,
        pause: Duration,
    ) -> impl Future<Output = Result<(), Interrupted>> + 'c;

    /// Another task's lease call landed, or `timeout` passed.
    fn landed(
        &self,
        connection: &Connection,
        awaited: Awaited,
        timeout: Duration,
    ) -> impl Future<Output = ()>;

    /// The live limits read again and adopted, or the read failed (see [`read_limits`]).
    fn read_limits(
        &self,
        connection: &Connection,
        protocol: &Arc<Protocol>,
    ) -> impl Future<Output = ()>;
}

/// An asynchronous call's waits: awaited.
pub(super) struct Awaiting;

impl Wait for Awaiting {
    fn acquire(&self, connection: &Connection, call: ScriptCall) -> impl Future<Output = Reply> {
        connection.acquire(call)
    }

    fn register(
        &self,
        connection: &Connection,
        registrar: Arc<Registrar>,
    ) -> impl Future<Output = Result<(), Unavailable>> {
        connection.run(async move { registrar.ensure().await })
    }

    fn sleep<'c, C: Clock>(
        &self,
        clock: &'c C,
        pause: Duration,
    ) -> impl Future<Output = Result<(), Interrupted>> + 'c {
        clock.sleep_async(pause)
    }

    fn landed(
        &self,
        connection: &Connection,
        awaited: Awaited,
        timeout: Duration,
    ) -> impl Future<Output = ()> {
        awaited.landed(connection, timeout)
    }

    fn read_limits(
        &self,
        connection: &Connection,
        protocol: &Arc<Protocol>,
    ) -> impl Future<Output = ()> {
        let read = connection.run(read_limits(
            Arc::clone(connection.link()),
            Arc::clone(protocol),
        ));
        async move {
            let _ = read.await;
        }
    }
}

/// A blocking call's waits: each blocks the thread while its future is made, which is then
/// ready. Its sleeps heed the caller's interrupt, or one of the call's own, made at its first
/// sleep.
pub(super) struct Blocking<'i> {
    interrupt: Option<&'i Interrupt>,
    own: OnceCell<Interrupt>,
}

impl<'i> Blocking<'i> {
    /// Waits that sleeps `interrupt` (if any) can end.
    pub(super) fn new(interrupt: Option<&'i Interrupt>) -> Blocking<'i> {
        Blocking {
            interrupt,
            own: OnceCell::new(),
        }
    }
}

impl Wait for Blocking<'_> {
    fn acquire(&self, connection: &Connection, call: ScriptCall) -> impl Future<Output = Reply> {
        ready(connection.acquire_blocking(call))
    }

    fn register(
        &self,
        connection: &Connection,
        registrar: Arc<Registrar>,
    ) -> impl Future<Output = Result<(), Unavailable>> {
        ready(connection.run_blocking(async move { registrar.ensure().await }))
    }

    fn sleep<'c, C: Clock>(
        &self,
        clock: &'c C,
        pause: Duration,
    ) -> impl Future<Output = Result<(), Interrupted>> + 'c {
        let interrupt = self
            .interrupt
            .unwrap_or_else(|| self.own.get_or_init(Interrupt::new));
        ready(clock.sleep(pause, interrupt))
    }

    fn landed(
        &self,
        connection: &Connection,
        awaited: Awaited,
        timeout: Duration,
    ) -> impl Future<Output = ()> {
        awaited.landed_blocking(connection, timeout);
        ready(())
    }

    fn read_limits(
        &self,
        connection: &Connection,
        protocol: &Arc<Protocol>,
    ) -> impl Future<Output = ()> {
        let _ = connection.run_blocking(read_limits(
            Arc::clone(connection.link()),
            Arc::clone(protocol),
        ));
        ready(())
    }
}

/// The output of `future`, a blocking call's loop, on the calling thread.
pub(super) fn block<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    // Its waits have ended when their futures are made, so one poll runs it to its end; no
    // executor is entered for it, as a blocking wait may itself block on one.
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => futures::executor::block_on(future),
    }
}
