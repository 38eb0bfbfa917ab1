//! The server side: the Lua script every attempt runs, and the shape of its replies.

/// The Lua script that decides one attempt inside the server, atomically: it reads the
/// server's time, stores the limiter's configuration (origin, period, limit) if absent and
/// checks it if present, finds the window holding the time, counts, and sets the counter to
/// expire at the window's end plus a margin.
///
/// It uses only these commands: `TIME`, `GET`, `SET` (with `NX`, `PX` or `KEEPTTL`). A
/// simulated server needs to implement nothing else; the script is written for Lua 5.1 as
/// Redis and Valkey embed it.
///
/// An attempt of one permit on one node, in a window its key has counted in, takes the
/// script's hot path: `TIME`, a `GET` of the configuration and of the counter, and for a
/// permit one `SET` (a lease call of one permit likewise, for a share), with the stored settings recognised by one comparison of text and no
/// other argument validated. Anything else takes the full path, which decides the same way.
///
/// `KEYS` and `ARGV` are described at the top of the script and built by
/// [`Protocol::begin`](crate::Protocol::begin); replies are read by [`ScriptReply::parse`].
///
/// # Examples
///
/// The script is plain text, loaded once and then called by its SHA-1.
///
/// ```
/// assert!(fixed_window_redis::SCRIPT.contains("redis.call('TIME')"));
/// ```
pub const SCRIPT: &str = include_str!("script.lua");

/// The script's reply codes (its first element).
const PERMITTED: i64 = 1;
const FULL: i64 = 0;
const CONFLICT: i64 = -1;
const KEY_CONFLICT: i64 = -2;
const REGISTERED: i64 = 2;
const CHANGED: i64 = 3;
const LEASED: i64 = 4;

/// A reply of [`SCRIPT`], read from the array of integers the server returns. Times are
/// microseconds on the server's clock.
///
/// # Examples
///
/// ```
/// use fixed_window_redis::ScriptReply;
///
/// assert_eq!(
///     ScriptReply::parse(&[1, 4, 1_000, 900]),
///     Some(ScriptReply::Permitted { remaining: 4, now: 1_000, window_start: 900 })
/// );
/// assert_eq!(
///     ScriptReply::parse(&[3, 4, 2, 900]),
///     Some(ScriptReply::Changed { limit: 4, version: 2, origin: 900 })
/// );
/// assert_eq!(ScriptReply::parse(&[7]), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScriptReply {
    /// A permit was counted; `remaining` are left in the window.
    Permitted {
        /// `limit − used` after this permit.
        remaining: u32,
        /// The server's time when the script ran.
        now: u64,
        /// The start of the window the permit counts in.
        window_start: u64,
    },
    /// The window is full; nothing was written.
    Full {
        /// Microseconds from `now` until the next window opens (at least 1).
        retry_after: u64,
        /// The server's time when the script ran.
        now: u64,
        /// The start of the full window.
        window_start: u64,
    },
    /// The configuration stored on the server differs from the caller's; nothing was counted.
    Conflict {
        /// The stored period, in microseconds.
        period: u64,
        /// The stored limit.
        limit: u64,
        /// The stored origin.
        origin: u64,
    },
    /// The configuration was stored or found equal (a `register` call).
    Registered {
        /// The shared origin, in microseconds on the server's clock.
        origin: u64,
        /// The server's time when the script ran.
        now: u64,
    },
    /// The key's counter was written under another limit of the key's than the caller's (a
    /// limit of its own, [`Config::key_limit`](crate::Config::key_limit), against the
    /// limiter's or another), at the version of the limit the caller knows; nothing was
    /// counted for the attempt. Answered per attempt, on that key alone.
    KeyConflict {
        /// The period, in microseconds.
        period: u64,
        /// The limit the key's counter was written under.
        limit: u64,
        /// The origin, in microseconds on the server's clock.
        origin: u64,
    },
    /// A share of the window was leased and counted (a `lease` call): the caller's permits
    /// come out of it, and the rest may be spent in-process before the window ends.
    Leased {
        /// The permits counted for the share (at least the caller's).
        granted: u32,
        /// The server's time when the script ran.
        now: u64,
        /// The start of the window the share counts in.
        window_start: u64,
    },
    /// The limit in effect is of a newer version than the caller's (nothing was counted for
    /// the attempt), or a `limit` call stored it.
    Changed {
        /// The limit in effect.
        limit: u32,
        /// Its version: how many times the limit was changed (at least 1).
        version: u32,
        /// The stored origin (a counter's, counting on a cluster).
        origin: u64,
    },
}

impl ScriptReply {
    /// Reads a reply, or `None` if it is not one the script gives (a different script, or a
    /// reply mangled on the way).
    ///
    /// # Examples
    ///
    /// A full window's reply carries the wait until the next one.
    ///
    /// ```
    /// use fixed_window_redis::ScriptReply;
    ///
    /// let reply = ScriptReply::parse(&[0, 250, 1_750, 1_000]);
    /// assert_eq!(reply, Some(ScriptReply::Full { retry_after: 250, now: 1_750, window_start: 1_000 }));
    /// ```
    pub fn parse(reply: &[i64]) -> Option<ScriptReply> {
        let &[code, a, b, c] = reply else {
            return None;
        };
        let (a, b, c) = (
            u64::try_from(a).ok()?,
            u64::try_from(b).ok()?,
            u64::try_from(c).ok()?,
        );
        match code {
            PERMITTED => Some(ScriptReply::Permitted {
                remaining: u32::try_from(a).ok()?,
                now: b,
                window_start: c,
            }),
            FULL if a > 0 => Some(ScriptReply::Full {
                retry_after: a,
                now: b,
                window_start: c,
            }),
            CONFLICT => Some(ScriptReply::Conflict {
                period: a,
                limit: b,
                origin: c,
            }),
            KEY_CONFLICT => Some(ScriptReply::KeyConflict {
                period: a,
                limit: b,
                origin: c,
            }),
            REGISTERED => Some(ScriptReply::Registered { origin: a, now: b }),
            CHANGED if a > 0 && b > 0 => Some(ScriptReply::Changed {
                limit: u32::try_from(a).ok()?,
                version: u32::try_from(b).ok()?,
                origin: c,
            }),
            LEASED if a > 0 => Some(ScriptReply::Leased {
                granted: u32::try_from(a).ok()?,
                now: b,
                window_start: c,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_of_the_wrong_shape_are_refused() {
        assert_eq!(ScriptReply::parse(&[]), None);
        assert_eq!(ScriptReply::parse(&[1, 2, 3]), None);
        assert_eq!(ScriptReply::parse(&[1, -2, 3, 4]), None);
        assert_eq!(ScriptReply::parse(&[1, 1 << 40, 3, 4]), None);
        assert_eq!(ScriptReply::parse(&[0, 0, 3, 4]), None);
        assert_eq!(ScriptReply::parse(&[3, 0, 3, 4]), None);
        assert_eq!(ScriptReply::parse(&[3, 2, 0, 4]), None);
        assert_eq!(ScriptReply::parse(&[4, 0, 1, 4]), None);
        assert_eq!(ScriptReply::parse(&[5, 1, 1, 4]), None);
        assert_eq!(ScriptReply::parse(&[-2, 1, -1, 4]), None);
        assert_eq!(
            ScriptReply::parse(&[-2, 1_000, 7, 4]),
            Some(ScriptReply::KeyConflict {
                period: 1_000,
                limit: 7,
                origin: 4
            })
        );
        assert_eq!(
            ScriptReply::parse(&[4, 8, 1, 0]),
            Some(ScriptReply::Leased {
                granted: 8,
                now: 1,
                window_start: 0
            })
        );
    }

    #[test]
    fn the_script_names_only_the_commands_it_documents() {
        let called: Vec<&str> = SCRIPT
            .split("redis.call('")
            .skip(1)
            .map(|rest| rest.split('\'').next().unwrap_or_default())
            .collect();
        assert!(!called.is_empty());
        assert!(
            called
                .iter()
                .all(|command| ["TIME", "GET", "SET"].contains(command))
        );
        assert!(!SCRIPT.contains("redis.pcall"));
    }
}
