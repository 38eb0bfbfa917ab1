//! The script engine: an embedded Lua 5.1 (built from source with the `mlua` crate, as Redis
//! and Valkey embed it) that runs a script's text against the simulated keyspace, with the
//! Redis scripting surface the shared limiter's script uses and nothing more.
//!
//! `redis.call` implements `TIME` (the server's clock), `GET` and `SET` (with `NX`, and `PX` or
//! `KEEPTTL`); any other command, option or `redis.*` function is refused with an error naming
//! it, so a script cannot silently use something the simulation does not model (see
//! [`redis_lib`](crate::shared::redis_lib)). As in Redis, scripts may not create or read
//! undeclared globals, replies are converted the way Redis converts them (numbers truncated to
//! integers, tables to arrays, `{err = …}` to an error), and a script that runs too long is
//! stopped.
//!
//! One engine serves every run on a thread: compiling a script and making a Lua state cost
//! far more than a run's worth of calls. What a run's server holds (its keyspace, its loaded
//! scripts) is the server's; the engine keeps only compiled functions, which depend on
//! nothing but the script's text. A run sets `KEYS` and `ARGV`, calls the script and converts
//! its reply through Lua's C API: `mlua`'s conversions of a call's arguments and results cost
//! more than the limiter's script itself.
#![allow(unsafe_code)]

use core::cell::RefCell;
use core::ffi::c_int;
use std::collections::HashMap;

use mlua::state::{GcIncParams, GcMode};
use mlua::{Lua, ffi};

use crate::shared::keyspace::Keyspace;
use crate::shared::redis_lib::{self, Context};

mod reply;
pub(crate) use self::reply::LiveText;
pub use self::reply::Reply;
use self::reply::{REPLY_SLOTS, to_reply};

/// A Lua 5.1 state with the Redis scripting surface.
///
/// What its `unsafe` blocks rely on, named in their `SAFETY` comments:
///
/// - *the engine's context*: `context` is made by `Box::into_raw` in `new` and freed only when
///   the engine drops, after which none of the state's functions runs; no script runs between
///   the engine's calls, so nothing else borrows the context then;
/// - *the engine's state*: `state` is the main state of `lua`, live while `lua` is, and used by
///   nothing else (the engine is this thread's, and borrowed mutably while it runs a script);
///   the anchors and the compiled functions are references in its registry;
/// - *only memory errors*: outside a script's own protected call, only running out of memory
///   could raise a Lua error (which would abort).
pub(crate) struct Engine {
    lua: Lua,
    /// Its main state, which runs the scripts through Lua's C API.
    state: *mut ffi::lua_State,
    /// References in the registry to the globals `KEYS` and `ARGV`, and to the strings
    /// `"err"` and `"ok"` (the fields of error and status replies), in that order.
    anchors: [c_int; 4],
    /// How many of `KEYS` and `ARGV` the last run set (the rest are nil).
    set: (usize, usize),
    /// Compiled scripts by SHA-1, as references in the registry.
    functions: HashMap<Box<str>, c_int, foldhash::fast::FixedState>,
    /// What the scripts' calls see; owned here (made by `Box::into_raw`), reached by the
    /// Lua state's C functions while a script runs.
    context: *mut Context,
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` in `Engine::new`, freed once; no script runs now.
        drop(unsafe { Box::from_raw(self.context) });
    }
}

impl core::fmt::Debug for Engine {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Engine")
            .field("compiled", &self.functions.len())
            .finish_non_exhaustive()
    }
}

thread_local! {
    /// This thread's engine, made on first use.
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's engine.
///
/// # Panics
///
/// If the Lua state cannot be made (out of memory), or `f` reenters.
pub(crate) fn with_engine<T>(f: impl FnOnce(&mut Engine) -> T) -> T {
    ENGINE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let engine = slot.get_or_insert_with(|| {
            Engine::new().unwrap_or_else(|error| panic!("cannot start Lua: {error}"))
        });
        f(engine)
    })
}

/// The hex SHA-1 of a script's text, the name `EVALSHA` calls it by.
pub(crate) fn sha1_hex(text: &str) -> Box<str> {
    sha1_smol::Sha1::from(text).digest().to_string().into()
}

impl Engine {
    /// A Lua state with the Redis scripting library, `KEYS` and `ARGV` and the reply fields
    /// held in its registry, and Redis's guard on globals.
    ///
    /// The library is installed as [`redis_lib::install`] requires: `exec_raw` runs the
    /// closure on the fresh state's main thread in a protected call; `lua_checkstack` makes
    /// room for the four values `install` pushes at once; the context, made just before, is
    /// the engine's from then on (*the engine's context*).
    fn new() -> mlua::Result<Engine> {
        let lua = Lua::new();
        // Collect when the heap has grown fourfold rather than twofold: the simulation's Lua
        // holds little, and collecting is a tenth of its time at the default.
        lua.gc_set_mode(GcMode::Incremental(GcIncParams::default().pause(400)));
        let context = Box::into_raw(Box::new(Context::default()));
        let mut state = core::ptr::null_mut();
        // SAFETY: `install`'s contract, met as `new`'s documentation says: a protected call,
        // room for its four values, and the engine's context.
        let installed = unsafe {
            lua.exec_raw::<()>((), |main| {
                state = main;
                if ffi::lua_checkstack(main, 8) != 0 {
                    redis_lib::install(main, context);
                }
            })
        };
        if let Err(error) = installed {
            // SAFETY: made just above; nothing calls the state's functions any more.
            drop(unsafe { Box::from_raw(context) });
            return Err(error);
        }
        let (keys, argv) = (lua.create_table()?, lua.create_table()?);
        let globals = lua.globals();
        globals.raw_set("KEYS", &keys)?;
        globals.raw_set("ARGV", &argv)?;
        let mut anchors = [0; 4];
        let fields = (lua.create_string("err")?, lua.create_string("ok")?);
        // SAFETY: `exec_raw` pushes the four values onto the stack it gives the closure, and
        // `luaL_ref` pops one each, top first, into the registry.
        unsafe {
            lua.exec_raw::<()>((&keys, &argv, &fields.0, &fields.1), |state| {
                for anchor in anchors.iter_mut().rev() {
                    *anchor = ffi::luaL_ref(state, ffi::LUA_REGISTRYINDEX);
                }
            })?;
        }
        let mut engine = Engine {
            lua,
            state,
            anchors,
            set: (0, 0),
            functions: HashMap::default(),
            context,
        };
        // Redis's guard: a script may neither make nor read undeclared globals.
        engine
            .lua
            .load(
                r#"setmetatable(_G, {
                __newindex = function(_, name)
                    error("Script attempted to create global variable '" .. tostring(name) .. "'", 2)
                end,
                __index = function(_, name)
                    error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
                end,
            })"#,
            )
            .exec()?;
        engine.set = (0, 0);
        Ok(engine)
    }

    /// Compiles `text` (known by `sha`) unless it is compiled already; the error reply of
    /// `SCRIPT LOAD` if it does not compile.
    pub(crate) fn compile(&mut self, sha: &str, text: &str) -> Result<(), Reply> {
        if self.functions.contains_key(sha) {
            return Ok(());
        }
        let function = self
            .lua
            .load(text)
            .set_name(format!("@user_script:{sha}"))
            .into_function()
            .map_err(|error| Reply::Error(format!("ERR Error compiling script: {error}").into()))?;
        let mut anchor = 0;
        // SAFETY: `exec_raw` pushes the function onto the stack it gives the closure, and
        // `luaL_ref` pops it into the registry.
        unsafe {
            self.lua.exec_raw::<()>(&function, |state| {
                anchor = ffi::luaL_ref(state, ffi::LUA_REGISTRYINDEX);
            })
        }
        .map_err(|error| Reply::Error(format!("ERR {error}").into()))?;
        self.functions.insert(sha.into(), anchor);
        Ok(())
    }

    /// Runs the compiled script `sha` with `keys` and `args`, at server time `now_us`, on
    /// `keyspace`, for `request`: its reply, and the name of the first thing it used that is
    /// not modelled, if it did.
    ///
    /// On the engine's state, `lua_checkstack` makes room for the five values pushed (the
    /// anchored `KEYS`, `ARGV`, `"err"` and `"ok"`, and the script's function), which leaves
    /// them above `base` as [`run_raw`] requires, and `lua_settop` removes them afterwards.
    pub(crate) fn run<'a>(
        &mut self,
        sha: &str,
        keyspace: &mut Keyspace,
        now_us: u64,
        request: u32,
        keys: impl Iterator<Item = &'a str>,
        args: impl Iterator<Item = &'a str>,
    ) -> (Reply, Option<String>) {
        let Some(&function) = self.functions.get(sha) else {
            return (
                Reply::Error("NOSCRIPT No matching script. Please use EVAL.".into()),
                None,
            );
        };
        // SAFETY: the engine's context, which nothing else borrows between runs; this borrow
        // ends before the script runs.
        let context = unsafe { &mut *self.context };
        core::mem::swap(&mut context.keyspace, keyspace);
        context.now_us = now_us;
        context.request = request;
        context.instructions = 0;
        context.refused = None;
        let set = self.set;
        let state = self.state;
        // SAFETY: the engine's state, and only memory errors; the stack as `run` documents: five
        // values pushed after `lua_checkstack`, above `base` as `run_raw` requires, then removed.
        let reply = unsafe {
            let base = ffi::lua_gettop(state);
            if ffi::lua_checkstack(state, SCRIPT + 1) == 0 {
                Reply::Error("ERR the Lua stack is full".into())
            } else {
                for anchor in self.anchors.into_iter().chain([function]) {
                    ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, anchor.into());
                }
                let (reply, counts) = run_raw(state, base, keys, args, set);
                self.set = counts;
                ffi::lua_settop(state, base);
                reply
            }
        };
        // SAFETY: as above; the script has returned, so its C functions hold no borrow.
        let context = unsafe { &mut *self.context };
        core::mem::swap(&mut context.keyspace, keyspace);
        (reply, context.refused.take())
    }
}

/// Stack slots of [`run_raw`]'s arguments.
const KEYS: c_int = 1;
const ARGV: c_int = 2;
const ERR: c_int = 3;
const OK: c_int = 4;
const SCRIPT: c_int = 5;

/// Sets `KEYS` and `ARGV` to `keys` and `args`, and nil where the last run (`set`) had more;
/// calls the script; its reply, and how many keys and arguments it was given.
///
/// The stack gets [`REPLY_SLOTS`] more before anything is pushed, which `fill` (one at a time)
/// and `to_reply` (two per level, nested at most `DEEPEST_REPLY` deep) stay within; the script
/// runs in `lua_pcall`, so its errors come back as a status, with the message on top.
///
/// # Safety
///
/// `state`'s stack holds, above `base`, exactly the tables `KEYS` and `ARGV`, the strings
/// `"err"` and `"ok"`, and the script's function.
unsafe fn run_raw<'a>(
    state: *mut ffi::lua_State,
    base: c_int,
    keys: impl Iterator<Item = &'a str>,
    args: impl Iterator<Item = &'a str>,
    (set_keys, set_args): (usize, usize),
) -> (Reply, (usize, usize)) {
    // SAFETY: with the five values above `base` (the caller's contract), `base + KEYS` …
    // `base + SCRIPT` are valid slots; the room made and the script's errors as documented above.
    unsafe {
        if ffi::lua_checkstack(state, REPLY_SLOTS) == 0 {
            return (
                Reply::Error("ERR the Lua stack is full".into()),
                (set_keys, set_args),
            );
        }
        let n_keys = fill(state, base + KEYS, keys, set_keys);
        let n_args = fill(state, base + ARGV, args, set_args);
        let counts = (n_keys, n_args);
        ffi::lua_pushvalue(state, base + SCRIPT);
        if ffi::lua_pcall(state, 0, 1, 0) != 0 {
            let message = if ffi::lua_type(state, -1) == ffi::LUA_TSTRING {
                String::from_utf8_lossy(redis_lib::bytes(state, -1)).into_owned()
            } else {
                "the script raised an error that is not a string".to_owned()
            };
            return (Reply::Error(format!("ERR {message}").into()), counts);
        }
        (to_reply(state, base, ffi::lua_gettop(state), 0), counts)
    }
}

/// Sets `table[1..]` (the table at stack slot `table`) to `values`, and nil past them up to
/// `set`; how many values there were. A value the table holds already is left: most runs
/// repeat most of the last run's keys and arguments, and comparing costs less than making a
/// Lua string (which hashes it).
///
/// # Safety
///
/// `table` is a table on `state`'s stack, which has room for one more value.
unsafe fn fill<'a>(
    state: *mut ffi::lua_State,
    table: c_int,
    values: impl Iterator<Item = &'a str>,
    set: usize,
) -> usize {
    let mut n = 0;
    for (index, value) in (1..).zip(values) {
        n += 1;
        // SAFETY: a table's slot, room for one value at a time (the caller's contract); the value
        // read is compared on the stack, then popped; a new string is popped into the table.
        unsafe {
            let held = ffi::lua_rawgeti(state, table, index) == ffi::LUA_TSTRING
                && redis_lib::bytes(state, -1) == value.as_bytes();
            ffi::lua_settop(state, -2);
            if !held {
                ffi::lua_pushlstring(state, value.as_ptr().cast(), value.len());
                ffi::lua_rawseti(state, table, index);
            }
        }
    }
    for index in n..set {
        let index = ffi::lua_Integer::try_from(index + 1).unwrap_or(ffi::lua_Integer::MAX);
        // SAFETY: as above; the nil pushed is popped into the table.
        unsafe {
            ffi::lua_pushnil(state);
            ffi::lua_rawseti(state, table, index);
        }
    }
    n
}

#[cfg(test)]
mod tests;
