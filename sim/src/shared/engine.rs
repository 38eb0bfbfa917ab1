//! The script engine: an embedded Lua 5.1 (built from source with the `mlua` crate, as Redis
//! and Valkey embed it) that runs a script's text against the simulated keyspace, with the
//! Redis scripting surface the shared limiter's script uses and nothing more.
//!
//! `redis.call` implements `TIME` (the server's clock), `GET` and `SET` (with `NX`, and `PX` or
//! `KEEPTTL`); any other command, option or `redis.*` function is refused with an error naming
//! it, so a script cannot silently use something the simulation does not model. As in Redis, scripts
//! may not create or read undeclared globals, replies are converted the way Redis converts
//! them (numbers truncated to integers, tables to arrays, `{err = …}` to an error), and a
//! script that runs too long is stopped.
//!
//! One engine serves every run on a thread: compiling a script and making a Lua state cost
//! far more than a run's worth of calls. What a run's server holds (its keyspace, its loaded
//! scripts) is the server's; the engine keeps only compiled functions, which depend on
//! nothing but the script's text.

use core::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use mlua::{Function, HookTriggers, Lua, Table, Value, VmState};

use crate::shared::keyspace::Keyspace;

/// Lua instructions a script may run before it is stopped (Redis's busy-script limit is a
/// time; a count keeps the simulation deterministic). The limiter's script runs a few hundred.
const INSTRUCTION_BUDGET: u32 = 1_000_000;
/// How often the budget is checked, in instructions.
const HOOK_EVERY: u32 = 10_000;

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

/// What a script's calls see while it runs.
#[derive(Debug, Default)]
struct Context {
    /// The server's keyspace, lent for the run.
    keyspace: Keyspace,
    /// The server's time, in microseconds.
    now_us: u64,
    /// The request whose script runs, for the write log.
    request: u32,
    /// Instructions run so far, in steps of [`HOOK_EVERY`].
    instructions: u32,
    /// The first command or function the script tried that is not modelled.
    refused: Option<String>,
}

/// A Lua 5.1 state with the Redis scripting surface.
pub(crate) struct Engine {
    lua: Lua,
    /// The Lua function that runs a script: it sets `KEYS`, `ARGV` and the time from its
    /// arguments, calls the script and flattens its reply (see [`SURFACE`]).
    runner: Function,
    /// The Lua function that returns the latest reply as the script returned it.
    last: Function,
    /// Compiled scripts by SHA-1.
    functions: HashMap<Box<str>, Function>,
    context: Rc<RefCell<Context>>,
    /// `KEYS`, for the keys past the runner's four (a batch of attempts), and how far the
    /// last call filled it past them.
    keys: Table,
    long_keys: usize,
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

/// The most keys and arguments the runner passes itself (the shared limiter's single attempts
/// have up to three keys and five arguments, planted clients add one); a batch's further keys,
/// up to [`LONGEST_KEYS`], are set in `KEYS` directly.
const MOST_KEYS: usize = 4;
const LONGEST_KEYS: usize = 2 + fixed_window_redis::MAX_BATCH;
const MOST_ARGS: usize = 8;

/// The Redis scripting surface and the runner of scripts, in Lua around a few Rust functions.
///
/// `redis.call` dispatches the modelled commands to them and refuses everything else by name;
/// `TIME` answers the server's time the runner was given, as Redis's two bulk strings (the
/// replies' tables are made here, in Lua, which is much cheaper than through the embedding).
/// Arguments go to Rust as they are: Rust turns numbers into text the way Redis does.
///
/// The runner runs a script `f` with up to four keys and eight arguments (the arguments
/// after the keys, without gaps; the rest nil) and returns its reply flattened: a tag (0 a
/// value Rust converts, 3 error, 4 status, 5 a table's first five elements), then a string
/// or the value or elements. `last()` gives the latest reply itself, for a table that is not
/// an array of integers.
const SURFACE: &str = r"
local get, set, refuse, wrong = ...
local upper, select, type, rawget, tostring = string.upper, select, type, rawget, tostring
local KEYS, ARGV = KEYS, ARGV
local seconds, micros
redis.call = function(command, ...)
  local name = command
  if name ~= 'GET' and name ~= 'SET' and name ~= 'TIME' then
    if type(command) ~= 'string' then
      error('ERR Lua redis lib command arguments must be strings or integers', 2)
    end
    name = upper(command)
  end
  local n = select('#', ...)
  if name == 'GET' then
    if n ~= 1 then return wrong('get') end
    local value = get(...)
    if value == nil then return false end
    return value
  elseif name == 'SET' then
    if n < 2 or n > 6 then return wrong('set') end
    if set(n, ...) then return { ok = 'OK' } end
    return false
  elseif name == 'TIME' then
    if n ~= 0 then return wrong('time') end
    return { seconds, micros }
  end
  return refuse(name)
end
local last
local function run(f, s, us, k1, k2, k3, k4, a1, a2, a3, a4, a5, a6, a7, a8)
  seconds, micros = s, us
  KEYS[1], KEYS[2], KEYS[3], KEYS[4] = k1, k2, k3, k4
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8] =
    a1, a2, a3, a4, a5, a6, a7, a8
  local reply = f()
  last = reply
  if type(reply) ~= 'table' then return 0, nil, reply end
  local err = rawget(reply, 'err')
  if err ~= nil then return 3, tostring(err) end
  local ok = rawget(reply, 'ok')
  if ok ~= nil then return 4, tostring(ok) end
  return 5, nil, reply[1], reply[2], reply[3], reply[4], reply[5]
end
return run, function() return last end
";

/// What the runner returns (see [`SURFACE`]).
type Flat = (u8, Option<String>, Value, Value, Value, Value, Value);

impl Engine {
    fn new() -> mlua::Result<Engine> {
        let lua = Lua::new();
        // Collect when the heap has grown fourfold rather than twofold: the simulation's Lua
        // holds little, and collecting is a tenth of its time at the default.
        lua.gc_set_pause(400);
        let context = Rc::new(RefCell::new(Context::default()));
        let redis = lua.create_table()?;
        redis.raw_set(
            "error_reply",
            lua.create_function(|lua, message: mlua::String| {
                let reply = lua.create_table()?;
                reply.raw_set("err", message)?;
                Ok(reply)
            })?,
        )?;
        redis.raw_set(
            "status_reply",
            lua.create_function(|lua, message: mlua::String| {
                let reply = lua.create_table()?;
                reply.raw_set("ok", message)?;
                Ok(reply)
            })?,
        )?;
        let globals = lua.globals();
        globals.raw_set("redis", redis.clone())?;
        let keys = lua.create_table()?;
        globals.raw_set("KEYS", keys.clone())?;
        globals.raw_set("ARGV", lua.create_table()?)?;
        let (runner, last): (Function, Function) =
            lua.load(SURFACE).call(commands(&lua, &context)?)?;
        // Anything else of redis.* (pcall, log, sha1hex, setresp, …) is refused by name.
        let refuse_context = Rc::clone(&context);
        let refuse = lua.create_function(move |_, (_, name): (Value, mlua::String)| {
            let name = format!("redis.{}", name.to_string_lossy());
            let message = not_modelled(&name);
            refuse_context.borrow_mut().refused.get_or_insert(name);
            Err::<Value, _>(mlua::Error::runtime(message))
        })?;
        let refusing = lua.create_table()?;
        refusing.raw_set("__index", refuse)?;
        redis.set_metatable(Some(refusing))?;
        // Redis's guard: a script may neither make nor read undeclared globals.
        lua.load(
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
        let hook_context = Rc::clone(&context);
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(HOOK_EVERY),
            move |_, _| {
                let mut context = hook_context.borrow_mut();
                context.instructions += HOOK_EVERY;
                if context.instructions >= INSTRUCTION_BUDGET {
                    return Err(mlua::Error::runtime(
                        "BUSY the script ran past the simulation's instruction budget",
                    ));
                }
                Ok(VmState::Continue)
            },
        )?;
        Ok(Engine {
            lua,
            runner,
            last,
            functions: HashMap::new(),
            context,
            keys,
            long_keys: MOST_KEYS,
        })
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
        self.functions.insert(sha.into(), function);
        Ok(())
    }

    /// Runs the compiled script `sha` with `keys` and `args`, at server time `now_us`, on
    /// `keyspace`, for `request`: its reply, and the name of the first thing it used that is
    /// not modelled, if it did.
    pub(crate) fn run<'a>(
        &mut self,
        sha: &str,
        keyspace: &mut Keyspace,
        now_us: u64,
        request: u32,
        keys: impl Iterator<Item = &'a str>,
        args: impl Iterator<Item = &'a str>,
    ) -> (Reply, Option<String>) {
        let Some(function) = self.functions.get(sha) else {
            return (
                Reply::Error("NOSCRIPT No matching script. Please use EVAL.".into()),
                None,
            );
        };
        let mut k: [Option<&str>; MOST_KEYS] = [None; MOST_KEYS];
        let mut a: [Option<&str>; MOST_ARGS] = [None; MOST_ARGS];
        let mut count = 0;
        for (index, key) in keys.enumerate() {
            count = index + 1;
            if let Some(slot) = k.get_mut(index) {
                *slot = Some(key);
            } else if index >= LONGEST_KEYS || self.keys.raw_set(index + 1, key).is_err() {
                self.long_keys = self.long_keys.max(index);
                return (
                    Reply::Error("ERR too many keys for the simulation".into()),
                    None,
                );
            }
        }
        // A longer call before left keys past this one's: gone, so that `#KEYS` is right.
        for index in count.max(MOST_KEYS)..self.long_keys {
            let _ = self.keys.raw_set(index + 1, Value::Nil);
        }
        self.long_keys = count.max(MOST_KEYS);
        for (index, arg) in args.enumerate() {
            let Some(slot) = a.get_mut(index) else {
                return (
                    Reply::Error("ERR too many arguments for the simulation".into()),
                    None,
                );
            };
            *slot = Some(arg);
        }
        {
            let mut context = self.context.borrow_mut();
            std::mem::swap(&mut context.keyspace, keyspace);
            context.now_us = now_us;
            context.request = request;
            context.instructions = 0;
            context.refused = None;
        }
        // TIME's two bulk strings, seconds and microseconds, made without allocating.
        let (mut seconds, mut micros) = ([0; DIGITS], [0; DIGITS]);
        let seconds = decimal(now_us / 1_000_000, &mut seconds);
        let micros = decimal(now_us % 1_000_000, &mut micros);
        let [k0, k1, k2, k3] = k;
        let [a0, a1, a2, a3, a4, a5, a6, a7] = a;
        let result = self.runner.call::<Flat>((
            function, seconds, micros, k0, k1, k2, k3, a0, a1, a2, a3, a4, a5, a6, a7,
        ));
        let reply = match result {
            Ok((tag, text, v0, v1, v2, v3, v4)) => match tag {
                0 => to_reply(&v0, 0),
                3 => Reply::Error(text.unwrap_or_default().into()),
                4 => Reply::Status(text.unwrap_or_default().into()),
                _ => self.array(&[v0, v1, v2, v3, v4]),
            },
            Err(error) => Reply::Error(format!("ERR {}", script_error(&error)).into()),
        };
        let mut context = self.context.borrow_mut();
        std::mem::swap(&mut context.keyspace, keyspace);
        (reply, context.refused.take())
    }
}

impl Engine {
    /// A table reply from its first five elements: an array of integers if the elements up
    /// to the first nil are all numbers (the shared limiter's replies), else the table as
    /// Redis converts it.
    fn array(&self, elements: &[Value; 5]) -> Reply {
        let n = elements
            .iter()
            .position(|v| matches!(v, Value::Nil))
            .unwrap_or(elements.len());
        let numbers: Option<Vec<Reply>> = elements[..n]
            .iter()
            .map(|v| match v {
                Value::Number(x) => Some(Reply::Integer(truncate(*x))),
                Value::Integer(x) => Some(Reply::Integer(*x)),
                _ => None,
            })
            .collect();
        match numbers {
            Some(items) if n < elements.len() => Reply::Array(items),
            _ => match self.last.call::<Value>(()) {
                Ok(table) => to_reply(&table, 0),
                Err(error) => Reply::Error(format!("ERR {}", script_error(&error)).into()),
            },
        }
    }
}

/// Enough digits for any `u64`.
const DIGITS: usize = 20;

/// `n` in decimal, written into `buffer`.
fn decimal(mut n: u64, buffer: &mut [u8; DIGITS]) -> &str {
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
    core::str::from_utf8(&buffer[at..]).unwrap_or("0")
}

/// The Rust side of `redis.call`: `GET`, `SET`, and the refusals, for [`SURFACE`].
fn commands(
    lua: &Lua,
    context: &Rc<RefCell<Context>>,
) -> mlua::Result<(Function, Function, Function, Function)> {
    let get_context = Rc::clone(context);
    let get = lua.create_function(move |lua, key: Value| {
        let key = argument(lua, &key)?;
        let mut context = get_context.borrow_mut();
        let now_ms = context.now_us / 1_000;
        Ok(context.keyspace.get(&key, now_ms).map(str::to_owned))
    })?;
    let set_context = Rc::clone(context);
    let set =
        lua.create_function(
            move |lua,
                  (n, key, value, a, b, c, d): (
                usize,
                Value,
                Value,
                Value,
                Value,
                Value,
                Value,
            )| {
                let count = n.saturating_sub(2).min(4);
                let given = [a, b, c, d];
                let mut options = [Text::None, Text::None, Text::None, Text::None];
                for (slot, option) in options.iter_mut().zip(&given).take(count) {
                    *slot = argument(lua, option)?;
                }
                let options = options.each_ref().map(|option| &**option);
                let (key, value) = (argument(lua, &key)?, argument(lua, &value)?);
                let mut context = set_context.borrow_mut();
                set_command(&mut context, &key, &value, &options[..count])
            },
        )?;
    let refuse_context = Rc::clone(context);
    let refuse = lua.create_function(move |_, name: String| {
        let what = format!("the command {name}");
        let message = not_modelled(&what);
        refuse_context.borrow_mut().refused.get_or_insert(what);
        Err::<(), _>(mlua::Error::runtime(format!("ERR {message}")))
    })?;
    let wrong = lua.create_function(|_, name: String| {
        Err::<(), _>(mlua::Error::runtime(format!(
            "ERR wrong number of arguments for '{name}' command"
        )))
    })?;
    Ok((get, set, refuse, wrong))
}

/// A command's argument as text: a Lua string's own bytes, or a number's text.
enum Text<'a> {
    None,
    Borrowed(mlua::BorrowedStr<'a>),
    Owned(String),
}

impl core::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::None => "",
            Text::Borrowed(text) => text,
            Text::Owned(text) => text,
        }
    }
}

/// A command's argument as the text Redis makes of it: a string as it is, a number as
/// `%.17g` prints it; anything else is refused, as Redis refuses it.
fn argument<'a>(lua: &Lua, value: &'a Value) -> mlua::Result<Text<'a>> {
    match value {
        Value::String(text) => Ok(text
            .to_str()
            .map_or_else(|_| Text::Owned(text.to_string_lossy()), Text::Borrowed)),
        Value::Integer(n) => Ok(Text::Owned(n.to_string())),
        // Whole numbers print the same under %.17g while they have at most 17 digits (and are
        // not negative, which leaves -0 to the format).
        #[allow(clippy::cast_possible_truncation)]
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 1e17 && !n.is_sign_negative() => {
            Ok(Text::Owned((*n as i64).to_string()))
        }
        Value::Number(n) => lua
            .globals()
            .raw_get::<mlua::Table>("string")?
            .raw_get::<Function>("format")?
            .call(("%.17g", *n))
            .map(Text::Owned),
        _ => Err(mlua::Error::runtime(
            "ERR Lua redis lib command arguments must be strings or integers",
        )),
    }
}

/// Redis truncates Lua's numbers to integers.
#[allow(clippy::cast_possible_truncation)]
fn truncate(n: f64) -> i64 {
    n as i64
}

/// The message of a script's error, without mlua's wrapping.
fn script_error(error: &mlua::Error) -> String {
    match error {
        mlua::Error::CallbackError { cause, .. } => script_error(cause),
        mlua::Error::RuntimeError(message) => message.clone(),
        other => other.to_string(),
    }
}

fn not_modelled(what: &str) -> String {
    format!("fixed-window-sim: {what} is not modelled by the simulated server")
}

/// `SET key value [options]`: whether it wrote.
fn set_command(
    context: &mut Context,
    key: &str,
    value: &str,
    options: &[&str],
) -> mlua::Result<bool> {
    let now_ms = context.now_us / 1_000;
    let (nx, expiry) = match set_options(options) {
        Ok(options) => options,
        Err(SetError::NotModelled(option)) => {
            let what = format!("SET option {option}");
            let message = not_modelled(&what);
            context.refused.get_or_insert(what);
            return Err(mlua::Error::runtime(format!("ERR {message}")));
        }
        Err(SetError::Invalid(message)) => return Err(mlua::Error::runtime(message)),
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

/// Nesting deeper than this is not a reply any script here gives.
const DEEPEST_REPLY: usize = 8;

/// A script's return value as Redis converts it.
fn to_reply(value: &Value, depth: usize) -> Reply {
    match value {
        // Redis truncates Lua's numbers to integers.
        #[allow(clippy::cast_possible_truncation)]
        Value::Number(n) => Reply::Integer(*n as i64),
        Value::Integer(n) => Reply::Integer(*n),
        Value::String(s) => Reply::Bulk(s.to_string_lossy().into()),
        Value::Boolean(true) => Reply::Integer(1),
        Value::Table(table) => {
            if let Ok(Value::String(err)) = table.raw_get::<Value>("err") {
                return Reply::Error(err.to_string_lossy().into());
            }
            if let Ok(Value::String(ok)) = table.raw_get::<Value>("ok") {
                return Reply::Status(ok.to_string_lossy().into());
            }
            if depth >= DEEPEST_REPLY {
                return Reply::Error("ERR reply nested too deeply".into());
            }
            let mut items = Vec::new();
            for i in 1.. {
                match table.raw_get::<Value>(i) {
                    Ok(Value::Nil) | Err(_) => break,
                    Ok(item) => items.push(to_reply(&item, depth + 1)),
                }
            }
            Reply::Array(items)
        }
        _ => Reply::Nil,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        text: &str,
        keyspace: &mut Keyspace,
        now_us: u64,
        keys: &[&str],
        args: &[&str],
    ) -> (Reply, Option<String>) {
        let sha = sha1_hex(text);
        with_engine(|engine| {
            engine.compile(&sha, text).expect("compiles");
            engine.run(
                &sha,
                keyspace,
                now_us,
                0,
                keys.iter().copied(),
                args.iter().copied(),
            )
        })
    }

    #[test]
    fn time_reads_the_servers_clock_in_seconds_and_microseconds() {
        let mut keys = Keyspace::default();
        let (reply, _) = run("return redis.call('TIME')", &mut keys, 12_345_678, &[], &[]);
        assert_eq!(
            reply,
            Reply::Array(vec![Reply::Bulk("12".into()), Reply::Bulk("345678".into())])
        );
    }

    #[test]
    fn set_with_nx_and_px_and_get_follow_redis() {
        let mut keys = Keyspace::default();
        let script = "local a = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 5)
                      local b = redis.call('SET', KEYS[1], 'other', 'NX')
                      return { a.ok, tostring(b), redis.call('GET', KEYS[1]) }";
        let (reply, _) = run(script, &mut keys, 1_000, &["k"], &["v"]);
        assert_eq!(
            reply,
            Reply::Array(vec![
                Reply::Bulk("OK".into()),
                Reply::Bulk("false".into()),
                Reply::Bulk("v".into())
            ])
        );
        // Set at millisecond 1 for 5 ms: alive through millisecond 6.
        let get = "return redis.call('GET', KEYS[1])";
        assert_eq!(
            run(get, &mut keys, 6_999, &["k"], &[]).0,
            Reply::Bulk("v".into())
        );
        assert_eq!(run(get, &mut keys, 7_000, &["k"], &[]).0, Reply::Nil);
    }

    #[test]
    fn set_with_keepttl_keeps_the_keys_expiry_and_refuses_px_beside_it() {
        let mut keys = Keyspace::default();
        let script = "redis.call('SET', KEYS[1], 'a', 'PX', 5)
                      redis.call('SET', KEYS[1], 'b', 'KEEPTTL')
                      redis.call('SET', KEYS[2], 'c', 'KEEPTTL')
                      return 1";
        run(script, &mut keys, 1_000, &["k", "fresh"], &[]);
        // Set at millisecond 1 for 5 ms, kept by the second write; a key that did not exist
        // gets no expiry from KEEPTTL.
        assert_eq!(
            keys.live(0),
            [("fresh".into(), None), ("k".into(), Some(6))]
        );
        let (reply, what) = run(
            "return redis.call('SET', KEYS[1], 'v', 'KEEPTTL', 'PX', 5)",
            &mut keys,
            0,
            &["k"],
            &[],
        );
        assert!(
            matches!(&reply, Reply::Error(m) if m.contains("syntax error")),
            "{reply:?}"
        );
        assert_eq!(what, None);
    }

    #[test]
    fn number_arguments_become_the_text_redis_prints() {
        let mut keys = Keyspace::default();
        let script = "redis.call('SET', KEYS[1], 0.1)
                      redis.call('SET', KEYS[2], 12345678)
                      redis.call('SET', KEYS[3], -0.0)
                      return { redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]),
                               redis.call('GET', KEYS[3]) }";
        let (reply, _) = run(script, &mut keys, 0, &["a", "b", "c"], &[]);
        assert_eq!(
            reply,
            Reply::Array(vec![
                Reply::Bulk("0.10000000000000001".into()),
                Reply::Bulk("12345678".into()),
                Reply::Bulk("-0".into()),
            ])
        );
    }

    #[test]
    fn numbers_are_truncated_and_tables_become_arrays_up_to_the_first_nil() {
        let mut keys = Keyspace::default();
        let (reply, _) = run(
            "return { 1, 2.9, -3.5, 'x', nil, 7 }",
            &mut keys,
            0,
            &[],
            &[],
        );
        assert_eq!(
            reply,
            Reply::Array(vec![
                Reply::Integer(1),
                Reply::Integer(2),
                Reply::Integer(-3),
                Reply::Bulk("x".into())
            ])
        );
        assert_eq!(
            run("return redis.error_reply('boom')", &mut keys, 0, &[], &[]).0,
            Reply::Error("boom".into())
        );
    }

    #[test]
    fn commands_options_and_functions_not_modelled_are_refused_by_name() {
        let mut keys = Keyspace::default();
        for (script, refused) in [
            ("return redis.call('INCR', 'k')", "the command INCR"),
            (
                "return redis.call('set', 'k', 'v', 'EX', 1)",
                "SET option EX",
            ),
            ("return redis.pcall('GET', 'k')", "redis.pcall"),
            ("return redis.sha1hex('x')", "redis.sha1hex"),
        ] {
            let (reply, what) = run(script, &mut keys, 0, &[], &[]);
            assert_eq!(what.as_deref(), Some(refused), "{script}");
            assert!(
                matches!(&reply, Reply::Error(message) if message.contains("not modelled")),
                "{script}: {reply:?}"
            );
        }
        assert_eq!(keys.live(0), []);
    }

    #[test]
    fn globals_are_guarded_and_runaway_scripts_stopped() {
        let mut keys = Keyspace::default();
        let (reply, _) = run("x = 1 return 1", &mut keys, 0, &[], &[]);
        assert!(
            matches!(&reply, Reply::Error(m) if m.contains("create global variable")),
            "{reply:?}"
        );
        let (reply, _) = run("return y", &mut keys, 0, &[], &[]);
        assert!(
            matches!(&reply, Reply::Error(m) if m.contains("nonexistent global")),
            "{reply:?}"
        );
        let (reply, _) = run("while true do end", &mut keys, 0, &[], &[]);
        assert!(
            matches!(&reply, Reply::Error(m) if m.contains("BUSY")),
            "{reply:?}"
        );
    }

    #[test]
    fn keys_and_argv_hold_only_this_calls_values() {
        let mut keys = Keyspace::default();
        let script = "return { #KEYS, #ARGV }";
        assert_eq!(
            run(
                script,
                &mut keys,
                0,
                &["a", "b", "c"],
                &["1", "2", "3", "4"]
            )
            .0,
            Reply::Array(vec![Reply::Integer(3), Reply::Integer(4)])
        );
        assert_eq!(
            run(script, &mut keys, 0, &["a"], &["1"]).0,
            Reply::Array(vec![Reply::Integer(1), Reply::Integer(1)])
        );
    }
}
