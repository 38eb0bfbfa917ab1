//! `redis.call` and the commands it models (`GET`, `SET`, `TIME`): arguments read as Redis
//! reads them, replies pushed as Redis pushes them, anything else refused by name.

use core::ffi::c_int;

use mlua::ffi;

use super::set::set_command;
use super::{Context, bytes, not_modelled, push, raise, upvalue_context};

/// A command's argument as text: a Lua string's own bytes, or a number's text.
enum Text<'a> {
    Borrowed(&'a str),
    Owned(String),
}

impl core::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Borrowed(text) => text,
            Text::Owned(text) => text,
        }
    }
}

/// A command's argument at `index` as the text Redis makes of it: a string as it is, a
/// number as `%.17g` prints it; anything else is refused, as Redis refuses it.
///
/// # Safety
///
/// Called by [`call`] only (for its upvalues); `index` is an argument on `state`'s stack, which
/// has room for four more values; the borrowed text outlives neither the argument's place on
/// the stack nor `'a`.
unsafe fn argument<'a>(state: *mut ffi::lua_State, index: c_int) -> Result<Text<'a>, String> {
    // SAFETY: `state` is live and `index` a valid slot (the caller's contract).
    match unsafe { ffi::lua_type(state, index) } {
        ffi::LUA_TSTRING => {
            // SAFETY: slot `index` holds a string (just checked), which stays there while the
            // text lives (the caller's contract).
            let bytes = unsafe { bytes(state, index) };
            Ok(core::str::from_utf8(bytes).map_or_else(
                |_| Text::Owned(String::from_utf8_lossy(bytes).into_owned()),
                Text::Borrowed,
            ))
        }
        ffi::LUA_TNUMBER => {
            // SAFETY: slot `index` holds a number (just checked).
            let n = unsafe { ffi::lua_tonumber(state, index) };
            // Whole numbers print the same under %.17g while they have at most 17 digits (and
            // are not negative, which leaves -0 to the format).
            if n.fract() == 0.0 && n.abs() < 1e17 && !n.is_sign_negative() {
                #[allow(clippy::cast_possible_truncation)]
                return Ok(Text::Owned((n as i64).to_string()));
            }
            // SAFETY: called from `call`, whose upvalue 2 is Lua's `string.format`, with room
            // for four more values (the caller's contract).
            unsafe { format_number(state, n) }.map(Text::Owned)
        }
        _ => Err("ERR Lua redis lib command arguments must be strings or integers".into()),
    }
}

/// `string.format('%.17g', n)`, by Lua's own `string.format` (C's printf), in a protected
/// call, so that no error unwinds past the caller's frames (which own strings); its error
/// message if it fails (it cannot but for want of memory).
///
/// It pushes three values; `lua_pcall` pops the function and its two arguments and pushes one
/// result or message, which is read while on the stack and then popped, leaving the stack as
/// it was.
///
/// # Safety
///
/// Called by [`redis_call`]'s frames only (its upvalue 2 is Lua's `string.format`); `state`'s
/// stack has room for three more values.
unsafe fn format_number(state: *mut ffi::lua_State, n: f64) -> Result<String, String> {
    // SAFETY: `redis_call`'s upvalue 2, set by `install`, and room for the three values pushed
    // (the caller's contract); the stack is left as it was (see above).
    unsafe {
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(2));
        push(state, b"%.17g");
        ffi::lua_pushnumber(state, n);
        let status = ffi::lua_pcall(state, 2, 1, 0);
        let text = String::from_utf8_lossy(bytes(state, -1)).into_owned();
        ffi::lua_settop(state, -2);
        if status == 0 {
            Ok(text)
        } else {
            Err(format!("ERR {text}"))
        }
    }
}

/// `redis.call`: `GET`, `SET`, `TIME`; anything else refused by name.
///
/// The context is borrowed for the whole command: the engine touches it only between runs
/// (the context rule), and no Lua code, so no hook, runs inside a command.
pub(super) unsafe extern "C-unwind" fn redis_call(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this closure, made by `install`, with its live state.
    let context = unsafe { upvalue_context(state) };
    // SAFETY: the context rule, and no hook inside a command (see above); `call` runs in this
    // C function's frame, on a C function's stack.
    match unsafe { call(state, &mut *context) } {
        Ok(results) => results,
        // SAFETY: the mutable borrow has ended, and this frame owns nothing with a destructor
        // (the message moves into `raise`).
        Err(message) => unsafe { raise(state, context, message) },
    }
}

/// The commands, returning how many results they pushed or the error to raise.
///
/// # Safety
///
/// Called by [`redis_call`] only: Lua gives a C function room for `LUA_MINSTACK` (20) values,
/// more than a command pushes; the arguments stay on the stack (at 1..=n) throughout, so the
/// texts borrowed from them stay valid.
unsafe fn call(state: *mut ffi::lua_State, context: &mut Context) -> Result<c_int, String> {
    // SAFETY: `state` is live (the caller's contract).
    let n = unsafe { ffi::lua_gettop(state) };
    // SAFETY: slot 1 is an acceptable index even with no argument (Lua leaves
    // `LUA_MINSTACK` slots), and reads as `LUA_TNONE` then.
    if unsafe { ffi::lua_type(state, 1) } != ffi::LUA_TSTRING {
        return Err("ERR Lua redis lib command arguments must be strings or integers".into());
    }
    // SAFETY: slot 1 holds a string (just checked), which stays there for this call.
    let name = unsafe { bytes(state, 1) };
    let now_ms = context.now_us / 1_000;
    if name.eq_ignore_ascii_case(b"GET") {
        if n != 2 {
            return Err(wrong("get"));
        }
        // SAFETY: slot 2 is an argument (`n` is 2); the stack has room (this function's
        // contract).
        let key = unsafe { argument(state, 2) }?;
        let value = context.keyspace.get(&key, now_ms);
        // SAFETY: one value pushed, within the room `LUA_MINSTACK` leaves.
        unsafe {
            match value {
                Some(value) => push(state, value.as_bytes()),
                None => ffi::lua_pushboolean(state, 0),
            }
        }
        Ok(1)
    } else if name.eq_ignore_ascii_case(b"SET") {
        if !(3..=7).contains(&n) {
            return Err(wrong("set"));
        }
        // SAFETY: slots 2 and 3 are arguments (`n` is at least 3); the stack has room (this
        // function's contract).
        let (key, value) = unsafe { (argument(state, 2)?, argument(state, 3)?) };
        let mut options = [
            const { Text::Borrowed("") },
            const { Text::Borrowed("") },
            const { Text::Borrowed("") },
            const { Text::Borrowed("") },
        ];
        let count = usize::try_from(n - 3).unwrap_or(0);
        for (slot, index) in options.iter_mut().zip(4..=n) {
            // SAFETY: `index` is at most `n`, an argument; the stack has room.
            *slot = unsafe { argument(state, index) }?;
        }
        let options = options.each_ref().map(|option| &**option);
        if set_command(context, &key, &value, &options[..count])? {
            // SAFETY: two values pushed at most (the table and the string it takes), within
            // the room `LUA_MINSTACK` leaves; -2 is the table just made.
            unsafe {
                ffi::lua_createtable(state, 0, 1);
                push(state, b"OK");
                ffi::lua_setfield(state, -2, c"ok".as_ptr());
            }
        } else {
            // SAFETY: one value pushed, within the room `LUA_MINSTACK` leaves.
            unsafe { ffi::lua_pushboolean(state, 0) };
        }
        Ok(1)
    } else if name.eq_ignore_ascii_case(b"TIME") {
        if n != 1 {
            return Err(wrong("time"));
        }
        // Two bulk strings, seconds and microseconds, made without allocating.
        let (mut seconds, mut micros) = ([0; DIGITS], [0; DIGITS]);
        // SAFETY: at most two values pushed (the table, a string), within `LUA_MINSTACK`; -2 is
        // the table just made; the digits live through each push, which copies them.
        unsafe {
            ffi::lua_createtable(state, 2, 0);
            push(state, decimal(context.now_us / 1_000_000, &mut seconds));
            ffi::lua_rawseti(state, -2, 1);
            push(state, decimal(context.now_us % 1_000_000, &mut micros));
            ffi::lua_rawseti(state, -2, 2);
        }
        Ok(1)
    } else {
        let what = format!(
            "the command {}",
            String::from_utf8_lossy(name).to_ascii_uppercase()
        );
        let message = format!("ERR {}", not_modelled(&what));
        context.refused.get_or_insert(what);
        Err(message)
    }
}

fn wrong(name: &str) -> String {
    format!("ERR wrong number of arguments for '{name}' command")
}

/// Enough digits for any `u64`.
const DIGITS: usize = 20;

/// `n` in decimal, written into `buffer`.
fn decimal(mut n: u64, buffer: &mut [u8; DIGITS]) -> &[u8] {
    let mut at = DIGITS;
    loop {
        at -= 1;
        // A digit: below ten.
        buffer[at] = b'0' + u8::try_from(n % 10).unwrap_or(0);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buffer[at..]
}
