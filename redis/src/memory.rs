//! The local memory of full windows: keys this process learned are full, and until when it
//! may reject them without asking the server.

use core::time::Duration;
use std::sync::Mutex;

use dashmap::DashMap;
use fixed_window::Instant;

/// How much faster than the server's clock the local clock may run before a local rejection
/// could outlast the server's window: a local rejection ends `retry_after / DRIFT_ALLOWANCE`
/// before the earliest local instant the window can end at. 1/1000 is ten times the tolerance
/// of an ordinary quartz clock, so on ordinary hardware a local rejection never runs late.
pub const DRIFT_ALLOWANCE: u32 = 1_000;

/// A window known to be full, mapped onto the local clock.
///
/// The server decided at some instant between `sent` (the local reading before the request)
/// and `received` (after the reply), and said the window ends `retry_after` later. So on the
/// local clock the window opens between `sent + retry_after` and `received + retry_after`,
/// if both clocks run at the same rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FullWindow {
    /// Until then (exclusive), a local rejection cannot be late:
    /// `sent + retry_after − retry_after / DRIFT_ALLOWANCE`.
    pub(crate) reject_until: Instant,
    /// The earliest local instant the window may open at: `sent + retry_after`.
    pub(crate) opens_by: Instant,
    /// The latest: `received + retry_after`. A waiting call sleeps until then (or its
    /// deadline), and `retry_after` is measured to it, so a caller told to retry never comes
    /// back before the window opened.
    pub(crate) opens_at: Instant,
}

impl FullWindow {
    /// The window a reply said is full for `retry_after`, or `None` if the local clock cannot
    /// represent its end, read on a clock of `resolution` (see [`latest_local_end`]): the
    /// latest the window opens is a tick after `received + retry_after`, a reading being up
    /// to a tick behind the time.
    pub(crate) fn new(
        sent: Instant,
        received: Instant,
        retry_after: Duration,
        resolution: Duration,
    ) -> Option<FullWindow> {
        Some(FullWindow {
            reject_until: latest_local_end(sent, retry_after, resolution)?,
            opens_by: sent.checked_add(retry_after)?,
            opens_at: received
                .max(sent)
                .checked_add(retry_after)?
                .checked_add(resolution)?,
        })
    }
}

/// The local instant until which a process may act on a window the server said ends `left`
/// after it decided, the request having been sent at `sent`, on a clock of `resolution`:
/// `sent + left − left / DRIFT_ALLOWANCE − resolution`. Local rejections end there, and leased
/// shares are spent only before it. A reading is up to a tick behind the time, so a local
/// decision at a reading before this instant is made, in time, a tick before it at most.
/// `None` if the local clock cannot represent it.
pub(crate) fn latest_local_end(
    sent: Instant,
    left: Duration,
    resolution: Duration,
) -> Option<Instant> {
    sent.checked_add(
        left.saturating_sub(left / DRIFT_ALLOWANCE)
            .saturating_sub(resolution),
    )
}

/// Full windows by key, at most `capacity` of them.
///
/// Lookups take a shard's read lock; insertions are serialised by one mutex (they happen once
/// per key and window, after a round trip) so the bound is exact. When the map is at capacity
/// an insertion first drops every entry whose `reject_until` has passed, but no more often
/// than the earliest remaining entry expires, so a map full of live entries costs one check
/// per insertion, not a sweep; if nothing could be dropped the new window is not remembered
/// and its key simply goes to the server.
#[derive(Debug)]
pub(crate) struct FullWindows {
    capacity: usize,
    entries: DashMap<Box<str>, FullWindow>,
    /// Serialises insertions; holds the instant before which a sweep would free nothing.
    inserting: Mutex<Instant>,
}

impl FullWindows {
    pub(crate) fn new(capacity: usize) -> FullWindows {
        FullWindows {
            capacity,
            entries: DashMap::new(),
            inserting: Mutex::new(Instant::ZERO),
        }
    }

    /// The full window remembered for `key`, if a local rejection at `now` cannot be late.
    #[inline]
    pub(crate) fn get(&self, key: &str, now: Instant) -> Option<FullWindow> {
        if self.capacity == 0 {
            return None;
        }
        let window = *self.entries.get(key)?;
        (now < window.reject_until).then_some(window)
    }

    /// Remembers that `key`'s window is full, if it is worth it (a local rejection is possible
    /// after `now`) and there is room. The latest reply is the one that counts: a window
    /// already over when its reply came (an attempt that waited in the queue, or a long round
    /// trip) forgets what an earlier reply said, which a server clock stepped forward since
    /// may have made too long.
    pub(crate) fn remember(&self, key: &str, window: FullWindow, now: Instant) {
        if self.capacity == 0 {
            return;
        }
        if window.reject_until <= now {
            self.entries.remove(key);
            return;
        }
        let mut quiet_until = self
            .inserting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(mut entry) = self.entries.get_mut(key) {
            *entry = window;
            return;
        }
        if self.entries.len() >= self.capacity && now >= *quiet_until {
            let mut earliest = Instant::MAX;
            self.entries.retain(|_, entry| {
                let live = now < entry.reject_until;
                if live {
                    earliest = earliest.min(entry.reject_until);
                }
                live
            });
            *quiet_until = earliest;
        }
        if self.entries.len() < self.capacity {
            *quiet_until = (*quiet_until).min(window.reject_until);
            self.entries.insert(key.into(), window);
        }
    }

    /// Forgets every window: the limit changed, and a window full under the old one may have
    /// room under the new one.
    pub(crate) fn clear(&self) {
        let _inserting = self
            .inserting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.entries.clear();
    }

    /// Forgets `key`'s window.
    pub(crate) fn forget(&self, key: &str) {
        self.entries.remove(key);
    }

    /// How many windows are remembered, expired ones not yet dropped included.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(micros: u64) -> Instant {
        Instant::from_nanos(micros * 1_000)
    }

    fn window(sent: u64, received: u64, retry_after: u64) -> FullWindow {
        FullWindow::new(
            at(sent),
            at(received),
            Duration::from_micros(retry_after),
            Duration::ZERO,
        )
        .unwrap_or_else(|| unreachable!("small instants"))
    }

    #[test]
    fn a_full_window_maps_to_the_earliest_end_less_the_drift_allowance() {
        let w = window(1_000, 1_300, 10_000);
        assert_eq!(w.opens_by, at(11_000));
        assert_eq!(w.opens_at, at(11_300));
        assert_eq!(w.reject_until, at(11_000 - 10));
        assert_eq!(
            FullWindow::new(
                Instant::MAX,
                Instant::MAX,
                Duration::from_micros(1),
                Duration::ZERO
            ),
            None
        );
    }

    #[test]
    fn a_coarse_clock_rejects_locally_a_tick_earlier_and_retries_a_tick_later() {
        let tick = Duration::from_micros(15);
        let coarse = FullWindow::new(at(1_000), at(1_300), Duration::from_micros(10_000), tick)
            .unwrap_or_else(|| unreachable!("small instants"));
        assert_eq!(coarse.reject_until, at(11_000 - 10 - 15));
        assert_eq!(coarse.opens_by, at(11_000));
        assert_eq!(coarse.opens_at, at(11_300 + 15));
        // A tick longer than the window's rest: nothing is rejected locally.
        let long = FullWindow::new(at(1_000), at(1_300), Duration::from_micros(10), tick)
            .unwrap_or_else(|| unreachable!("small instants"));
        assert_eq!(long.reject_until, at(1_000));
    }

    #[test]
    fn lookups_stop_at_reject_until() {
        let memory = FullWindows::new(4);
        memory.remember("a", window(0, 0, 10_000), at(0));
        assert!(memory.get("a", at(9_989)).is_some());
        assert!(memory.get("a", at(9_990)).is_none());
        assert!(memory.get("b", at(0)).is_none());
    }

    #[test]
    fn the_capacity_is_never_exceeded_and_expired_entries_make_room() {
        let memory = FullWindows::new(2);
        memory.remember("a", window(0, 0, 1_000), at(0));
        memory.remember("b", window(0, 0, 5_000), at(0));
        memory.remember("c", window(0, 0, 5_000), at(0));
        assert_eq!(memory.len(), 2);
        assert!(memory.get("c", at(1)).is_none());
        // "a" has expired by 2 ms: the next insertion sweeps it away.
        memory.remember("c", window(2_000, 2_000, 5_000), at(2_000));
        assert_eq!(memory.len(), 2);
        assert!(memory.get("c", at(2_001)).is_some());
        assert!(memory.get("b", at(2_001)).is_some());
    }

    #[test]
    fn zero_capacity_remembers_nothing() {
        let memory = FullWindows::new(0);
        memory.remember("a", window(0, 0, 1_000), at(0));
        assert_eq!(memory.len(), 0);
        assert!(memory.get("a", at(0)).is_none());
    }

    #[test]
    fn windows_that_would_already_be_over_are_not_remembered() {
        let memory = FullWindows::new(2);
        // The round trip took longer than the wait: nothing to reject locally.
        memory.remember("a", window(0, 5_000, 1_000), at(5_000));
        assert_eq!(memory.len(), 0);
    }
}
