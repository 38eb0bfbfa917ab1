//! Live limits the server lost (a restart without persistence, a failover to a replica that
//! had not received them), written back by a process that still holds them.
//!
//! Every process at one version of the limit holds the same live limits, and once one is set
//! the server always holds their text (a removal of the last leaves it empty, not absent). So
//! a read that finds none stored at the version a process holds some at (or an older one)
//! can only follow a loss. The process keeps its own and writes them back once, with a new
//! version of the limit: every process that adopted the version without them (registering
//! after the loss) is told "changed" and reads them again, so all converge on them.

use core::fmt::Write as _;
use std::sync::atomic::Ordering;

use super::Protocol;
use super::script_call::{ScriptCall, TailArgs};

impl Protocol {
    /// The call that writes back the live limits this process holds, if its last read of them
    /// ([`limits_read`](Protocol::limits_read)) found them lost; give its reply to
    /// [`limits_read`](Protocol::limits_read). The server writes them, with the next version
    /// of the limit, only if it still holds none; otherwise (another process wrote them back,
    /// or changed them, first) it answers as to a [`limits_call`](Protocol::limits_call). Its
    /// keys are those of a [`limits_call`](Protocol::limits_call).
    ///
    /// # Examples
    ///
    /// A process holding `paid`'s live limit reads none at its version: it writes it back,
    /// and adopts the version the server stored it with.
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, Protocol};
    ///
    /// let protocol = Protocol::new(Config::of("api", 5, Duration::from_secs(1))?);
    /// let call = protocol.limits_call();
    /// protocol.limits_read(&call, Ok((&[3, 5, 1, 1_000], Some("7 4:paid"))))?;
    /// assert!(protocol.restore_call().is_none());
    ///
    /// let call = protocol.limits_call();
    /// protocol.limits_read(&call, Ok((&[2, 1_000, 2_000, 0], None)))?;
    /// assert_eq!((protocol.key_limit("paid"), protocol.limit_version()), (7, 1));
    /// let restore = protocol.restore_call().expect("lost");
    /// assert!(restore.keys().eq(["fixed-window:{api}", "fixed-window:{api}/limits"]));
    /// assert!(restore.args().eq(["1000000", "5", "1000", "restore", "1", "", "", "1", "7 4:paid"]));
    /// protocol.limits_read(&restore, Ok((&[3, 5, 2, 1_000], Some("7 4:paid"))))?;
    /// assert_eq!((protocol.key_limit("paid"), protocol.limit_version()), (7, 2));
    /// assert!(protocol.restore_call().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn restore_call(&self) -> Option<ScriptCall> {
        if !self.lost.load(Ordering::Acquire) {
            return None;
        }
        let live = self.live_limits();
        if live.keys.is_empty() {
            return None;
        }
        let mut call = self.limits_call();
        call.mode = "restore";
        call.tail = Some(Box::new(TailArgs::Restore(live_text(&live.keys).into())));
        Some(call)
    }
}

/// The live limits' text of `keys` as the script stores it (see
/// [`parse_live`](super::live::parse_live)), its entries in the order of their keys.
pub(super) fn live_text<'a>(keys: impl IntoIterator<Item = (&'a Box<str>, &'a u32)>) -> String {
    let mut entries: Vec<(&str, u32)> = keys
        .into_iter()
        .map(|(key, &limit)| (&**key, limit))
        .collect();
    entries.sort_unstable();
    let mut text = String::new();
    for (key, limit) in entries {
        // Writing to a `String` cannot fail.
        let _ = write!(text, "{limit} {}:{key}", key.len());
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::live_text;
    use crate::protocol::live::parse_live;

    #[test]
    fn the_text_written_back_reads_as_the_limits_held() {
        let keys: HashMap<Box<str>, u32> =
            [("paid", 7), ("a b:c", 12), (" ", 1), ("é", 4_294_967_295)]
                .into_iter()
                .map(|(key, limit)| (key.into(), limit))
                .collect();
        let text = live_text(&keys);
        assert_eq!(text, "1 1: 12 5:a b:c7 4:paid4294967295 2:é");
        assert_eq!(parse_live(&text), Some(keys));
    }
}
