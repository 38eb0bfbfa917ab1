//! `SET` on the simulated keyspace: the options modelled (`NX`, `PX`, `KEEPTTL`), and Redis's
//! refusals of the others and of their misuse.

use super::{Context, not_modelled};

/// `SET key value [options]`: whether it wrote.
pub(super) fn set_command(
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
