//! The production transport: redis-rs's `ConnectionManager` (it reconnects) or its cluster
//! connection (see [`Transport`]), and its script support (`EVALSHA`, and `SCRIPT LOAD` then
//! `EVALSHA` again when the server answers `NOSCRIPT`; `WAIT` with it when the configuration asks
//! for replicas), on a tokio runtime. Blocking calls run on the same machinery. The connection
//! is made by the first registration that reaches the server, so a limiter can exist before
//! the server does.
//!
//! Attempts are coalesced (see [`Coalescer`]): one script call in flight at a time per lane
//! (the one node, or each hash slot of a cluster), carrying every attempt queued in that lane
//! while the one before it was in flight.

use core::fmt;
use core::future::Future;
use core::time::Duration;
use std::sync::Arc;

use redis::Script;
use tokio::runtime::{Handle, Runtime};
use tokio::sync::OnceCell;

use crate::coalescer::{Coalescer, Reply};
use crate::invocation::{Terms, invoke};
use crate::protocol::ScriptCall;
use crate::renewal::Renewal;
use crate::script::SCRIPT;
use crate::server::Server;
use crate::transport::Transport;
use crate::unavailable::{Unavailable, UnavailableKind};

/// A connection to the server, made when first needed, and the runtime that drives it.
#[derive(Clone)]
pub(crate) struct Connection {
    link: Arc<Link>,
    /// The runtime the connection's tasks run on: the caller's for
    /// [`Connection::on_current_runtime`], the limiter's own for [`Connection::on_own_runtime`].
    handle: Handle,
    runtime: Option<Arc<OwnedRuntime>>,
}

/// The client and, once made, the connection and its coalescer: what a registration in the
/// background shares with the calls (not the runtime, which the limiter alone owns).
pub(crate) struct Link {
    /// The client and the connection made from it, made anew when the server refuses it.
    renewal: Arc<Renewal>,
    script: Arc<Script>,
    terms: Terms,
    handle: Handle,
    /// Made by the first registration that reaches the server; redis-rs's manager reconnects
    /// on its own from then on, and [`Renewal`] after a refusal.
    live: OnceCell<Live>,
}

/// A connection made, and the coalescer of the attempts sent over it.
struct Live {
    transport: Transport,
    coalescer: Arc<Coalescer>,
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
    /// A connection to `client`'s server on the current tokio runtime, not made yet.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub(crate) fn on_current_runtime(server: Server, terms: Terms) -> Connection {
        Connection::new(server, terms, Handle::current(), None)
    }

    /// A connection on a runtime of its own, not made yet: one worker thread that runs the
    /// connection's tasks while callers block.
    pub(crate) fn on_own_runtime(server: Server, terms: Terms) -> Result<Connection, Unavailable> {
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
        Ok(Connection::new(server, terms, handle, Some(owned)))
    }

    fn new(
        server: Server,
        terms: Terms,
        handle: Handle,
        runtime: Option<Arc<OwnedRuntime>>,
    ) -> Connection {
        let link = Arc::new(Link {
            renewal: Arc::new(Renewal::new(server, terms.timeout)),
            script: Arc::new(Script::new(SCRIPT)),
            terms,
            handle: handle.clone(),
            live: OnceCell::new(),
        });
        Connection {
            link,
            handle,
            runtime,
        }
    }

    /// What a registration shares with the calls.
    pub(crate) fn link(&self) -> &Arc<Link> {
        &self.link
    }

    /// The runtime the connection's tasks run on.
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Decides one attempt's `call` in the next script call, with whatever other attempts
    /// wait then, and returns the reply's part for it.
    ///
    /// The caller waits at most the timeout from now, queued or in flight alike. Whatever
    /// ends a script call without its reply (a timeout, a lost connection, a reset) is every
    /// attempt's of that call. Inside a tokio runtime the attempt runs in the caller's task;
    /// elsewhere (another executor) it runs as a task on the connection's runtime.
    ///
    /// A limiter registers before its first attempt, and so connects; one with a fixed origin
    /// need not, and its first attempt connects (within the timeout).
    pub(crate) async fn acquire(&self, call: ScriptCall) -> Reply {
        let Some(coalescer) = self.link.coalescer() else {
            let link = Arc::clone(&self.link);
            return self
                .run(async move { link.connected().await?.acquire(call).await })
                .await;
        };
        if Handle::try_current().is_ok() {
            coalescer.acquire(call).await
        } else {
            self.handle
                .spawn(async move { coalescer.acquire(call).await })
                .await
                .unwrap_or_else(|err| Err(task_failed(&err)))
        }
    }

    /// [`acquire`](Connection::acquire), blocking the calling thread until the answer.
    pub(crate) fn acquire_blocking(&self, call: ScriptCall) -> Reply {
        let Some(coalescer) = self.link.coalescer() else {
            let link = Arc::clone(&self.link);
            return block_on(&self.handle, async move {
                link.connected().await?.acquire(call).await
            });
        };
        block_on(&self.handle, async move { coalescer.acquire(call).await })
    }

    /// Runs `future` in the caller's task inside a tokio runtime, or as a task on the
    /// connection's runtime elsewhere (another executor).
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = Result<T, Unavailable>> + Send + 'static,
    ) -> Result<T, Unavailable> {
        if Handle::try_current().is_ok() {
            future.await
        } else {
            self.handle
                .spawn(future)
                .await
                .unwrap_or_else(|err| Err(task_failed(&err)))
        }
    }

    /// Runs `future` on the connection's runtime, blocking the calling thread until it ends.
    pub(crate) fn run_blocking<T: Send + 'static>(
        &self,
        future: impl Future<Output = Result<T, Unavailable>> + Send + 'static,
    ) -> Result<T, Unavailable> {
        block_on(&self.handle, future)
    }
}

impl Link {
    /// The connection, made now if it is not yet (bounded by the timeout); one caller makes
    /// it while the others wait for that.
    async fn live(&self) -> Result<&Live, Unavailable> {
        self.live
            .get_or_try_init(|| async {
                self.renewal
                    .connect()
                    .await
                    .map_err(|err| Unavailable::from(&err))?;
                let transport = Transport::new(Arc::clone(&self.renewal));
                let coalescer = Coalescer::new(
                    transport.clone(),
                    Arc::clone(&self.script),
                    self.terms,
                    self.handle.clone(),
                );
                Ok(Live {
                    transport,
                    coalescer,
                })
            })
            .await
    }

    fn coalescer(&self) -> Option<Arc<Coalescer>> {
        self.live.get().map(|live| Arc::clone(&live.coalescer))
    }

    /// The coalescer, connecting first if no connection was made yet.
    async fn connected(&self) -> Result<Arc<Coalescer>, Unavailable> {
        Ok(Arc::clone(&self.live().await?.coalescer))
    }

    /// The connection, made first if need be.
    pub(crate) async fn transport(&self) -> Result<Transport, Unavailable> {
        Ok(self.live().await?.transport.clone())
    }

    /// Whether the server is a cluster.
    pub(crate) fn is_cluster(&self) -> bool {
        self.renewal.is_cluster()
    }

    /// Connections are made from `server` from now on, the next call's at once; `false` if
    /// `server` is of another kind (see [`Renewal::replace`]).
    pub(crate) fn replace(&self, server: Server) -> bool {
        self.renewal.replace(server)
    }

    /// Runs `call` at once, on its own (a registration), connecting first if need be, and
    /// returns the script's reply. Each step is bounded by the timeout.
    pub(crate) async fn run(&self, call: &ScriptCall) -> Result<Vec<i64>, Unavailable> {
        let transport = self.transport().await?;
        invoke(transport, Arc::clone(&self.script), call, self.terms).await
    }

    /// Runs a [`limits_call`](crate::Protocol::limits_call) (or a
    /// [`restore_call`](crate::Protocol::restore_call)) on its own: its four numbers and the
    /// live limits' text, `None` if the server holds none.
    pub(crate) async fn run_limits(
        &self,
        call: &ScriptCall,
    ) -> Result<(Vec<i64>, Option<String>), Unavailable> {
        let transport = self.transport().await?;
        let reply: Vec<redis::Value> =
            invoke(transport, Arc::clone(&self.script), call, self.terms).await?;
        crate::invocation::live_reply(reply)
    }

    /// The timeout of one round trip.
    pub(crate) fn timeout(&self) -> Duration {
        self.terms.timeout
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("script", &self.link.script.get_hash())
            .field("terms", &self.link.terms)
            .field("connected", &self.link.live.initialized())
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
