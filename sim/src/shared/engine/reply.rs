//! A server's reply ([`Reply`]), and how Redis converts a script's returned Lua value into one.

use core::ffi::c_int;

use mlua::ffi;

use super::{ERR, OK};
use crate::shared::redis_lib;

/// A reply of the server, as RESP types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// An integer.
    Integer(i64),
    /// A bulk string.
    Bulk(Box<str>),
    /// The null reply.
    Nil,
    /// A status reply (`+OK`).
    Status(Box<str>),
    /// An error reply, its code first (`ERR …`, `NOSCRIPT …`).
    Error(Box<str>),
    /// An array.
    Array(Vec<Reply>),
}

impl Reply {
    /// The reply as the array of integers the shared limiter's client reads (redis-rs's
    /// `Vec<i64>`), or why it is not one.
    pub(crate) fn integers(&self) -> Result<Vec<i64>, &Reply> {
        let Reply::Array(items) = self else {
            return Err(self);
        };
        items
            .iter()
            .map(|item| match item {
                Reply::Integer(n) => Ok(*n),
                _ => Err(self),
            })
            .collect()
    }
}

impl Reply {
    /// The reply as [`integers`](Reply::integers) reads it, or, for a `limits` call's (four
    /// integers, then the live limits' text), its integers and its text: `Some(None)` where
    /// the script answered none stored (`false`, the null reply).
    pub(crate) fn integers_and_text(&self) -> Result<(Vec<i64>, LiveText), &Reply> {
        if let Reply::Array(items) = self
            && let [first @ .., last @ (Reply::Bulk(_) | Reply::Nil)] = &items[..]
            && first.len() == 4
        {
            let text = match last {
                Reply::Bulk(text) => Some(text.clone()),
                _ => None,
            };
            let values = first
                .iter()
                .map(|item| match item {
                    Reply::Integer(n) => Ok(*n),
                    _ => Err(self),
                })
                .collect::<Result<Vec<i64>, &Reply>>()?;
            return Ok((values, Some(text)));
        }
        self.integers().map(|values| (values, None))
    }
}

/// A `limits` call's live limits' text, if the reply has its place: `None` inside where the
/// server holds none.
pub(crate) type LiveText = Option<Option<Box<str>>>;

/// Nesting deeper than this is not a reply any script here gives.
const DEEPEST_REPLY: usize = 8;
/// Stack slots a reply's conversion may use: two per level of nesting, and a few more.
pub(super) const REPLY_SLOTS: c_int = 2 * 8 + 8;

/// The value at stack slot `index` (absolute) as Redis converts a script's reply (`base` as
/// for [`run_raw`](super::run_raw)).
///
/// A level uses two stack slots: it pushes one item at a time and pops it before the next, and
/// [`string_field`] pushes one; strings are read while on the stack; nesting stops at
/// [`DEEPEST_REPLY`].
///
/// # Safety
///
/// `index` is on `state`'s stack, which has room for two values per level of nesting left;
/// `base + ERR` and `base + OK` hold the field names.
pub(super) unsafe fn to_reply(
    state: *mut ffi::lua_State,
    base: c_int,
    index: c_int,
    depth: usize,
) -> Reply {
    // SAFETY: valid slots and room for two values a level (the caller's contract), which is
    // what a level uses, to `DEEPEST_REPLY` deep; strings are read on the stack (see above).
    unsafe {
        match ffi::lua_type(state, index) {
            // Redis truncates Lua's numbers to integers.
            #[allow(clippy::cast_possible_truncation)]
            ffi::LUA_TNUMBER => Reply::Integer(ffi::lua_tonumber(state, index) as i64),
            ffi::LUA_TSTRING => {
                Reply::Bulk(String::from_utf8_lossy(redis_lib::bytes(state, index)).into())
            }
            ffi::LUA_TBOOLEAN if ffi::lua_toboolean(state, index) != 0 => Reply::Integer(1),
            ffi::LUA_TTABLE => {
                if let Some(err) = string_field(state, index, base + ERR) {
                    return Reply::Error(err);
                }
                if let Some(ok) = string_field(state, index, base + OK) {
                    return Reply::Status(ok);
                }
                if depth >= DEEPEST_REPLY {
                    return Reply::Error("ERR reply nested too deeply".into());
                }
                let mut items = Vec::with_capacity(ffi::lua_objlen(state, index));
                for i in 1.. {
                    if ffi::lua_rawgeti(state, index, i) == ffi::LUA_TNIL {
                        ffi::lua_settop(state, -2);
                        break;
                    }
                    items.push(to_reply(state, base, ffi::lua_gettop(state), depth + 1));
                    ffi::lua_settop(state, -2);
                }
                Reply::Array(items)
            }
            _ => Reply::Nil,
        }
    }
}

/// `table[field]` (`field` the stack slot of the key), if it is a string.
///
/// The one value pushed (the key, then the field's value in its place) is read while on the
/// stack and popped.
///
/// # Safety
///
/// `table` is a table at that (absolute) slot of `state`'s stack, `field` a valid (absolute)
/// slot, and the stack has room for one more value.
unsafe fn string_field(state: *mut ffi::lua_State, table: c_int, field: c_int) -> Option<Box<str>> {
    // SAFETY: a table and its key at valid slots, with room for one value (the caller's
    // contract); the one value pushed is read while on the stack, then popped.
    unsafe {
        ffi::lua_pushvalue(state, field);
        let found = ffi::lua_rawget(state, table) == ffi::LUA_TSTRING;
        let text = found.then(|| String::from_utf8_lossy(redis_lib::bytes(state, -1)).into());
        ffi::lua_settop(state, -2);
        text
    }
}
