//! Registering over the real connection: one try at a time, shared by the calls that wait for
//! it, and, for a limiter started without the server, retried in the background.

use core::time::Duration;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use tokio::runtime::Handle;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::connection::Link;
use crate::error::{Conflict, SharedError};
use crate::eviction::EvictionRisk;
use crate::invocation::timed_out;
use crate::protocol::Protocol;
use crate::registration::Registration;
use crate::transport::Transport;
use crate::unavailable::{Unavailable, UnavailableKind};

/// A wait standing for none, as tokio's own `timeout` uses for a duration past its clock's end.
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// One limiter's registration: its state, and the try in flight.
pub(crate) struct Registrar {
    link: Arc<Link>,
    protocol: Arc<Protocol>,
    /// What the tries found.
    state: Mutex<State>,
    /// `state.registration.is_settled()`, read on every call without the lock.
    settled: AtomicBool,
    /// The configuration fixes the origin: calls need not wait for a registration.
    fixed: bool,
    /// What the server's memory policy may evict, read once registered: `None` inside if it
    /// cannot evict the limiter's keys, or the user may not read it.
    eviction: OnceLock<Option<EvictionRisk>>,
    /// Held by the one try in flight; a call that finds it taken waits for that try's outcome.
    trying: tokio::sync::Mutex<()>,
    /// On a cluster, the conflict that refused the registration: every call is refused with
    /// it (see [`Registrar::refused`]).
    refused: OnceLock<Conflict>,
}

struct State {
    registration: Registration,
    /// Tries that ended (failed or not): a waiter that sees it move takes the outcome of the
    /// try it waited for instead of starting another.
    ended: u64,
}

impl Registrar {
    pub(crate) fn new(link: Arc<Link>, protocol: Arc<Protocol>) -> Arc<Registrar> {
        let fixed = protocol.config().fixed_origin().is_some();
        Arc::new(Registrar {
            link,
            protocol,
            state: Mutex::new(State {
                registration: Registration::new(),
                ended: 0,
            }),
            settled: AtomicBool::new(false),
            fixed,
            eviction: OnceLock::new(),
            trying: tokio::sync::Mutex::new(()),
            refused: OnceLock::new(),
        })
    }

    /// Whether the server answered the registration: attempts are sent from then on.
    #[inline]
    pub(crate) fn is_settled(&self) -> bool {
        self.settled.load(Ordering::Acquire)
    }

    /// Whether calls may go to the server: registered (or refused, which the server then tells
    /// each call), or with a fixed origin, which every process knows without asking: its
    /// registration, if any, only checks the stored configuration and reads the memory policy.
    #[inline]
    pub(crate) fn is_ready(&self) -> bool {
        self.fixed || self.is_settled()
    }

    /// The conflict every call of a refused limiter on a cluster ends with. There no call
    /// reads the configuration key (it lives in another slot than the counters), and a refused
    /// limiter has no origin to count by: without this, its calls would be answered as not
    /// registered, and fail open with a permit. (On one node each call carries the
    /// configuration key, and the server refuses it itself.)
    #[inline]
    pub(crate) fn refused(&self) -> Option<&Conflict> {
        self.refused.get()
    }

    pub(crate) fn registration(&self) -> Registration {
        self.lock().registration.clone()
    }

    /// What the server's memory policy may evict, once the limiter has registered and read
    /// it: `Some(None)` if nothing of the limiter's, or if it could not be read.
    pub(crate) fn eviction(&self) -> Option<&Option<EvictionRisk>> {
        self.eviction.get()
    }

    /// One try, whatever the state: what `connect` returns.
    pub(crate) async fn register_once(&self) -> Result<u64, SharedError> {
        let _trying = self.trying.lock().await;
        let outcome = self.attempt().await;
        let registered = outcome.is_ok();
        self.record(outcome.clone());
        if registered {
            self.read_memory_policy().await;
        }
        outcome
    }

    /// Makes sure the limiter is registered before an attempt, within one timeout from now:
    /// at once if it is; otherwise it takes the outcome of a try in flight, or tries itself.
    ///
    /// # Errors
    ///
    /// Why it is not registered: the cause of the failed try.
    pub(crate) async fn ensure(&self) -> Result<(), Unavailable> {
        if self.is_settled() {
            return Ok(());
        }
        let deadline = deadline(self.link.timeout());
        let ended = self.lock().ended;
        let Ok(_trying) = tokio::time::timeout_at(deadline, self.trying.lock()).await else {
            return Err(Unavailable::new(
                UnavailableKind::Timeout,
                format!(
                    "the registration in progress did not end within {:?}",
                    self.link.timeout()
                ),
            ));
        };
        if self.is_settled() {
            return Ok(());
        }
        if self.lock().ended == ended {
            let outcome = tokio::time::timeout_at(deadline, self.attempt())
                .await
                .unwrap_or_else(|_| Err(self.unavailable(timed_out(self.link.timeout()))));
            let registered = outcome.is_ok();
            self.record(outcome);
            if registered {
                self.read_memory_policy().await;
            }
        }
        match &self.lock().registration {
            Registration::Pending { cause, .. } => Err(cause.clone().unwrap_or_else(|| {
                Unavailable::new(UnavailableKind::Connection, "no registration has ended")
            })),
            _ => Ok(()),
        }
    }

    /// Registers in the background until the server answers, waiting
    /// [`Registration::retry_in`] between tries; stops when the returned handle is dropped.
    pub(crate) fn spawn(self: &Arc<Self>, handle: &Handle) -> Background {
        let registrar = Arc::clone(self);
        let task = handle.spawn(async move {
            loop {
                if registrar.ensure().await.is_ok() {
                    return;
                }
                let wait = registrar.lock().registration.retry_in();
                tokio::time::sleep(wait).await;
            }
        });
        Background(task.abort_handle())
    }

    /// Connects if need be and runs the registration call, the whole bounded by the timeout.
    async fn attempt(&self) -> Result<u64, SharedError> {
        if self.protocol.is_cluster() && self.protocol.config().time_key().is_some() {
            // Its counters are in other slots than any one time key: no call could read both.
            return Err(self.unavailable(Unavailable::new(
                UnavailableKind::Reply,
                "a time key is for one node only: on a cluster it would be in another slot than the counters",
            )));
        }
        let timeout = self.link.timeout();
        // Made anew each time: it carries the version of the limit in effect. It reads the
        // live limits of keys with it.
        let call = self.protocol.limits_call();
        let reply = match tokio::time::timeout(timeout, self.link.run_limits(&call)).await {
            Ok(reply) => reply,
            Err(_) => Err(timed_out(timeout)),
        };
        let reply = match &reply {
            Ok((numbers, text)) => Ok((numbers.as_slice(), text.as_deref())),
            Err(cause) => Err(cause.clone()),
        };
        self.protocol.limits_read(&call, reply)
    }

    /// Reads the server's memory limit and eviction policy (`CONFIG GET`, each bounded by the
    /// timeout). A user without `CONFIG GET`, a server that renamed it (as managed services
    /// do) or a timeout leave the risk unknown, reported as none: the check is advice, not a
    /// condition of registering.
    async fn read_memory_policy(&self) {
        let risk = async {
            let mut transport = self.link.transport().await.ok()?;
            let timeout = self.link.timeout();
            let policy = config_get(&mut transport, "maxmemory-policy", timeout).await?;
            let maxmemory = config_get(&mut transport, "maxmemory", timeout)
                .await?
                .parse()
                .ok()?;
            EvictionRisk::of(&policy, maxmemory)
        }
        .await;
        let _ = self.eviction.set(risk);
    }

    fn record(&self, outcome: Result<u64, SharedError>) {
        let mut state = self.lock();
        state.registration.record(outcome);
        state.ended += 1;
        if let Registration::Refused(conflict) = &state.registration
            && self.protocol.is_cluster()
        {
            let _ = self.refused.set(*conflict);
        }
        if state.registration.is_settled() {
            self.settled.store(true, Ordering::Release);
        }
    }

    fn unavailable(&self, cause: Unavailable) -> SharedError {
        SharedError::Unavailable {
            name: self.protocol.config().name(),
            cause,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; were it poisoned, the state is still whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One server setting (`CONFIG GET`), or `None` if it cannot be read within `timeout`.
async fn config_get(
    transport: &mut Transport,
    parameter: &str,
    timeout: Duration,
) -> Option<String> {
    let mut command = redis::cmd("CONFIG");
    command.arg("GET").arg(parameter);
    let query = command.query_async::<HashMap<String, String>>(transport);
    let mut reply = tokio::time::timeout(timeout, query).await.ok()?.ok()?;
    reply.remove(parameter)
}

/// The background registration of a limiter started without the server: stopped when the
/// limiter is dropped.
pub(crate) struct Background(AbortHandle);

impl Drop for Background {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn deadline(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout).unwrap_or_else(|| now + FAR_FUTURE)
}
