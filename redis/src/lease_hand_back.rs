//! Handing back the unspent rest of a share: a process that stops spending its shares while
//! it is sure of the count (it shuts down) takes each remainder out of its own hands, then
//! asks the server to take it off the window's count, so that other processes may be granted
//! those permits in the same window.
//!
//! What keeps the exact upper bound: a remainder is taken out atomically before it is handed
//! back ([`Shares::take_back_all`](crate::lease::Shares)), so no permit is both granted here and
//! handed back; the script takes it off only if the counter is still of the window the share
//! was leased in, and never more than the counter holds. A share dropped because the count is
//! uncertain (a lost reply, a conflict, a limit change) is never handed back: it was dropped
//! first, and nothing is left of it to hand back.

use std::sync::Arc;

use crate::protocol::{Protocol, ReleaseArgs, ScriptCall, TailArgs};
use crate::unavailable::{Unavailable, UnavailableKind};

impl Protocol {
    /// The calls handing back the unspent rest of every share this process holds under the
    /// limit in effect, one per key (none without a lease or a share): each remainder is
    /// taken out of this process's hands first, so no permit of it is granted here after.
    /// Send each, and finish it with [`finish_hand_back`](Protocol::finish_hand_back).
    ///
    /// Use it when the process stops spending its shares while it is sure of the count: when
    /// it shuts down. A share dropped after a lost reply, a conflict or a limit change was
    /// dropped whole, and has nothing left to hand back.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Begin, Config, Decision, Lease, Protocol};
    ///
    /// let config = Config::of("api", 100, Duration::from_secs(1))?.with_lease(Lease::new(8)?);
    /// let protocol = Protocol::new(config);
    /// let t = Instant::ZERO;
    /// let Begin::Call(call) = protocol.begin("k", t, t)? else { panic!("no share yet") };
    /// // The server counted a share of 8 in the window starting at 3,000,000 µs.
    /// let reply = [4, 8, 3_000_100, 3_000_000];
    /// let decision = protocol.finish_lease("k", 1, call.limit_version(), (t, t, t), Ok(&reply));
    /// assert!(matches!(decision, Decision::Permitted { remaining: 7, .. }));
    ///
    /// let calls = protocol.hand_back_calls();
    /// assert_eq!(calls.len(), 1);
    /// assert_eq!(calls[0].args().nth(3), Some("release"));
    /// assert!(calls[0].args().skip(8).eq(["3000000", "7"]));
    /// // The 7 are out of this process's hands: the next attempt asks the server.
    /// assert!(matches!(protocol.begin("k", t, t)?, Begin::Call(_)));
    /// assert_eq!(protocol.finish_hand_back(Ok(&[5, 7])), Ok(7));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hand_back_calls(&self) -> Vec<ScriptCall> {
        let Some(shares) = self.shares() else {
            return Vec::new();
        };
        let mode = if self.is_cluster() {
            "release-count"
        } else {
            "release"
        };
        shares
            .take_back_all(self.limit_version())
            .into_iter()
            .map(|(key, permits, window_start)| {
                let mut call = self.call(Some(&key), mode);
                call.tail = Some(Box::new(TailArgs::Release(ReleaseArgs {
                    window_start: window_start.to_string().into(),
                    permits: permits.to_string().into(),
                })));
                call
            })
            .collect()
    }

    /// The permits the server took off a window's count on `reply` to a call of
    /// [`hand_back_calls`](Protocol::hand_back_calls): at most those handed back, none if the
    /// counter had moved on to another window (or was gone).
    ///
    /// # Errors
    ///
    /// The [`Unavailable`] the call ended with, or one of kind [`UnavailableKind::Reply`] for
    /// a reply the script never gives. Either way the permits were out of this process's
    /// hands already: at worst they stay counted, fewer permits granted, never more. Every
    /// other share is dropped, as after any failed call.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, UnavailableKind};
    ///
    /// let protocol = Protocol::new(Config::of("api", 100, Duration::from_secs(1))?);
    /// assert_eq!(protocol.finish_hand_back(Ok(&[5, 0])), Ok(0));
    /// let odd = protocol.finish_hand_back(Ok(&[1, 2, 3, 4]));
    /// assert_eq!(odd.map_err(|cause| cause.kind()), Err(UnavailableKind::Reply));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_hand_back(&self, reply: Result<&[i64], Unavailable>) -> Result<u32, Unavailable> {
        let taken_off = match reply {
            Ok(&[5, permits]) => u32::try_from(permits).ok(),
            Ok(_) => None,
            Err(cause) => {
                self.drop_all_shares();
                return Err(cause);
            }
        };
        taken_off.ok_or_else(|| {
            self.drop_all_shares();
            Unavailable::new(
                UnavailableKind::Reply,
                Arc::<str>::from("a reply to handing back a share the script never gives"),
            )
        })
    }

    /// Drops every share held (see [`Shares::drop_all`](crate::lease::Shares)).
    fn drop_all_shares(&self) {
        if let Some(shares) = self.shares() {
            shares.drop_all();
        }
    }
}
