//! The connection made anew after the server refused this client.
//!
//! redis-rs's `ConnectionManager` reconnects after an I/O error only: once a reconnection is
//! refused (`WRONGPASS` after an ACL user was deleted, a restart without the user, a rotated
//! password), it keeps that refusal for every later call, and no call makes it try again. A
//! live connection refused with `NOAUTH` or `NOPERM` is not replaced either. So whatever
//! refusal a call meets (see [`Unavailable`]'s `Denied`), this layer drops the connection and
//! makes a new one from the client in effect, no sooner than a back-off after the last
//! renewal ([`RENEWAL_MIN`] doubled per refusal, at most [`RENEWAL_MAX`]), so that a refusing
//! server gets a few connections a second at most, and a client whose credentials work again
//! is deciding within [`RENEWAL_MAX`] (plus one connection) of the next call.
//!
//! The client can be replaced ([`Renewal::replace`]): the next call connects with it, so a
//! rotated password needs no restart.

use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisError, RedisResult, Value};
use tokio::time::Instant;

use crate::renewal_wait::renewal_wait;
#[cfg(doc)]
use crate::renewal_wait::{RENEWAL_MAX, RENEWAL_MIN};
use crate::server::Server;
use crate::unavailable::denied;

/// The connection the calls go over, and the client it is made from.
pub(crate) struct Renewal {
    /// The client new connections are made from: the one the limiter was built with, or the
    /// last one [`replace`](Renewal::replace)d.
    server: Mutex<Server>,
    /// The connection in use, once made.
    current: Mutex<Option<Made>>,
    /// A refusal (or a new client) asks for a new connection: read on every call without a
    /// lock.
    due: AtomicBool,
    /// Refusals since the last answer that was not one: the back-off's exponent.
    refusals: AtomicU32,
    /// When the next renewal may be made.
    not_before: Mutex<Instant>,
    /// The refusal of the last renewal, if it was refused: the calls get it until a renewal
    /// succeeds, rather than the connection it was meant to replace (made with a client since
    /// replaced, or whose credentials the server no longer takes).
    refusal: Mutex<Option<RedisError>>,
    /// Held by the one call making a new connection; the others wait for it.
    renewing: tokio::sync::Mutex<()>,
    /// How long making a connection may take.
    timeout: Duration,
}

/// A connection made: a node's manager or a cluster's connection, each a cheap handle to
/// one multiplexed connection.
#[derive(Clone)]
enum Made {
    Node(ConnectionManager),
    Cluster(ClusterConnection),
}

impl Renewal {
    /// No connection yet to `server`'s server; each making is bounded by `timeout`.
    pub(crate) fn new(server: Server, timeout: Duration) -> Renewal {
        Renewal {
            server: Mutex::new(server),
            current: Mutex::new(None),
            due: AtomicBool::new(true),
            refusals: AtomicU32::new(0),
            not_before: Mutex::new(Instant::now()),
            refusal: Mutex::new(None),
            renewing: tokio::sync::Mutex::new(()),
            timeout,
        }
    }

    /// Whether the server is a cluster (a replaced client is always of the same kind).
    pub(crate) fn is_cluster(&self) -> bool {
        lock(&self.server).is_cluster()
    }

    /// Makes the first connection now, waiting for it (bounded by the timeout).
    ///
    /// # Errors
    ///
    /// The client's error if the server cannot be reached or refuses this client.
    pub(crate) async fn connect(&self) -> RedisResult<()> {
        self.made().await.map(drop)
    }

    /// New connections are made from `server` from now on; the next call makes one at once.
    /// `false` (and nothing changes) if `server` is not of the kind in use (a cluster for a
    /// node, or the reverse): the limiter's keys would not be where its protocol sends them.
    pub(crate) fn replace(&self, server: Server) -> bool {
        let mut current = lock(&self.server);
        if current.is_cluster() != server.is_cluster() {
            return false;
        }
        *current = server;
        drop(current);
        self.refusals.store(0, Ordering::Relaxed);
        *lock(&self.not_before) = Instant::now();
        self.due.store(true, Ordering::Release);
        true
    }

    /// The connection to use for one request: the current one, or a new one if a renewal is
    /// due and its back-off has passed (or there is none yet).
    async fn made(&self) -> RedisResult<Made> {
        if !self.due.load(Ordering::Acquire)
            && let Some(made) = lock(&self.current).clone()
        {
            return Ok(made);
        }
        let _renewing = self.renewing.lock().await;
        let current = lock(&self.current).clone();
        let due = self.due.load(Ordering::Acquire) && Instant::now() >= *lock(&self.not_before);
        if !due && let Some(refusal) = lock(&self.refusal).clone() {
            return Err(refusal);
        }
        match current {
            Some(made) if !due => Ok(made),
            _ => match self.make().await {
                Ok(made) => {
                    *lock(&self.current) = Some(made.clone());
                    *lock(&self.refusal) = None;
                    self.due.store(false, Ordering::Release);
                    Ok(made)
                }
                Err(err) => {
                    if denied(&err) {
                        *lock(&self.refusal) = Some(err.clone());
                    }
                    self.back_off();
                    Err(err)
                }
            },
        }
    }

    /// A new connection from the client in effect, made now (bounded by the timeout).
    async fn make(&self) -> RedisResult<Made> {
        #[cfg(feature = "tls")]
        install_crypto_provider();
        let server = lock(&self.server).clone();
        let made = async {
            match server {
                Server::Node(client) => {
                    // One connection attempt per reconnection, no back-off of redis-rs's
                    // between them: a call that finds the connection broken starts a new
                    // attempt, so the limiter recovers on the first call after the server is
                    // back, instead of after a back-off that may have grown to a minute. No
                    // response timeout of redis-rs's own (it would default to 500 ms): the
                    // script call bounds the whole call by the configured timeout, so a second
                    // timer per request would only cost, and a shorter one would cut calls the
                    // configuration allows.
                    let config = ConnectionManagerConfig::new()
                        .set_connection_timeout(Some(self.timeout))
                        .set_response_timeout(None)
                        .set_number_of_retries(0);
                    ConnectionManager::new_with_config(client, config)
                        .await
                        .map(Made::Node)
                }
                // It reads the slot map from the first node that answers, and follows `MOVED`
                // and `ASK` from then on. Its own retries and timeouts are the client's, as
                // the application built it.
                Server::Cluster(client) => client.get_async_connection().await.map(Made::Cluster),
            }
        };
        match tokio::time::timeout(self.timeout, made).await {
            Ok(made) => made,
            Err(_) => Err(RedisError::from(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no connection within {:?}", self.timeout),
            ))),
        }
    }

    /// Takes note of a request's outcome: the first refusal over a connection makes a renewal
    /// due after the back-off (later ones, while it is due, do not put it off); any other
    /// answer ends the back-off.
    fn observe<T>(&self, outcome: &RedisResult<T>) {
        match outcome {
            Err(err) if denied(err) && !self.due.load(Ordering::Acquire) => self.back_off(),
            Ok(_) if self.refusals.load(Ordering::Relaxed) > 0 => {
                self.refusals.store(0, Ordering::Relaxed);
            }
            _ => {}
        }
    }

    /// One more refusal (of a connection, or of a renewal): the next renewal waits
    /// [`renewal_wait`] of the refusals before this one ([`RENEWAL_MIN`] doubled per refusal,
    /// at most [`RENEWAL_MAX`]), from now.
    fn back_off(&self) {
        let wait = renewal_wait(self.refusals.fetch_add(1, Ordering::Relaxed));
        *lock(&self.not_before) = Instant::now() + wait;
        self.due.store(true, Ordering::Release);
    }

    /// Sends `cmd` over the connection in use (renewing it first if due).
    pub(crate) async fn request(&self, cmd: &Cmd) -> RedisResult<Value> {
        let outcome = match self.made().await? {
            Made::Node(mut manager) => manager.req_packed_command(cmd).await,
            Made::Cluster(mut cluster) => cluster.req_packed_command(cmd).await,
        };
        self.observe(&outcome);
        outcome
    }

    /// Sends a pipeline over the connection in use (renewing it first if due).
    pub(crate) async fn request_pipeline(
        &self,
        pipeline: &Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let outcome = match self.made().await? {
            Made::Node(mut manager) => manager.req_packed_commands(pipeline, offset, count).await,
            Made::Cluster(mut cluster) => {
                cluster.req_packed_commands(pipeline, offset, count).await
            }
        };
        self.observe(&outcome);
        outcome
    }

    /// The database the connection in use selects (0 before one is made).
    pub(crate) fn db(&self) -> i64 {
        match &*lock(&self.current) {
            Some(Made::Node(manager)) => manager.get_db(),
            Some(Made::Cluster(cluster)) => cluster.get_db(),
            None => 0,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; were one poisoned, its value is still whole.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// rustls needs one crypto provider for the process: ring's (the one this crate builds), unless
/// the application installed one already. Without it, redis-rs's TLS connection would panic if
/// the process built rustls with more than one provider.
#[cfg(feature = "tls")]
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one meanwhile; either serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
