//! The production transport: redis-rs's `ConnectionManager` (it reconnects) and its script
//! support (`EVALSHA`, and `SCRIPT LOAD` then `EVALSHA` again when the server answers
//! `NOSCRIPT`), on a tokio runtime. Blocking calls run on the same machinery.
//!
//! Attempts are coalesced (see [`Coalescer`]): one script call in flight at a time, carrying
//! every attempt queued while the one before it was in flight.

use core::fmt;
use core::future::Future;
use core::time::Duration;
use std::sync::Arc;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Script};
use tokio::runtime::{Handle, Runtime};

use crate::coalescer::{Coalescer, Reply};
use crate::invocation::invoke;
use crate::protocol::ScriptCall;
use crate::script::SCRIPT;
use crate::unavailable::{Unavailable, UnavailableKind};

/// A connection to the server and the runtime that drives it.
#[derive(Clone)]
pub(crate) struct Connection {
    manager: ConnectionManager,
    coalescer: Arc<Coalescer>,
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
        let coalescer = Coalescer::new(
            manager.clone(),
            Arc::clone(&script),
            timeout,
            handle.clone(),
        );
        Connection {
            manager,
            coalescer,
            script,
            timeout,
            handle,
            runtime,
        }
    }

    /// Decides one attempt's `call` in the next script call, with whatever other attempts
    /// wait then, and returns the reply's part for it.
    ///
    /// The caller waits at most the timeout from now, queued or in flight alike. Whatever
    /// ends a script call without its reply (a timeout, a lost connection, a reset) is every
    /// attempt's of that call. Inside a tokio runtime the attempt runs in the caller's task;
    /// elsewhere (another executor) it runs as a task on the connection's runtime.
    pub(crate) async fn acquire(&self, call: ScriptCall) -> Reply {
        if Handle::try_current().is_ok() {
            self.coalescer.acquire(call).await
        } else {
            let coalescer = Arc::clone(&self.coalescer);
            self.handle
                .spawn(async move { coalescer.acquire(call).await })
                .await
                .unwrap_or_else(|err| Err(task_failed(&err)))
        }
    }

    /// [`acquire`](Connection::acquire), blocking the calling thread until the answer.
    pub(crate) fn acquire_blocking(&self, call: ScriptCall) -> Reply {
        let coalescer = Arc::clone(&self.coalescer);
        block_on(&self.handle, async move { coalescer.acquire(call).await })
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
    // No response timeout of redis-rs's own (it would default to 500 ms): [`invoke`] bounds
    // the whole call by the configured timeout, so a second timer per request would only cost,
    // and a shorter one would cut calls the configuration allows.
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(None)
        .set_number_of_retries(0);
    match tokio::time::timeout(timeout, ConnectionManager::new_with_config(client, config)).await {
        Ok(manager) => manager.map_err(|err| Unavailable::from(&err)),
        Err(_) => Err(Unavailable::new(
            UnavailableKind::Timeout,
            format!("no connection within {timeout:?}"),
        )),
    }
}
