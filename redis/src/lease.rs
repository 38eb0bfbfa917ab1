//! Leased shares of a window: a process takes part of a key's current window from the server
//! in one script call, counted there at once, and grants permits from it locally until the
//! share is spent or its local deadline passes.
//!
//! The decisions are small pure functions ([`Lease::share`], [`lease_deadline`],
//! [`Lease::under_admission_bound`]) and one map of the shares a process holds ([`Shares`]),
//! which [`Protocol`](crate::Protocol) consults before sending anything, so that a simulator
//! driving the protocol runs the same code as the production limiter.

use core::num::NonZeroU32;
use core::time::Duration;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use dashmap::DashMap;
use fixed_window::Instant;

use crate::config::ConfigError;
use crate::memory::latest_local_end;

/// The divisor of the adaptive rule unless one is given: a share is at most a quarter of
/// what the window has left.
pub const DEFAULT_LEASE_DIVISOR: u32 = 4;

/// How many keys may hold a share at once unless told otherwise ([`Lease::with_keys`]).
pub const DEFAULT_LEASED_KEYS: usize = 10_000;

/// How a limiter leases shares of a window ([`Config::with_lease`](crate::Config::with_lease)).
///
/// A share taken when the window has `left` permits is `clamp(left / divisor, n, max_share)`
/// (integer division; `n` the permits the call that takes it asks for): large while the window
/// is far from full, shrinking to single permits as it fills, so that the window can still be
/// filled by whoever asks. The script decides it, from the count it sees; [`Lease::share`]
/// is the same rule in Rust.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::Lease;
///
/// let lease = Lease::new(64)?.with_divisor(8)?;
/// assert_eq!((lease.max_share(), lease.divisor()), (64, 8));
/// assert_eq!(lease.share(10_000, 1), 64); // far from full: the largest share
/// assert_eq!(lease.share(80, 1), 10); // filling: an eighth of what is left
/// assert_eq!(lease.share(3, 1), 1); // nearly full: one permit at a time
/// assert!(Lease::new(0).is_err());
/// # Ok::<(), fixed_window_redis::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    max_share: NonZeroU32,
    divisor: NonZeroU32,
    keys: usize,
}

impl Lease {
    /// Shares of at most `max_share` permits, with the [`DEFAULT_LEASE_DIVISOR`], for at most
    /// [`DEFAULT_LEASED_KEYS`] keys at once.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLeaseShare`] if `max_share` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{ConfigError, Lease};
    ///
    /// assert_eq!(Lease::new(16)?.max_share(), 16);
    /// assert_eq!(Lease::new(0), Err(ConfigError::ZeroLeaseShare));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn new(max_share: u32) -> Result<Lease, ConfigError> {
        let max_share = NonZeroU32::new(max_share).ok_or(ConfigError::ZeroLeaseShare)?;
        Ok(Lease {
            max_share,
            divisor: NonZeroU32::new(DEFAULT_LEASE_DIVISOR).unwrap_or(NonZeroU32::MIN),
            keys: DEFAULT_LEASED_KEYS,
        })
    }

    /// These shares at most `1 / divisor` of what the window has left (1: all of it, up to
    /// the largest share).
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroLeaseDivisor`] if `divisor` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{ConfigError, Lease};
    ///
    /// assert_eq!(Lease::new(16)?.with_divisor(2)?.share(10, 1), 5);
    /// assert_eq!(Lease::new(16)?.with_divisor(0), Err(ConfigError::ZeroLeaseDivisor));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn with_divisor(self, divisor: u32) -> Result<Lease, ConfigError> {
        let divisor = NonZeroU32::new(divisor).ok_or(ConfigError::ZeroLeaseDivisor)?;
        Ok(Lease { divisor, ..self })
    }

    /// These shares held for at most `keys` keys at once: a key beyond them is counted
    /// exactly, one call per attempt, until a share held elsewhere ends (0: never lease).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::Lease;
    ///
    /// assert_eq!(Lease::new(16)?.with_keys(100).keys(), 100);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_keys(self, keys: usize) -> Lease {
        Lease { keys, ..self }
    }

    /// The largest share.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(fixed_window_redis::Lease::new(9)?.max_share(), 9);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn max_share(&self) -> u32 {
        self.max_share.get()
    }

    /// The divisor of the adaptive rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{DEFAULT_LEASE_DIVISOR, Lease};
    ///
    /// assert_eq!(Lease::new(9)?.divisor(), DEFAULT_LEASE_DIVISOR);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn divisor(&self) -> u32 {
        self.divisor.get()
    }

    /// How many keys may hold a share at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::{DEFAULT_LEASED_KEYS, Lease};
    ///
    /// assert_eq!(Lease::new(9)?.keys(), DEFAULT_LEASED_KEYS);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn keys(&self) -> usize {
        self.keys
    }

    /// The share the script grants a call for `want` permits when the window has `left`:
    /// `clamp(left / divisor, want, max_share)`, never more than `left`; 0 if `want` does not
    /// fit (the call is refused). The script's rule, in Rust.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::Lease;
    ///
    /// let lease = Lease::new(10)?;
    /// assert_eq!(lease.share(100, 1), 10);
    /// assert_eq!(lease.share(20, 1), 5);
    /// assert_eq!(lease.share(20, 7), 7);
    /// assert_eq!(lease.share(2, 3), 0);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn share(&self, left: u32, want: u32) -> u32 {
        if want > left {
            return 0;
        }
        (left / self.divisor()).min(self.max_share()).max(want)
    }

    /// The largest share a window of `limit` permits can grant a call for one permit:
    /// `min(max_share, max(1, limit / divisor))`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::Lease;
    ///
    /// assert_eq!(Lease::new(64)?.largest_share(100), 25);
    /// assert_eq!(Lease::new(64)?.largest_share(1_000), 64);
    /// assert_eq!(Lease::new(64)?.largest_share(2), 1);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn largest_share(&self, limit: u32) -> u32 {
        self.share(limit, 1).max(1)
    }

    /// The most permits a window of `limit` may refuse while it still has room, with
    /// `processes` processes leasing on its key, calls of one permit, and no share dropped
    /// early (no limit change, conflict, failed call or drain in the window):
    /// `processes × (largest_share(limit) − 1)`. Each process holds at most one share of a
    /// key, takes a new one only once the last is spent, and the permits its caller asked for
    /// come out of a share as soon as it is granted; so what the window counts and nobody
    /// spends is at most one unspent remainder per process, dropped at its deadline. Every
    /// share dropped early adds at most `largest_share(limit)` to it. See docs/rules.md.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis::Lease;
    ///
    /// assert_eq!(Lease::new(8)?.under_admission_bound(3, 100), 21);
    /// assert_eq!(Lease::new(1)?.under_admission_bound(3, 100), 0);
    /// # Ok::<(), fixed_window_redis::ConfigError>(())
    /// ```
    pub fn under_admission_bound(&self, processes: u32, limit: u32) -> u64 {
        u64::from(processes) * u64::from(self.largest_share(limit) - 1)
    }
}

/// The local instant before which a share may be spent: the instant the lease call was `sent`
/// plus the time the server said its window had left (`window_end − server_now`, µs), less
/// [`DRIFT_ALLOWANCE`](crate::DRIFT_ALLOWANCE) of it, the rule local rejections use. `None`
/// if the local clock cannot represent it (the share is then never spent).
///
/// Measured from the send, not the reply: the server decided at some instant after the send,
/// so the window ends no earlier than this on a clock running at the server's rate.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::lease_deadline;
///
/// let sent = Instant::from_nanos(5_000_000);
/// // The server read 1,000,000 µs; its window ends at 1,100,000 µs: 100 ms left, less 0.1 %.
/// assert_eq!(
///     lease_deadline(sent, 1_000_000, 1_100_000),
///     Some(sent.saturating_add(Duration::from_micros(99_900)))
/// );
/// ```
pub fn lease_deadline(sent: Instant, server_now: u64, window_end: u64) -> Option<Instant> {
    coarse_lease_deadline(sent, server_now, window_end, Duration::ZERO)
}

/// [`lease_deadline`] on a clock that ticks every `resolution`
/// ([`Config::with_clock_resolution`](crate::Config::with_clock_resolution)): a tick
/// earlier, since a reading is up to a tick behind the time.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use fixed_window::Instant;
/// use fixed_window_redis::{coarse_lease_deadline, lease_deadline};
///
/// let sent = Instant::from_nanos(5_000_000);
/// let tick = Duration::from_millis(1);
/// assert_eq!(
///     coarse_lease_deadline(sent, 1_000_000, 1_100_000, tick),
///     Some(sent.saturating_add(Duration::from_micros(98_900)))
/// );
/// assert_eq!(
///     coarse_lease_deadline(sent, 1_000_000, 1_100_000, Duration::ZERO),
///     lease_deadline(sent, 1_000_000, 1_100_000)
/// );
/// ```
pub fn coarse_lease_deadline(
    sent: Instant,
    server_now: u64,
    window_end: u64,
    resolution: Duration,
) -> Option<Instant> {
    latest_local_end(
        sent,
        Duration::from_micros(window_end.saturating_sub(server_now)),
        resolution,
    )
}

/// What a process does with an attempt on a key under a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Take {
    /// Granted from the share held: `left` remain in it; the window surely ends by `ends`;
    /// it is the one starting at `window_start` on the server's clock.
    Granted {
        left: u32,
        ends: Instant,
        window_start: u64,
    },
    /// Send a lease call; the key is marked as having one in flight.
    Lease,
    /// Count this attempt exactly on the server (a lease is in flight, the share left is too
    /// small for the call, its window is not surely over after its deadline, or no room).
    Exact,
}

/// A key's share: what is left of it, until when it may be spent, and the lease in flight.
#[derive(Debug)]
struct Held {
    /// Spent by a compare-and-swap under the map's read lock, so that the tasks granting from
    /// one key's share do not take its entry for writing one after the other; everything else
    /// changes only under the write lock.
    left: AtomicU32,
    /// The local deadline ([`lease_deadline`]): nothing is spent at or after it.
    deadline: Instant,
    /// The latest local instant the share's window can end at (the reply's arrival plus the
    /// time the server said was left): between the deadline and this, the key is counted
    /// exactly, so that a process drops at most one remainder per window.
    ends: Instant,
    /// The version of the limit the share was granted under.
    version: u32,
    /// The start of the window the share was leased in, as the script answered it (server
    /// microseconds): a remainder handed back comes off that window's count only.
    window_start: u64,
    /// A lease call is in flight until then (its send plus the timeout, the call's bound).
    leasing_until: Instant,
}

impl Held {
    /// No share, a lease call in flight until `leasing_until` (none if that is past).
    fn none(leasing_until: Instant) -> Held {
        Held {
            left: AtomicU32::new(0),
            deadline: Instant::ZERO,
            ends: Instant::ZERO,
            version: 0,
            window_start: 0,
            leasing_until,
        }
    }

    /// Nothing here matters after `now`: the entry may go.
    fn over(&self, now: Instant) -> bool {
        now >= self.ends && now >= self.leasing_until
    }
}

/// The shares a process holds, by key, at most [`Lease::keys`] of them.
#[derive(Debug)]
pub(crate) struct Shares {
    lease: Lease,
    /// How long a lease call may be in flight: the limiter's timeout.
    timeout: Duration,
    held: DashMap<Box<str>, Held>,
    /// Serialises insertions; the instant before which a sweep would free nothing.
    inserting: Mutex<Instant>,
}

impl Shares {
    pub(crate) fn new(lease: Lease, timeout: Duration) -> Shares {
        Shares {
            lease,
            timeout,
            held: DashMap::new(),
            inserting: Mutex::new(Instant::ZERO),
        }
    }

    /// An attempt for `n` permits of `key` at local instant `now`, under version `version` of
    /// the limit.
    pub(crate) fn take(&self, key: &str, n: u32, now: Instant, version: u32) -> Take {
        if let Some(held) = self.held.get(key)
            && held.version == version
            && now < held.deadline
            && let Ok(before) =
                held.left
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                        left.checked_sub(n)
                    })
        {
            return Take::Granted {
                left: before - n,
                ends: held.ends,
                window_start: held.window_start,
            };
        }
        if let Some(mut held) = self.held.get_mut(key) {
            let live = held.version == version && now < held.deadline;
            let left = *held.left.get_mut();
            if live && left >= n {
                // Granted here if the share was replaced since the read above.
                *held.left.get_mut() = left - n;
                return Take::Granted {
                    left: left - n,
                    ends: held.ends,
                    window_start: held.window_start,
                };
            }
            let tail = now >= held.deadline && now < held.ends;
            if (live && left > 0) || tail || now < held.leasing_until {
                return Take::Exact;
            }
            if n == 0 || n > self.lease.max_share() {
                return Take::Exact;
            }
            *held = Held::none(now.saturating_add(self.timeout));
            return Take::Lease;
        }
        if n == 0 || n > self.lease.max_share() || !self.make_room(now) {
            return Take::Exact;
        }
        self.held
            .insert(key.into(), Held::none(now.saturating_add(self.timeout)));
        Take::Lease
    }

    /// Whether a new key may hold a share: below the capacity, after dropping the entries
    /// over at `now` (no more often than the earliest of them ends).
    fn make_room(&self, now: Instant) -> bool {
        let capacity = self.lease.keys();
        if self.held.len() < capacity {
            return true;
        }
        let mut quiet_until = self
            .inserting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if now >= *quiet_until {
            let mut earliest = Instant::MAX;
            self.held.retain(|_, held| {
                let keep = !held.over(now);
                if keep {
                    earliest = earliest.min(held.ends.max(held.leasing_until));
                }
                keep
            });
            *quiet_until = earliest;
        }
        self.held.len() < capacity
    }

    /// A lease call for `n` permits of `key` was granted `granted` under `version`, in the
    /// window starting at `window_start`: the caller takes its `n`, and the rest is held
    /// until `deadline` if that is after `received`. What is left in the share.
    pub(crate) fn granted(
        &self,
        key: &str,
        (n, granted, version, window_start): (u32, u32, u32, u64),
        (received, deadline, ends): (Instant, Instant, Instant),
    ) -> u32 {
        let left = if received < deadline {
            granted.saturating_sub(n)
        } else {
            0
        };
        self.held.insert(
            key.into(),
            Held {
                left: AtomicU32::new(left),
                deadline,
                ends,
                version,
                window_start,
                leasing_until: Instant::ZERO,
            },
        );
        left
    }

    /// The lease call for `key` ended without a share (refused, or no reply): another may be
    /// sent.
    pub(crate) fn settled(&self, key: &str) {
        if let Some(mut held) = self.held.get_mut(key) {
            held.leasing_until = Instant::ZERO;
        }
    }

    /// Drops `key`'s share (a drain: the window is full for this process too).
    pub(crate) fn drop_key(&self, key: &str) {
        if let Some(mut held) = self.held.get_mut(key) {
            *held.left.get_mut() = 0;
        }
    }

    /// Takes the unspent rest of every share held under `version` out of this process's
    /// hands, to hand it back: each by one atomic swap to 0, so that every permit of a share
    /// is either granted here (by [`take`](Shares::take)'s compare-and-swap, or under the
    /// entry's write lock) or handed back, never both. Shares of another version were
    /// dropped or are about to be (a limit change: the count is uncertain) and stay as they
    /// are. The keys, with each remainder and the window start it was leased in.
    pub(crate) fn take_back_all(&self, version: u32) -> Vec<(Box<str>, u32, u64)> {
        let mut back = Vec::new();
        for held in &self.held {
            if held.version != version {
                continue;
            }
            let left = held.left.swap(0, Ordering::Relaxed);
            if left > 0 {
                back.push((held.key().clone(), left, held.window_start));
            }
        }
        back
    }

    /// Drops every share, keeping the marks of leases in flight: the limit changed, or a call
    /// failed (a lost reply, a failover, a reconnection), so what the shares were counted
    /// against may be gone. The keys may lease again at once.
    pub(crate) fn drop_all(&self) {
        for mut held in self.held.iter_mut() {
            let leasing_until = held.leasing_until;
            *held = Held::none(leasing_until);
        }
    }

    /// The permits left in `key`'s share under `version` at `now` (0 if none can be spent).
    #[cfg(test)]
    fn left(&self, key: &str, now: Instant, version: u32) -> u32 {
        self.held.get(key).map_or(0, |held| {
            if held.version == version && now < held.deadline {
                held.left.load(Ordering::Relaxed)
            } else {
                0
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(micros: u64) -> Instant {
        Instant::from_nanos(micros * 1_000)
    }

    fn shares(max: u32) -> Shares {
        Shares::new(
            Lease::new(max).unwrap_or_else(|_| unreachable!("positive")),
            Duration::from_millis(10),
        )
    }

    #[test]
    fn the_adaptive_share_shrinks_as_the_window_fills_and_never_exceeds_what_is_left() {
        let lease = Lease::new(100)
            .and_then(|l| l.with_divisor(3))
            .unwrap_or_else(|_| unreachable!("positive"));
        for left in 0..1_000 {
            for want in 1..5 {
                let share = lease.share(left, want);
                assert!(share <= left);
                assert_eq!(share == 0, want > left);
                if share > 0 {
                    assert!(share >= want && (share <= 100 || share == want));
                }
            }
        }
    }

    #[test]
    fn a_share_is_spent_only_before_its_deadline_and_only_once() {
        let shares = shares(8);
        assert_eq!(shares.take("k", 1, at(0), 0), Take::Lease);
        // A second attempt while the lease is in flight goes exact.
        assert_eq!(shares.take("k", 1, at(1), 0), Take::Exact);
        let left = shares.granted("k", (1, 4, 0, 0), (at(2), at(1_000), at(1_100)));
        assert_eq!(left, 3);
        for expected in (0..3).rev() {
            assert!(matches!(
                shares.take("k", 1, at(500), 0),
                Take::Granted { left, .. } if left == expected
            ));
        }
        // Spent: a new lease.
        assert_eq!(shares.take("k", 1, at(600), 0), Take::Lease);
        shares.granted("k", (1, 4, 0, 0), (at(601), at(1_000), at(1_100)));
        // At the deadline nothing is spent, and until the window is surely over the key is
        // counted exactly.
        assert_eq!(shares.take("k", 1, at(1_000), 0), Take::Exact);
        assert_eq!(shares.take("k", 1, at(1_099), 0), Take::Exact);
        assert_eq!(shares.take("k", 1, at(1_100), 0), Take::Lease);
    }

    #[test]
    fn threads_spending_one_share_at_once_grant_exactly_what_it_holds() {
        let shares = shares(1_000);
        assert_eq!(shares.take("k", 1, at(0), 0), Take::Lease);
        let left = shares.granted("k", (1, 1_000, 0, 0), (at(1), at(1_000_000), at(1_100_000)));
        let granted = AtomicU32::new(0);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    while let Take::Granted { .. } = shares.take("k", 1, at(2), 0) {
                        granted.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(granted.load(Ordering::Relaxed), left);
    }

    #[test]
    fn a_share_of_another_version_or_dropped_is_not_spent() {
        let shares = shares(8);
        assert_eq!(shares.take("k", 1, at(0), 0), Take::Lease);
        shares.granted("k", (1, 4, 0, 0), (at(1), at(1_000), at(1_100)));
        assert_eq!(shares.left("k", at(2), 0), 3);
        // Under a newer limit the share is not spent: a new one is leased.
        assert_eq!(shares.left("k", at(2), 1), 0);
        assert_eq!(shares.take("k", 1, at(2), 1), Take::Lease);
        shares.granted("k", (1, 4, 1, 0), (at(3), at(1_000), at(1_100)));
        assert_eq!(shares.left("k", at(4), 1), 3);
        shares.drop_all();
        assert_eq!(shares.left("k", at(4), 1), 0);
        assert_eq!(shares.take("k", 1, at(4), 1), Take::Lease);
    }

    #[test]
    fn a_reply_after_the_deadline_leaves_nothing_to_spend() {
        let shares = shares(8);
        assert_eq!(shares.take("k", 1, at(0), 0), Take::Lease);
        assert_eq!(
            shares.granted("k", (1, 8, 0, 0), (at(1_000), at(1_000), at(1_100))),
            0
        );
    }

    #[test]
    fn weighted_attempts_larger_than_the_share_or_the_largest_share_go_exact() {
        let shares = shares(4);
        assert_eq!(shares.take("k", 5, at(0), 0), Take::Exact);
        assert_eq!(shares.take("k", 2, at(0), 0), Take::Lease);
        shares.granted("k", (2, 3, 0, 0), (at(1), at(1_000), at(1_100)));
        assert_eq!(shares.take("k", 2, at(2), 0), Take::Exact);
        assert!(matches!(
            shares.take("k", 1, at(2), 0),
            Take::Granted { left: 0, .. }
        ));
    }

    #[test]
    fn no_more_keys_than_the_capacity_hold_shares() {
        let shares = Shares::new(
            Lease::new(4)
                .unwrap_or_else(|_| unreachable!("positive"))
                .with_keys(1),
            Duration::from_millis(10),
        );
        assert_eq!(shares.take("a", 1, at(0), 0), Take::Lease);
        assert_eq!(shares.take("b", 1, at(0), 0), Take::Exact);
        shares.granted("a", (1, 4, 0, 0), (at(1), at(1_000), at(1_100)));
        assert_eq!(shares.take("b", 1, at(20_000), 0), Take::Lease);
    }

    #[test]
    fn a_remainder_taken_back_is_never_granted_and_every_permit_goes_one_way() {
        let shares = shares(1_000);
        assert_eq!(shares.take("k", 1, at(0), 0), Take::Lease);
        shares.granted("k", (1, 8, 0, 76), (at(1), at(1_000_000), at(1_100_000)));
        assert_eq!(shares.take_back_all(0), [("k".into(), 7, 76)]);
        // Out of this process's hands: the next attempt asks the server for a new share.
        assert_eq!(shares.take("k", 1, at(2), 0), Take::Lease);
        assert_eq!(shares.left("k", at(2), 0), 0);
        let left = shares.granted(
            "k",
            (1, 1_000, 0, 77),
            (at(3), at(1_000_000), at(1_100_000)),
        );
        let granted = AtomicU32::new(0);
        let back = std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    while let Take::Granted { .. } = shares.take("k", 1, at(2), 0) {
                        granted.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
            shares.take_back_all(0)
        });
        let returned: u32 = back.iter().map(|&(_, n, _)| n).sum();
        assert_eq!(granted.load(Ordering::Relaxed) + returned, left);
        assert!(
            back.iter()
                .all(|(key, _, start)| &**key == "k" && *start == 77)
        );
        // Nothing is left to grant or to hand back again.
        assert_eq!(shares.left("k", at(3), 0), 0);
        assert!(shares.take_back_all(0).is_empty());
        // A share of an older version is not handed back; one dropped has nothing to give.
        shares.granted("k", (1, 8, 0, 77), (at(4), at(1_000_000), at(1_100_000)));
        assert!(shares.take_back_all(1).is_empty());
        shares.drop_all();
        assert!(shares.take_back_all(0).is_empty());
    }

    #[test]
    fn a_share_landing_after_a_hand_back_is_kept_usable_and_handed_back_later() {
        let shares = shares(8);
        assert_eq!(shares.take("k", 1, at(0), 0), Take::Lease);
        // Handed back while the lease call is in flight: nothing held yet, nothing taken.
        assert!(shares.take_back_all(0).is_empty());
        // The reply lands: the share is installed as any other and spent.
        assert_eq!(
            shares.granted("k", (1, 8, 0, 40), (at(2), at(1_000), at(1_100))),
            7
        );
        assert!(matches!(
            shares.take("k", 1, at(3), 0),
            Take::Granted {
                left: 6,
                window_start: 40,
                ..
            }
        ));
        // A later hand-back takes the rest, once.
        assert_eq!(shares.take_back_all(0), [("k".into(), 6, 40)]);
        assert!(shares.take_back_all(0).is_empty());
        assert_eq!(shares.left("k", at(4), 0), 0);
    }

    #[test]
    fn the_deadline_is_measured_from_the_send_less_the_drift_allowance() {
        let sent = at(10);
        assert_eq!(
            lease_deadline(sent, 5_000, 15_000),
            Some(at(10 + 10_000 - 10))
        );
        assert_eq!(lease_deadline(sent, 15_000, 5_000), Some(sent));
        assert_eq!(lease_deadline(Instant::MAX, 0, 10), None);
    }
}
