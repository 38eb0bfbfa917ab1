//! The lease calls a limiter has in flight, by key. An attempt whose key's share is spent
//! while another task of the process has a lease call for that key in flight waits for that
//! call's reply (at most the limiter's timeout) and then spends from the new share, instead of
//! counting itself on the server: a share of `s` permits then costs one round trip, not one
//! plus one per task that came by while it was in flight.

use core::time::Duration;
use std::sync::Arc;

use dashmap::DashMap;
use tokio::sync::Notify;
use tokio::sync::futures::OwnedNotified;

use crate::connection::Connection;

/// The lease calls in flight, each with what its waiters are woken by.
#[derive(Debug, Default)]
pub(super) struct LeasesInFlight {
    calls: DashMap<Box<str>, Arc<Notify>>,
}

/// A lease call in flight for one key: when it is dropped (the call finished, failed or was
/// abandoned), the key is no longer in flight and its waiters wake.
pub(super) struct Landing<'a> {
    in_flight: &'a LeasesInFlight,
    key: &'a str,
    notify: Arc<Notify>,
}

/// The wake-up of a task waiting for a key's lease call.
pub(super) struct Awaited(OwnedNotified);

impl LeasesInFlight {
    /// Marks `key`'s lease call as in flight until the [`Landing`] is dropped.
    pub(super) fn start<'a>(&'a self, key: &'a str) -> Landing<'a> {
        let notify = Arc::new(Notify::new());
        self.calls.insert(key.into(), Arc::clone(&notify));
        Landing {
            in_flight: self,
            key,
            notify,
        }
    }

    /// What to wait on for `key`'s lease call, if one is in flight.
    pub(super) fn awaited(&self, key: &str) -> Option<Awaited> {
        // Made while the entry is read: a landing removes it (under the shard's write lock)
        // before it wakes the waiters, so a wake-up made here is never missed.
        let call = self.calls.get(key)?;
        Some(Awaited(Arc::clone(&call).notified_owned()))
    }
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        // Only this call's mark: another may have been made since (after a timeout).
        self.in_flight
            .calls
            .remove_if(self.key, |_, notify| Arc::ptr_eq(notify, &self.notify));
        self.notify.notify_waiters();
    }
}

impl Awaited {
    /// Waits for the call to land, at most `timeout`: in the caller's task inside a tokio
    /// runtime, else as a task on `connection`'s runtime, which times it
    /// ([`Connection::run`]).
    pub(super) async fn landed(self, connection: &Connection, timeout: Duration) {
        // A wait that times out is no error, nor one whose task failed: the attempt is then
        // counted on the server. In the caller's own task, since every share a call leases
        // is waited for by the tasks that came by meanwhile (fifteen of sixteen on a hot
        // key): a task spawned for each wait cost a spawn, a wake-up of another worker and a
        // join per waiter per share.
        let _ = connection
            .run(async move {
                let _ = tokio::time::timeout(timeout, self.0).await;
                Ok(())
            })
            .await;
    }

    /// Waits as [`landed`](Awaited::landed), blocking the thread.
    pub(super) fn landed_blocking(self, connection: &Connection, timeout: Duration) {
        let _ = connection.run_blocking(async move {
            let _ = tokio::time::timeout(timeout, self.0).await;
            Ok(())
        });
    }
}
