//! A peek: the permits a key's window has left and the time to its end, asked of the server
//! in one read-only call (or answered here while the window is remembered full), counting
//! nothing and registering nothing.

use core::time::Duration;

use fixed_window::{Instant, Peek};

use super::{Protocol, ScriptCall};
use crate::error::SharedError;
use crate::script::ScriptReply;
use crate::unavailable::{Unavailable, UnavailableKind};

/// How a peek begins: answered without a round trip, or the read-only call to send.
///
/// # Examples
///
/// See [`Protocol::begin_peek`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeekBegin {
    /// The key's window is remembered full: none left, ending at the latest estimate of its
    /// end (as a local rejection's `retry_after` is measured).
    Known(Peek),
    /// Send this call (its mode `peek`, or `peek-count` on a cluster: the script reads and
    /// writes nothing), then give its outcome to [`Protocol::finish_peek`].
    Call(ScriptCall),
}

impl Protocol {
    /// Starts a peek at `key` at local instant `now`. A key whose window is remembered full
    /// is answered here (none left); otherwise the server answers, from the same reading of
    /// its clock and the same counter a permit would be decided from, in a call that writes
    /// nothing: no configuration is stored (a limiter no process has registered answers the
    /// whole limit, its window a whole period long) and no counter is made or rewritten.
    ///
    /// # Errors
    ///
    /// [`SharedError::InvalidKey`] if `key` cannot name a counter; on a cluster before the
    /// origin is known, [`SharedError::Unavailable`] (`NotRegistered`): a peek answers what
    /// the server holds, or nothing, never a guess of the fail policy.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window::Instant;
    /// use fixed_window_redis::{Config, PeekBegin, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let PeekBegin::Call(call) = protocol.begin_peek("k", Instant::ZERO)? else {
    ///     panic!("nothing is remembered: the server answers");
    /// };
    /// assert!(call.args().eq(["1000000", "5", "1000", "peek", "1"]));
    /// // The window is full for another 400 ms: remembered, so the next peek needs no call.
    /// let t = Instant::ZERO;
    /// protocol.finish("k", t, t, t, Ok(&[0, 400_000, 7_600_000, 7_000_000]));
    /// let PeekBegin::Known(peek) = protocol.begin_peek("k", t)? else {
    ///     panic!("remembered full");
    /// };
    /// assert_eq!((peek.remaining(), peek.resets_in()), (0, Duration::from_millis(400)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn begin_peek(&self, key: &str, now: Instant) -> Result<PeekBegin, SharedError> {
        crate::key::check_key(key).map_err(|error| SharedError::InvalidKey {
            name: self.config.name(),
            error,
        })?;
        if let Some(window) = self.memory.get(key, now) {
            let resets_in = window.opens_at.saturating_duration_since(now);
            return Ok(PeekBegin::Known(Peek::new(
                0,
                self.key_limit(key),
                resets_in,
            )));
        }
        let mut call = self
            .counting_call(key, false)
            .map_err(|_| SharedError::Unavailable {
                name: self.config.name(),
                cause: Unavailable::new(
                    UnavailableKind::NotRegistered,
                    "the origin is not known yet",
                ),
            })?;
        call.mode = if self.is_cluster() {
            "peek-count"
        } else {
            "peek"
        };
        Ok(PeekBegin::Call(call))
    }

    /// Finishes a peek of `key` sent under version `version` of the limit
    /// ([`ScriptCall::limit_version`]) with the server's `reply`: the answer, or `None` if
    /// the server holds a newer limit (adopted here) or this process adopted one while the
    /// call was out: peek again, under the limit now in force. Nothing is remembered, not
    /// even a window found full.
    ///
    /// # Errors
    ///
    /// [`SharedError::Unavailable`] if there is no reply, or one the script never gives, under
    /// every fail policy: a peek that the server cannot answer is not answered by a guess;
    /// [`SharedError::Conflict`] if the server holds other settings.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol, SharedError, Unavailable, UnavailableKind};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// // Three left, in the window that started 600 ms before the server's reading.
    /// let peek = protocol.finish_peek("k", 0, Ok(&[1, 3, 7_600_000, 7_000_000]))?.expect("the same limit");
    /// assert_eq!((peek.remaining(), peek.limit(), peek.resets_in()), (3, 5, Duration::from_millis(400)));
    /// let lost = Unavailable::new(UnavailableKind::Timeout, "no reply");
    /// assert!(matches!(protocol.finish_peek("k", 0, Err(lost)), Err(SharedError::Unavailable { .. })));
    /// assert_eq!(protocol.remembered(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_peek(
        &self,
        key: &str,
        version: u32,
        reply: Result<&[i64], Unavailable>,
    ) -> Result<Option<Peek>, SharedError> {
        let unavailable = |cause| SharedError::Unavailable {
            name: self.config.name(),
            cause,
        };
        let reply = reply.map_err(unavailable)?;
        match ScriptReply::parse(reply) {
            Some(ScriptReply::Permitted {
                remaining,
                now,
                window_start,
            }) => {
                // Decided under a limit since changed: it says nothing of the limit in force.
                if version != self.limit_version() {
                    return Ok(None);
                }
                let resets_in = self.window_end_micros(window_start).saturating_sub(now);
                Ok(Some(Peek::new(
                    remaining,
                    self.key_limit(key),
                    Duration::from_micros(resets_in),
                )))
            }
            Some(ScriptReply::Conflict {
                period,
                limit,
                origin,
            }) => Err(SharedError::Conflict(self.conflict(period, limit, origin))),
            Some(ScriptReply::KeyConflict {
                period,
                limit,
                origin,
            }) => Err(SharedError::Conflict(
                self.key_conflict(key, period, limit, origin),
            )),
            Some(ScriptReply::Changed { limit, version, .. }) => {
                self.adopt(limit, version);
                Ok(None)
            }
            Some(
                ScriptReply::Full { .. }
                | ScriptReply::Registered { .. }
                | ScriptReply::Leased { .. },
            )
            | None => Err(unavailable(Unavailable::new(
                UnavailableKind::Reply,
                format!("the script never answers a peek {reply:?}"),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use fixed_window::Instant;

    use crate::config::Config;
    use crate::error::SharedError;
    use crate::protocol::{PeekBegin, Protocol};
    use crate::unavailable::UnavailableKind;

    #[test]
    fn on_a_cluster_a_peek_reads_the_counter_alone_once_the_origin_is_known() {
        let protocol = Protocol::for_cluster(Config::of("api", 5, Duration::from_secs(1)).unwrap());
        let Err(SharedError::Unavailable { cause, .. }) = protocol.begin_peek("k", Instant::ZERO)
        else {
            panic!("no origin yet: no answer");
        };
        assert_eq!(cause.kind(), UnavailableKind::NotRegistered);
        assert_eq!(protocol.registered(Ok(&[2, 1_000, 1_000, 0])), Ok(1_000));
        let Ok(PeekBegin::Call(call)) = protocol.begin_peek("k", Instant::ZERO) else {
            panic!("registered: the server answers");
        };
        assert!(call.keys().eq(["fixed-window:api:{k}"]));
        assert!(
            call.args()
                .eq(["1000000", "5", "1000", "peek-count", "1", "1000"])
        );
        assert!(call.slot().is_some());
    }

    #[test]
    fn a_newer_limit_is_adopted_and_the_peek_made_again() {
        let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1)).unwrap());
        assert_eq!(protocol.finish_peek("k", 0, Ok(&[3, 8, 1, 0])), Ok(None));
        assert_eq!((protocol.limit(), protocol.limit_version()), (8, 1));
        // A reply to a call sent under the older version is not an answer under the new one.
        assert_eq!(protocol.finish_peek("k", 0, Ok(&[1, 4, 10, 0])), Ok(None));
        let peek = protocol
            .finish_peek("k", 1, Ok(&[1, 7, 10, 0]))
            .unwrap()
            .unwrap();
        assert_eq!((peek.remaining(), peek.limit()), (7, 8));
    }

    #[test]
    fn a_conflict_and_a_reply_no_peek_gets_are_errors() {
        let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1)).unwrap());
        assert!(matches!(
            protocol.finish_peek("k", 0, Ok(&[-1, 2_000_000, 5, 0])),
            Err(SharedError::Conflict(_))
        ));
        assert!(matches!(
            protocol.finish_peek("k", 0, Ok(&[0, 10, 10, 0])),
            Err(SharedError::Unavailable { .. })
        ));
    }
}
