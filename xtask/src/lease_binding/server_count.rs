//! The server's own count of each window, for `cargo xtask lease-binding` to check the permits
//! the processes report against: the server logs every write (its append-only file, turned on
//! for the run), and the last value it wrote to the key's counter for a window is that
//! window's count. Reading the counter live would miss the last writes of a window whenever
//! the next window's first call replaces it first; the log misses none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cargo::Failure;

/// Turns the server's append-only file on (never synced to disk: it is read back from the
/// page cache) and waits, at most `wait`, for the rewrite that starts it to end, so that
/// every later write is logged. The directory the log is written to.
///
/// # Errors
///
/// If the server refuses the settings or the rewrite does not end in time.
pub fn start(admin: &mut redis::Connection, wait: Duration) -> Result<PathBuf, Failure> {
    for (name, value) in [("appendfsync", "no"), ("appendonly", "yes")] {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .exec(admin)
            .map_err(|err| format!("CONFIG SET {name} {value}: {err}"))?;
    }
    let begun = Instant::now();
    loop {
        let info: String = redis::cmd("INFO")
            .arg("persistence")
            .query(admin)
            .map_err(|err| format!("INFO persistence: {err}"))?;
        let field = |name: &str| {
            info.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        if field("aof_enabled") == Some("1") && field("aof_rewrite_in_progress") == Some("0") {
            break;
        }
        if begun.elapsed() > wait {
            return Err("the server's append-only file did not start in time".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut config = |name: &str| -> Result<String, Failure> {
        let pair: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(name)
            .query(admin)
            .map_err(|err| format!("CONFIG GET {name}: {err}"))?;
        pair.into_iter()
            .nth(1)
            .ok_or_else(|| format!("CONFIG GET {name}: no value"))
    };
    let dir = config("dir")?;
    Ok(Path::new(&dir).join(config("appenddirname")?))
}

/// The last count the log shows written to `counter` for each window start (µs), from every
/// incremental file of the log in `dir`.
///
/// # Errors
///
/// If the directory or a file cannot be read, or a file is not a log of commands.
pub fn read(dir: &Path, counter: &str) -> Result<BTreeMap<u64, u64>, Failure> {
    let mut files: Vec<(u64, PathBuf)> = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|err| format!("reading {}: {err}", dir.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|err| format!("reading {}: {err}", dir.display()))?
            .path();
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("");
        // appendonly.aof.<sequence>.incr.aof, in sequence order.
        if let Some(sequence) = name
            .strip_suffix(".incr.aof")
            .and_then(|rest| rest.rsplit('.').next())
            .and_then(|sequence| sequence.parse().ok())
        {
            files.push((sequence, path));
        }
    }
    files.sort();
    let mut counts = BTreeMap::new();
    for (_, path) in files {
        let bytes =
            std::fs::read(&path).map_err(|err| format!("reading {}: {err}", path.display()))?;
        for command in commands(&bytes).map_err(|err| format!("{}: {err}", path.display()))? {
            if let [name, key, value, ..] = &command[..]
                && name.eq_ignore_ascii_case(b"SET")
                && key == counter.as_bytes()
                && let Some((start, used)) = counter_value(value)
            {
                counts.insert(start, used);
            }
        }
    }
    Ok(counts)
}

/// The window start and count of a counter's text, `start:used` in hexadecimal, whatever
/// follows the count (a key's own limit, `=…`; a cluster's settings, `:…`).
fn counter_value(value: &[u8]) -> Option<(u64, u64)> {
    let text = std::str::from_utf8(value).ok()?;
    let (start, rest) = text.split_once(':')?;
    let used = rest.split([':', '=']).next()?;
    Some((
        u64::from_str_radix(start, 16).ok()?,
        u64::from_str_radix(used, 16).ok()?,
    ))
}

/// The commands of a log in Redis's protocol: arrays of bulk strings, one after another.
fn commands(mut bytes: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, String> {
    let mut commands = Vec::new();
    while !bytes.is_empty() {
        let (count, rest) = header(bytes, b'*')?;
        bytes = rest;
        let mut command = Vec::with_capacity(count.min(16));
        for _ in 0..count {
            let (len, rest) = header(bytes, b'$')?;
            let value = rest
                .get(..len)
                .filter(|_| rest.get(len..len + 2) == Some(b"\r\n"))
                .ok_or("a bulk string cut short")?;
            command.push(value.to_vec());
            bytes = &rest[len + 2..];
        }
        commands.push(command);
    }
    Ok(commands)
}

/// A line `<kind><number>\r\n` at the start of `bytes`: the number and what follows.
fn header(bytes: &[u8], kind: u8) -> Result<(usize, &[u8]), String> {
    if bytes.first() != Some(&kind) {
        return Err(format!("expected '{}'", char::from(kind)));
    }
    let end = bytes
        .windows(2)
        .position(|pair| pair == b"\r\n")
        .ok_or("a line without its end")?;
    let number = std::str::from_utf8(&bytes[1..end])
        .ok()
        .and_then(|number| number.parse().ok())
        .ok_or("not a number")?;
    Ok((number, &bytes[end + 2..]))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn command(args: &[&str]) -> String {
        let mut out = format!("*{}\r\n", args.len());
        for arg in args {
            let _ = write!(out, "${}\r\n{arg}\r\n", arg.len());
        }
        out
    }

    #[test]
    fn the_last_write_of_each_window_is_its_count() -> Result<(), Failure> {
        let dir = std::env::temp_dir().join(format!("lease-binding-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|err| err.to_string())?;
        let first = [
            command(&["SELECT", "0"]),
            command(&["MULTI"]),
            command(&["SET", "c", "3b9aca00:40", "KEEPTTL"]),
            command(&["EXEC"]),
            command(&["SET", "other", "3b9aca00:7d0"]),
            command(&["SET", "c", "3b9aca00:7d0", "KEEPTTL"]),
        ]
        .concat();
        // A later file; a key's own limit after the count.
        let second = [
            command(&["SET", "c", "3b9aca00:7cf", "KEEPTTL"]),
            command(&["set", "c", "3b9aca00:7d0=7d0", "KEEPTTL"]),
            command(&["SET", "c", "3b9aca01:5", "PX", "1000"]),
            command(&["DEL", "c"]),
        ]
        .concat();
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text).map_err(|err| err.to_string())
        };
        write("appendonly.aof.2.incr.aof", &second)?;
        write("appendonly.aof.1.incr.aof", &first)?;
        write("appendonly.aof.1.base.rdb", "REDIS0011")?;
        let counts = read(&dir, "c")?;
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            counts.into_iter().collect::<Vec<_>>(),
            [(1_000_000_000, 2_000), (1_000_000_001, 5)]
        );
        Ok(())
    }

    #[test]
    fn a_log_cut_short_is_an_error() {
        let whole = command(&["SET", "c", "0:1"]);
        assert_eq!(commands(whole.as_bytes()).map(|c| c.len()), Ok(1));
        assert!(commands(&whole.as_bytes()[..whole.len() - 3]).is_err());
        assert!(commands(b"+OK\r\n").is_err());
    }
}
