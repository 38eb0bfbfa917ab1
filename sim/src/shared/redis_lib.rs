//! The Redis scripting library the simulated server gives scripts (`redis.call`,
//! `redis.error_reply`, `redis.status_reply`, the busy-script limit), as Lua C functions, and
//! a quicker `tonumber` with Lua's own results.
//!
//! These run once or more per simulated call, so they are written against Lua's C API rather
//! than through `mlua`'s callbacks, whose argument conversion and error wrapping cost more
//! than the commands themselves. Measured on 2026-12-04 (`cargo bench -p fixed-window-sim
//! --bench shared -- --noplot 'shared/(run/drawn|run/healthy|sweep)'`: criterion medians,
//! thread CPU time, one core, the default shared sweep's first 200 scenarios), in simulated
//! calls per second, with `mlua` 0.11 and then 0.12:
//!
//! | | scenarios as drawn | without faults | a sweep's whole work |
//! |---|---|---|---|
//! | this library and the engine on Lua's C API | 504 k, 515 k; 503 k | 422 k, 435 k; 424 k | 439 k, 457 k; 458 k |
//! | the same on `mlua`'s safe API | 321 k; 319 k | 270 k; 271 k | 295 k; 299 k |
//!
//! The safe version registered `redis.call`, the replies, the `__index` refusal and
//! `tonumber` with `Lua::create_function`, the budget with `Lua::set_hook`, kept the context in
//! an `Rc<RefCell<_>>` the closures shared, and ran a script with `Function::call`, filling
//! `KEYS` and `ARGV` with `Table::raw_set` and converting the `Value` it returned; its traces
//! were the same (the 1,000-scenario sweep's summary unchanged). A third of the throughput
//! for no change in behaviour: the raw calls stay, each `unsafe` block stating what it relies
//! on in a `SAFETY` comment. The rules that keep the C API sound here:
//!
//! - a function reaches the server's [`Context`] through a light userdata upvalue (the hook,
//!   which has no upvalues, through the registry); the engine owns the context, outlives its
//!   Lua state's calls, and touches it only between them;
//! - a Lua error unwinds by `longjmp`, so it is raised only from frames that hold nothing
//!   with a destructor: the message is kept in the context, and the raising frame borrows it
//!   (the one exception is Lua running out of memory while a command pushes its reply, which
//!   the simulation does not survive anyway); Lua code a command itself calls (`string.format`
//!   for a number's text) runs in a protected call, and is Lua's own, taken when the library
//!   is installed, so that a script replacing `string.format` cannot raise through a command;
//! - nothing here panics on any input: every fallible step returns a message instead.
#![allow(unsafe_code)]

use core::ffi::{c_int, c_void};

use mlua::ffi;

use crate::shared::keyspace::Keyspace;

/// Lua instructions a script may run before it is stopped (Redis's busy-script limit is a
/// time; a count keeps the simulation deterministic). The limiter's script runs a few hundred.
pub(crate) const INSTRUCTION_BUDGET: u32 = 1_000_000;
/// How often the budget is checked, in instructions.
const HOOK_EVERY: c_int = 10_000;

/// The registry key of the context, for the hook.
const CONTEXT_KEY: &core::ffi::CStr = c"fixed-window-sim.context";

/// What a script's calls see while it runs.
#[derive(Debug, Default)]
pub(crate) struct Context {
    /// The server's keyspace, lent for the run.
    pub(crate) keyspace: Keyspace,
    /// The server's time, in microseconds.
    pub(crate) now_us: u64,
    /// The request whose script runs, for the write log.
    pub(crate) request: u32,
    /// Instructions run so far, in steps of [`HOOK_EVERY`].
    pub(crate) instructions: u32,
    /// The first command or function the script tried that is not modelled.
    pub(crate) refused: Option<String>,
    /// The message of the error being raised (see the module's rules).
    message: String,
}

/// Installs `redis` (with `call`, `error_reply`, `status_reply`, and a metatable refusing
/// everything else by name) as a global of `state`, the busy-script hook, and [`tonumber`]
/// in place of Lua's.
///
/// # Safety
///
/// `state` is a Lua state with room for four more values on its stack, in a protected call;
/// `context` stays valid, and is touched by nothing else, while any of `state`'s functions
/// run.
pub(crate) unsafe fn install(state: *mut ffi::lua_State, context: *mut Context) {
    // SAFETY: `state` is live, in a protected call (an allocation failure unwinds to it), with
    // room for four more values, as the caller promises; at most four are pushed at once (the
    // `redis` table, a closure's two upvalues and the `string` table they come from), and
    // `string` and `tonumber` are Lua's own (no script has run yet). Every index is either relative to values
    // pushed here (-2: the table or metatable just made) or a pseudo-index. The closures and
    // the registry keep `context` as a light userdata only, which the caller keeps valid.
    unsafe {
        ffi::lua_createtable(state, 0, 4);
        ffi::lua_pushlightuserdata(state, context.cast::<c_void>());
        // Lua's own `string.format`, taken now: a script may replace the global's field.
        ffi::lua_getfield(state, ffi::LUA_GLOBALSINDEX, c"string".as_ptr());
        ffi::lua_getfield(state, -1, c"format".as_ptr());
        ffi::lua_replace(state, -2);
        ffi::lua_pushcclosure(state, redis_call, 2);
        ffi::lua_setfield(state, -2, c"call".as_ptr());
        ffi::lua_pushcclosure(state, error_reply, 0);
        ffi::lua_setfield(state, -2, c"error_reply".as_ptr());
        ffi::lua_pushcclosure(state, status_reply, 0);
        ffi::lua_setfield(state, -2, c"status_reply".as_ptr());
        // Anything else of redis.* (pcall, log, sha1hex, setresp, …) is refused by name.
        ffi::lua_createtable(state, 0, 1);
        ffi::lua_pushlightuserdata(state, context.cast::<c_void>());
        ffi::lua_pushcclosure(state, refuse_function, 1);
        ffi::lua_setfield(state, -2, c"__index".as_ptr());
        ffi::lua_setmetatable(state, -2);
        ffi::lua_setfield(state, ffi::LUA_GLOBALSINDEX, c"redis".as_ptr());
        ffi::lua_pushlightuserdata(state, context.cast::<c_void>());
        ffi::lua_setfield(state, ffi::LUA_REGISTRYINDEX, CONTEXT_KEY.as_ptr());
        ffi::lua_sethook(state, Some(budget), ffi::LUA_MASKCOUNT, HOOK_EVERY);
        ffi::lua_getfield(state, ffi::LUA_GLOBALSINDEX, c"tonumber".as_ptr());
        ffi::lua_pushcclosure(state, tonumber, 1);
        ffi::lua_setfield(state, ffi::LUA_GLOBALSINDEX, c"tonumber".as_ptr());
    }
}

/// `tonumber(s [, base])`, as Lua 5.1's own gives it, but reading a string of decimal (base
/// 10) or hexadecimal (base 16) digits short enough to be exact itself: Lua's reads every
/// decimal twice with C's `strtod`, which costs more than the rest of the limiter's script.
/// Anything else goes to Lua's `tonumber` (the closure's upvalue).
unsafe extern "C-unwind" fn tonumber(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this C function with its live state, the `n` arguments at 1..=n, room
    // for `LUA_MINSTACK` (20) more values, and Lua's own `tonumber` as upvalue 1 (`install`
    // put it there). Slot 1 is read as bytes only after `lua_type` says it is a string, and
    // slot 2 only if `n` >= 2; `lua_call` gets the `n` arguments below the function it calls.
    // Nothing with a destructor lives in this frame if Lua's `tonumber` raises an error.
    unsafe {
        let n = ffi::lua_gettop(state);
        if ffi::lua_type(state, 1) == ffi::LUA_TSTRING {
            let base = match (n, ffi::lua_type(state, 2)) {
                (1, _) => Some(10),
                (_, ffi::LUA_TNUMBER) => match ffi::lua_tonumber(state, 2) {
                    10.0 => Some(10),
                    16.0 => Some(16),
                    _ => None,
                },
                _ => None,
            };
            if let Some(value) = base.and_then(|base| exact_digits(bytes(state, 1), base)) {
                ffi::lua_pushnumber(state, value);
                return 1;
            }
        }
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, n, 1);
        1
    }
}

/// The value of `digits` in `base` (10 or 16) if they are nothing but digits, at most 16 of
/// them, and the value is at most 2^53, where a double holds every integer exactly (as Lua's
/// `strtod` or `strtoul` would read it).
pub(crate) fn exact_digits(digits: &[u8], base: u32) -> Option<f64> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut value: u64 = 0;
    for &digit in digits {
        value = value * u64::from(base) + u64::from(char::from(digit).to_digit(base)?);
    }
    // At most 2^53: exact.
    #[allow(clippy::cast_precision_loss)]
    (value <= 1 << 53).then_some(value as f64)
}

/// Raises `message` as a Lua error.
///
/// # Safety
///
/// As for a C function's own stack; see the module's rules.
unsafe fn raise(state: *mut ffi::lua_State, context: *mut Context, message: String) -> c_int {
    // The message moves into the context, so no frame owns it when the error unwinds.
    // SAFETY: `context` is the engine's (the caller's contract), valid while a script runs, and
    // no other reference to it is alive here.
    let message = unsafe {
        (*context).message = message;
        &(*context).message
    };
    // SAFETY: `state` is live and in a C function (or hook) called by Lua, with room for the
    // one value pushed; `lua_error` unwinds by `longjmp` past frames that own nothing with a
    // destructor (the caller's contract), and Lua copies the message before the context's
    // copy is next written.
    unsafe {
        ffi::lua_pushlstring(state, message.as_ptr().cast(), message.len());
        ffi::lua_error(state)
    }
}

/// The context of a C function, its first upvalue.
///
/// # Safety
///
/// The function was installed by [`install`].
unsafe fn upvalue_context(state: *mut ffi::lua_State) -> *mut Context {
    // SAFETY: `state` is live and runs a C closure that `install` made with the context's
    // light userdata as its upvalue 1 (the caller's contract), so the pseudo-index is valid.
    unsafe { ffi::lua_touserdata(state, ffi::lua_upvalueindex(1)).cast::<Context>() }
}

/// The bytes of the string at `index` (which must be one), valid while it is on the stack.
///
/// # Safety
///
/// `index` is a string on `state`'s stack; the bytes outlive neither its place there nor `'a`.
pub(crate) unsafe fn bytes<'a>(state: *mut ffi::lua_State, index: c_int) -> &'a [u8] {
    let mut len = 0;
    // SAFETY: `state` is live and `index` is a valid slot of its stack (the caller's contract);
    // `len` outlives the call.
    let data = unsafe { ffi::lua_tolstring(state, index, &raw mut len) };
    if data.is_null() {
        return &[];
    }
    // SAFETY: Lua returned `len` bytes at `data`, not null, in a string that Lua neither moves
    // nor frees while it stays on the stack, which `'a` does not outlive (the caller's contract).
    unsafe { core::slice::from_raw_parts(data.cast::<u8>(), len) }
}

/// Pushes `text` as a Lua string.
///
/// # Safety
///
/// `state` has room for one more value.
unsafe fn push(state: *mut ffi::lua_State, text: &[u8]) {
    // SAFETY: `state` is live with room for one more value (the caller's contract); Lua copies
    // the `text.len()` bytes at `text`, which are valid for the call.
    unsafe { ffi::lua_pushlstring(state, text.as_ptr().cast(), text.len()) };
}

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
/// # Safety
///
/// Called by [`redis_call`]'s frames only (its upvalue 2 is Lua's `string.format`); `state`'s
/// stack has room for three more values.
unsafe fn format_number(state: *mut ffi::lua_State, n: f64) -> Result<String, String> {
    // SAFETY: `state` is live and runs `redis_call`, whose upvalue 2 `install` set; three
    // values are pushed (within the room promised), `lua_pcall` pops the function and its two
    // arguments and pushes one result or message, which is read while on the stack and then
    // popped, leaving the stack as it was.
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
unsafe extern "C-unwind" fn redis_call(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this closure, made by `install`, with its live state.
    let context = unsafe { upvalue_context(state) };
    // SAFETY: the context is valid while a script runs and nothing else borrows it meanwhile
    // (the engine touches it only between runs, and no Lua code, so no hook, runs inside a
    // command); `call` runs in this C function's frame, with `LUA_MINSTACK` free slots.
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
        // SAFETY: two values pushed at most (the table and one string), within the room
        // `LUA_MINSTACK` leaves; -2 is the table just made; the digits live through the push,
        // which copies them.
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

/// `redis.<name>` for any name not modelled: refused by name.
unsafe extern "C-unwind" fn refuse_function(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this closure, made by `install`, with its live state.
    let context = unsafe { upvalue_context(state) };
    // SAFETY: an `__index` metamethod gets the table and the key, at slots 1 and 2.
    let name = match unsafe { ffi::lua_type(state, 2) } {
        ffi::LUA_TSTRING | ffi::LUA_TNUMBER => {
            // SAFETY: slot 2 holds a string or a number, which `lua_tolstring` turns into one
            // in place; it stays there while the bytes are copied.
            String::from_utf8_lossy(unsafe { bytes(state, 2) }).into_owned()
        }
        _ => "?".to_owned(),
    };
    let name = format!("redis.{name}");
    let message = not_modelled(&name);
    // SAFETY: the context is valid while a script runs, and nothing else borrows it here.
    unsafe { (*context).refused.get_or_insert(name) };
    // SAFETY: this frame owns nothing with a destructor any more (the name moved into the
    // context, the message moves into `raise`).
    unsafe { raise(state, context, message) }
}

/// `redis.error_reply(message)`: `{ err = message }`.
unsafe extern "C-unwind" fn error_reply(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this C function with its live state and its own stack.
    unsafe { field_reply(state, c"err") }
}

/// `redis.status_reply(message)`: `{ ok = message }`.
unsafe extern "C-unwind" fn status_reply(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this C function with its live state and its own stack.
    unsafe { field_reply(state, c"ok") }
}

/// `{ [field] = first argument }`.
///
/// # Safety
///
/// A C function's stack.
unsafe fn field_reply(state: *mut ffi::lua_State, field: &core::ffi::CStr) -> c_int {
    // SAFETY: `state` is live in a C function (the caller's contract), with `LUA_MINSTACK`
    // free slots; `lua_settop(1)` leaves exactly the first argument (nil if none), two values
    // are pushed above it, and -2 is the table just made.
    unsafe {
        ffi::lua_settop(state, 1);
        ffi::lua_createtable(state, 0, 1);
        ffi::lua_pushvalue(state, 1);
        ffi::lua_setfield(state, -2, field.as_ptr());
    }
    1
}

/// The busy-script limit: every [`HOOK_EVERY`] instructions, stop a script that has run past
/// [`INSTRUCTION_BUDGET`].
unsafe extern "C-unwind" fn budget(state: *mut ffi::lua_State, _: *mut ffi::lua_Debug) {
    // SAFETY: Lua calls a hook with its live state and `LUA_MINSTACK` free slots; the one
    // value pushed (the registry's context, or nil) is popped again.
    let context = unsafe {
        ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, CONTEXT_KEY.as_ptr());
        let context = ffi::lua_touserdata(state, -1).cast::<Context>();
        ffi::lua_settop(state, -2);
        context
    };
    if context.is_null() {
        return;
    }
    // SAFETY: not null (just checked): the engine's context, valid while a script runs, and
    // borrowed by nothing else while Lua instructions run.
    let instructions = unsafe { &mut (*context).instructions };
    *instructions = instructions.saturating_add(HOOK_EVERY.unsigned_abs());
    if *instructions >= INSTRUCTION_BUDGET {
        let message = "BUSY the script ran past the simulation's instruction budget".to_owned();
        // SAFETY: a count hook may raise an error; the borrow of the context has ended, and
        // this frame owns nothing with a destructor (the message moves into `raise`).
        unsafe { raise(state, context, message) };
    }
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

pub(crate) fn not_modelled(what: &str) -> String {
    format!("fixed-window-sim: {what} is not modelled by the simulated server")
}

/// `SET key value [options]`: whether it wrote.
fn set_command(
    context: &mut Context,
    key: &str,
    value: &str,
    options: &[&str],
) -> Result<bool, String> {
    let now_ms = context.now_us / 1_000;
    let (nx, expiry) = match set_options(options) {
        Ok(options) => options,
        Err(SetError::NotModelled(option)) => {
            let what = format!("SET option {option}");
            let message = not_modelled(&what);
            context.refused.get_or_insert(what);
            return Err(format!("ERR {message}"));
        }
        Err(SetError::Invalid(message)) => return Err(message.to_owned()),
    };
    if nx && context.keyspace.exists(key, now_ms) {
        return Ok(false);
    }
    let expires_at_ms = match expiry {
        Expiry::Persist => None,
        Expiry::In(ms) => Some(now_ms.saturating_add(ms)),
        Expiry::Keep => context.keyspace.expiry(key, now_ms),
    };
    let request = context.request;
    context.keyspace.set(request, key, value, expires_at_ms);
    Ok(true)
}

enum SetError {
    NotModelled(String),
    Invalid(&'static str),
}

/// What `SET` does to the key's expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expiry {
    /// None given: the key lives until deleted.
    Persist,
    /// `PX`: this many milliseconds from now.
    In(u64),
    /// `KEEPTTL`: the expiry the key had, if it existed.
    Keep,
}

/// `SET`'s options: whether `NX` was given, and what becomes of the expiry.
fn set_options(options: &[&str]) -> Result<(bool, Expiry), SetError> {
    let mut nx = false;
    let mut expiry = Expiry::Persist;
    let mut rest = options.iter();
    while let Some(option) = rest.next() {
        let upper = |name: &str| option.eq_ignore_ascii_case(name);
        if upper("NX") && !nx {
            nx = true;
        } else if upper("PX") && expiry == Expiry::Persist {
            let ms = rest
                .next()
                .ok_or(SetError::Invalid("ERR syntax error"))?
                .parse::<i64>()
                .map_err(|_| SetError::Invalid("ERR value is not an integer or out of range"))?;
            if ms <= 0 {
                return Err(SetError::Invalid(
                    "ERR invalid expire time in 'set' command",
                ));
            }
            expiry = Expiry::In(ms.unsigned_abs());
        } else if upper("KEEPTTL") && expiry == Expiry::Persist {
            expiry = Expiry::Keep;
        } else if upper("NX") || upper("PX") || upper("KEEPTTL") {
            // Repeated, or PX with KEEPTTL: Redis refuses both.
            return Err(SetError::Invalid("ERR syntax error"));
        } else {
            return Err(SetError::NotModelled(option.to_ascii_uppercase()));
        }
    }
    Ok((nx, expiry))
}

#[cfg(test)]
mod tests {
    use super::exact_digits;

    #[test]
    fn the_quick_tonumber_reads_what_luas_own_reads() {
        let lua = mlua::Lua::new();
        let original: mlua::Function = lua.globals().get("tonumber").expect("Lua's tonumber");
        let inputs = [
            "0",
            "7",
            "42",
            "0042",
            "999999999999999",
            "1698796800000000",
            "9007199254740992",
            "9007199254740993",
            "99999999999999999",
            "1000000",
            "ff",
            "FF",
            "1a2B",
            "20000000000000",
            "20000000000001",
            "fffffffffffff",
            "",
            " 1",
            "1 ",
            "-1",
            "+1",
            "1e5",
            "0x10",
            "1.5",
            "1_0",
            "inf",
            "nan",
            "12\u{0}3",
            "z",
        ];
        for text in inputs {
            for base in [10, 16] {
                let theirs: Option<f64> = original.call((text, base)).expect("tonumber");
                if let Some(ours) = exact_digits(text.as_bytes(), base) {
                    assert_eq!(Some(ours), theirs, "{text:?} in base {base}");
                }
            }
        }
        assert_eq!(
            exact_digits(b"1698796800000000", 10),
            Some(1_698_796_800_000_000.0)
        );
        assert_eq!(
            exact_digits(b"20000000000000", 16),
            Some(9_007_199_254_740_992.0)
        );
        // Past 2^53, or not digits: left to Lua's own.
        for (text, base) in [
            ("9007199254740993", 10),
            ("99999999999999999", 10),
            ("20000000000001", 16),
            (" 1", 10),
        ] {
            assert_eq!(exact_digits(text.as_bytes(), base), None, "{text}");
        }
        assert_eq!(exact_digits(b"1a", 10), None);
    }
}
