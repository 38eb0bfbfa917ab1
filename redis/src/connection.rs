//! The production transport: redis-rs's `ConnectionManager` (it reconnects) and its script
//! support (`EVALSHA`, and `SCRIPT LOAD` then `EVALSHA` again when the server answers
//! `NOSCRIPT`), on a tokio runtime. Blocking calls run on the same machinery.
//!
//! Attempts are coalesced: a driver task, spawned on the connection's runtime when it opens,
//! sends one script call at a time; attempts that arrive while one is in flight queue, and
//! when it returns, everything queued (up to [`MAX_BATCH`]) goes in the next call. The driver
//! owns the sending, so a caller dropped while its attempt is queued or in flight strands
//! nobody: a queued attempt whose caller is gone is not sent, and a reply for a caller that
//! is gone is dropped.

use core::fmt;
use core::future::Future;
use core::time::Duration;
use std::sync::Arc;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisError, Script};
use tokio::runtime::{Handle, Runtime};

use tokio::sync::{mpsc, oneshot};

use crate::protocol::{MAX_BATCH, ScriptCall};
use crate::script::SCRIPT;
use crate::unavailable::{Unavailable, UnavailableKind};

/// A connection to the server and the runtime that drives it.
#[derive(Clone)]
pub(crate) struct Connection {
    manager: ConnectionManager,
    /// The driver's queue of attempts.
    queue: mpsc::UnboundedSender<Queued>,
    script: Arc<Script>,
    timeout: Duration,
    /// The runtime the connection's tasks run on: the caller's for [`Connection::open`], the
    /// limiter's own for [`Connection::open_blocking`].
    handle: Handle,
    runtime: Option<Arc<OwnedRuntime>>,
}

/// A runtime the limiter owns. Shut down in the background when dropped, so that dropping a
/// limiter inside an async task does not panic as dropping a runtime there would.
struct OwnedRuntime(Option<Runtime>);

impl Drop for OwnedRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Connection {
    /// Connects on the current tokio runtime.
    pub(crate) async fn open(client: Client, timeout: Duration) -> Result<Connection, Unavailable> {
        let handle = Handle::current();
        let manager = connect(client, timeout).await?;
        Ok(Connection::new(manager, timeout, handle, None))
    }

    /// Connects on a runtime of its own: one worker thread that runs the connection's tasks
    /// while callers block.
    pub(crate) fn open_blocking(
        client: Client,
        timeout: Duration,
    ) -> Result<Connection, Unavailable> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fixed-window-redis")
            .enable_all()
            .build()
            .map_err(|err| {
                Unavailable::new(
                    UnavailableKind::Connection,
                    format!("cannot start the client's runtime: {err}"),
                )
            })?;
        let handle = runtime.handle().clone();
        let owned = Arc::new(OwnedRuntime(Some(runtime)));
        let manager = block_on(&handle, connect(client, timeout))?;
        Ok(Connection::new(manager, timeout, handle, Some(owned)))
    }

    fn new(
        manager: ConnectionManager,
        timeout: Duration,
        handle: Handle,
        runtime: Option<Arc<OwnedRuntime>>,
    ) -> Connection {
        let script = Arc::new(Script::new(SCRIPT));
        let (queue, queued) = mpsc::unbounded_channel();
        // The driver ends when the last clone of the connection (its queue's sender) drops.
        drop(handle.spawn(drive(queued, manager.clone(), Arc::clone(&script), timeout)));
        Connection {
            manager,
            queue,
            script,
            timeout,
            handle,
            runtime,
        }
    }

    /// Decides one attempt's `call` in the driver's next script call, with whatever other
    /// attempts are queued then, and returns the reply's part for it.
    ///
    /// The caller waits at most the timeout from now, queued or in flight alike. Whatever
    /// ends a script call without its reply (a timeout, a lost connection, a reset) is every
    /// attempt's of that call. Inside a tokio runtime the caller waits in its own task;
    /// elsewhere (another executor) the wait runs as a task on the connection's runtime.
    pub(crate) async fn acquire(&self, call: ScriptCall) -> Result<Vec<i64>, Unavailable> {
        let answer = self.enqueue(call)?;
        if Handle::try_current().is_ok() {
            answer.await
        } else {
            self.handle
                .spawn(answer)
                .await
                .unwrap_or_else(|err| Err(task_failed(&err)))
        }
    }

    /// [`acquire`](Connection::acquire), blocking the calling thread until the answer.
    pub(crate) fn acquire_blocking(&self, call: ScriptCall) -> Result<Vec<i64>, Unavailable> {
        let answer = self.enqueue(call)?;
        block_on(&self.handle, answer)
    }

    /// Queues `call` for the driver; the answer, bounded by the timeout.
    fn enqueue(
        &self,
        call: ScriptCall,
    ) -> Result<impl Future<Output = Result<Vec<i64>, Unavailable>> + Send + 'static, Unavailable>
    {
        let (answer, answered) = oneshot::channel();
        self.queue
            .send(Queued { call, answer })
            .map_err(|_| driver_stopped())?;
        let timeout = self.timeout;
        Ok(async move {
            // Dropping `answered` (on the timeout, or with the caller) tells the driver: a
            // queued attempt is then not sent.
            match tokio::time::timeout(timeout, answered).await {
                Ok(answer) => answer.unwrap_or_else(|_| Err(driver_stopped())),
                Err(_) => Err(Unavailable::new(
                    UnavailableKind::Timeout,
                    format!("no reply within {timeout:?}"),
                )),
            }
        })
    }

    /// Runs `call` at once, on its own, and returns the script's reply (a registration). Inside a tokio runtime the call runs in
    /// the caller's task; elsewhere (another executor) it runs as a task on the connection's
    /// runtime.
    pub(crate) async fn run(&self, call: ScriptCall) -> Result<Vec<i64>, Unavailable> {
        let manager = self.manager.clone();
        let script = Arc::clone(&self.script);
        let timeout = self.timeout;
        let invocation = async move { invoke(manager, script, &call, timeout).await };
        if Handle::try_current().is_ok() {
            invocation.await
        } else {
            self.handle
                .spawn(invocation)
                .await
                .unwrap_or_else(|err| Err(task_failed(&err)))
        }
    }

    /// Runs `call`, blocking the calling thread until the reply or the timeout.
    pub(crate) fn run_blocking(&self, call: ScriptCall) -> Result<Vec<i64>, Unavailable> {
        let manager = self.manager.clone();
        let script = Arc::clone(&self.script);
        let timeout = self.timeout;
        let invocation = async move { invoke(manager, script, &call, timeout).await };
        block_on(&self.handle, invocation)
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("script", &self.script.get_hash())
            .field("timeout", &self.timeout)
            .field("ownsruntime", &self.runtime.is_some())
            .finish_non_exhaustive()
    }
}

/// Runs `future` on `handle`'s runtime and blocks until it is done. Outside any runtime the
/// calling thread drives it itself; inside one (a blocking call made from async code, which
/// the docs advise against) it runs as a task and the thread only waits, so that tokio's
/// refusal to nest runtimes cannot panic.
fn block_on<T: Send + 'static>(
    handle: &Handle,
    future: impl Future<Output = Result<T, Unavailable>> + Send + 'static,
) -> Result<T, Unavailable> {
    if Handle::try_current().is_err() {
        handle.block_on(future)
    } else {
        futures::executor::block_on(handle.spawn(future))
            .unwrap_or_else(|err| Err(task_failed(&err)))
    }
}

/// An attempt waiting for the driver, and where its answer goes.
struct Queued {
    call: ScriptCall,
    answer: oneshot::Sender<Result<Vec<i64>, Unavailable>>,
}

/// The driver: one script call in flight at a time, carrying every attempt queued when the
/// previous one returned (up to [`MAX_BATCH`]).
async fn drive(
    mut queue: mpsc::UnboundedReceiver<Queued>,
    manager: ConnectionManager,
    script: Arc<Script>,
    timeout: Duration,
) {
    let mut batch: Vec<Queued> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = queue.recv().await {
        batch.push(first);
        // Callers woken by the last reply are about to queue their next attempts: let them,
        // so that they go in this call rather than each in one of their own. Yield again
        // while a yield brought more: the callers run on other workers, in their own time.
        loop {
            tokio::task::yield_now().await;
            let before = batch.len();
            while batch.len() < MAX_BATCH {
                match queue.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            if batch.len() == before || batch.len() >= MAX_BATCH {
                break;
            }
        }
        // A caller dropped while queued takes nothing: its attempt is not sent.
        batch.retain(|queued| !queued.answer.is_closed());
        let mut members = batch.drain(..);
        let Some(Queued { mut call, answer }) = members.next() else {
            continue;
        };
        let mut answers = vec![answer];
        for Queued { call: next, answer } in members {
            // Attempts of one limiter, never more than MAX_BATCH: the join cannot refuse;
            // were it to, that attempt alone is unavailable, not the batch.
            match call.join(next) {
                Ok(()) => answers.push(answer),
                Err(_) => {
                    let _ = answer.send(Err(Unavailable::new(
                        UnavailableKind::Reply,
                        "an attempt could not join its batch",
                    )));
                }
            }
        }
        let reply = invoke(manager.clone(), Arc::clone(&script), &call, timeout).await;
        for (index, answer) in answers.into_iter().enumerate() {
            let part = match &reply {
                Ok(reply) => Ok(call.reply_for(reply, index).to_vec()),
                Err(cause) => Err(cause.clone()),
            };
            // A caller gone meanwhile has nobody to tell.
            let _ = answer.send(part);
        }
    }
}

fn driver_stopped() -> Unavailable {
    Unavailable::new(
        UnavailableKind::Connection,
        "the client's driver task stopped (its runtime shut down)",
    )
}

fn task_failed(err: &tokio::task::JoinError) -> Unavailable {
    Unavailable::new(
        UnavailableKind::Connection,
        format!("the client's task failed: {err}"),
    )
}

async fn connect(client: Client, timeout: Duration) -> Result<ConnectionManager, Unavailable> {
    // One connection attempt per reconnection, no back-off between them: a call that finds
    // the connection broken starts a new attempt, so the limiter recovers on the first call
    // after the server is back, instead of after a back-off that may have grown to a minute.
    // The response timeout is not set here: `invoke` bounds the whole call, so a second
    // timer per request would only cost.
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(timeout)
        .set_number_of_retries(0);
    match tokio::time::timeout(timeout, ConnectionManager::new_with_config(client, config)).await {
        Ok(manager) => manager.map_err(|err| unavailable(&err)),
        Err(_) => Err(Unavailable::new(
            UnavailableKind::Timeout,
            format!("no connection within {timeout:?}"),
        )),
    }
}

async fn invoke(
    mut manager: ConnectionManager,
    script: Arc<Script>,
    call: &ScriptCall,
    timeout: Duration,
) -> Result<Vec<i64>, Unavailable> {
    let mut invocation = script.prepare_invoke();
    for key in call.keys() {
        invocation.key(key);
    }
    for arg in call.args() {
        invocation.arg(arg);
    }
    // The whole call, a reload after NOSCRIPT and a wait for a reconnection included, is
    // bounded: a caller never waits on the server longer than the timeout.
    match tokio::time::timeout(timeout, invocation.invoke_async::<Vec<i64>>(&mut manager)).await {
        Ok(reply) => reply.map_err(|err| unavailable(&err)),
        Err(_) => Err(Unavailable::new(
            UnavailableKind::Timeout,
            format!("no reply within {timeout:?}"),
        )),
    }
}

/// The cause a redis-rs error stands for.
fn unavailable(err: &RedisError) -> Unavailable {
    let kind = if err.is_timeout() {
        UnavailableKind::Timeout
    } else if err.is_io_error()
        || err.is_connection_dropped()
        || err.is_connection_refusal()
        || err.is_unrecoverable_error()
    {
        UnavailableKind::Connection
    } else if err.kind() == redis::ErrorKind::TypeError {
        UnavailableKind::Reply
    } else {
        UnavailableKind::Server
    };
    Unavailable::new(kind, err.to_string())
}
