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
//! on in a `SAFETY` comment, by the names of these rules that keep the C API sound here:
//!
//! - *the context rule*: a function reaches the server's [`Context`] through a light userdata
//!   upvalue (the hook, which has no upvalues, through the registry); the engine owns the
//!   context, outlives its Lua state's calls, and touches it only between them;
//! - *a C function's stack*: Lua calls a C function (or a hook) with its live state, the
//!   arguments at 1..=n, and room for `LUA_MINSTACK` (20) more values, more than any function
//!   here pushes;
//! - *the unwinding rule*: a Lua error unwinds by `longjmp`, so it is raised only from frames
//!   that hold nothing with a destructor: the message is kept in the context, and the raising
//!   frame borrows it (the one exception is Lua running out of memory while a command pushes
//!   its reply, which the simulation does not survive anyway); Lua code a command itself calls
//!   (`string.format` for a number's text) runs in a protected call, and is Lua's own, taken
//!   when the library is installed, so that a script replacing `string.format` cannot raise
//!   through a command;
//! - nothing here panics on any input: every fallible step returns a message instead.
#![allow(unsafe_code)]

use core::ffi::{c_int, c_void};

use mlua::ffi;

use crate::shared::keyspace::Keyspace;

mod call;
mod set;
mod tonumber;
use self::call::redis_call;
use self::tonumber::tonumber;

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
/// everything else by name) as a global of `state`, the busy-script hook, and [`tonumber()`]
/// in place of Lua's.
///
/// At most four values are pushed at once (the `redis` table, a closure's two upvalues and the
/// `string` table they come from), and `string` and `tonumber` are Lua's own (no script has
/// run yet). Every index is either relative to values pushed here (-2: the table or metatable
/// just made) or a pseudo-index. The closures and the registry keep `context` as a light
/// userdata only.
///
/// # Safety
///
/// `state` is a Lua state with room for four more values on its stack, in a protected call;
/// `context` stays valid, and is touched by nothing else, while any of `state`'s functions
/// run.
pub(crate) unsafe fn install(state: *mut ffi::lua_State, context: *mut Context) {
    // SAFETY: a live state in a protected call (an allocation failure unwinds to it) with room
    // for the four values pushed at once, and a valid `context` (the caller's contract).
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

/// Raises `message` as a Lua error. Lua copies the message before the context's copy is next
/// written.
///
/// # Safety
///
/// `state` runs a C function (or hook) called by Lua, with room for one more value (a C
/// function's stack); `context` is the engine's (the context rule); the frames `lua_error`
/// unwinds past own nothing with a destructor (the unwinding rule).
unsafe fn raise(state: *mut ffi::lua_State, context: *mut Context, message: String) -> c_int {
    // The message moves into the context, so no frame owns it when the error unwinds.
    // SAFETY: `context` is the engine's (the caller's contract), valid while a script runs, and
    // no other reference to it is alive here.
    let message = unsafe {
        (*context).message = message;
        &(*context).message
    };
    // SAFETY: a C function's stack, and the unwinding rule (the caller's contract); Lua copies
    // the message before the context's copy is next written.
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
/// `lua_settop(1)` leaves exactly the first argument (nil if none), two values are pushed
/// above it, and -2 is the table just made.
///
/// # Safety
///
/// A C function's stack.
unsafe fn field_reply(state: *mut ffi::lua_State, field: &core::ffi::CStr) -> c_int {
    // SAFETY: a C function's stack (the caller's contract), with room for the two values
    // pushed; slots as documented above.
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

pub(crate) fn not_modelled(what: &str) -> String {
    format!("fixed-window-sim: {what} is not modelled by the simulated server")
}
