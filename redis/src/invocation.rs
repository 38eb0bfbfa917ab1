//! One script call over redis-rs: the call's keys and arguments to `EVALSHA`, bounded by the
//! timeout, followed by `WAIT` when the configuration asks for replicas, and what a redis-rs
//! error stands for.

use core::time::Duration;
use std::sync::Arc;

use redis::{ErrorKind, FromRedisValue, RedisError, Script, ServerErrorKind, Value};

use crate::config::Config;
use crate::protocol::{ScriptCall, replicated, wait_millis};
use crate::transport::Transport;
use crate::unavailable::{Unavailable, UnavailableKind};

/// What every script call of a limiter is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Terms {
    /// The whole call's bound: a reload after `NOSCRIPT`, a reconnection and the replicas'
    /// acknowledgement included.
    pub(crate) timeout: Duration,
    /// The replicas that must acknowledge the call's writes before its reply counts.
    pub(crate) replicas: u32,
}

impl Terms {
    /// The terms `config` sets.
    pub(crate) fn of(config: &Config) -> Terms {
        Terms {
            timeout: config.timeout(),
            replicas: config.wait_for_replicas(),
        }
    }

    /// How long `WAIT` may wait, in milliseconds: half the timeout, so that writes the replicas
    /// did not acknowledge are told as such, within the call's bound, rather than as a timeout;
    /// at least 1 (0 would wait for ever).
    fn wait_millis(self) -> u64 {
        wait_millis(self.timeout)
    }
}

/// Runs `call` as one `EVALSHA` of `script` (loading it first if the server answers
/// `NOSCRIPT`), followed by `WAIT` if `terms` ask for replicas, the whole of it bounded by the
/// timeout.
pub(crate) async fn invoke<T: FromRedisValue>(
    mut transport: Transport,
    script: Arc<Script>,
    call: &ScriptCall,
    terms: Terms,
) -> Result<T, Unavailable> {
    let run = async {
        if terms.replicas > 0 {
            return acknowledged(&mut transport, &script, call, terms).await;
        }
        let mut invocation = script.prepare_invoke();
        for key in call.keys() {
            invocation.key(key);
        }
        for arg in call.args() {
            invocation.arg(arg);
        }
        invocation
            .invoke_async::<T>(&mut transport)
            .await
            .map_err(|err| Unavailable::from(&err))
    };
    // The whole call, a reload after NOSCRIPT and a wait for a reconnection included, is
    // bounded: a caller never waits on the server longer than the timeout.
    match tokio::time::timeout(terms.timeout, run).await {
        Ok(reply) => reply,
        Err(_) => Err(timed_out(terms.timeout)),
    }
}

/// `EVALSHA` and `WAIT` in one pipeline, so that both go to the node that runs the script
/// (redis-rs's cluster client routes a pipeline by its first key; `WAIT` on its own would go
/// to every primary), and the reply only if enough replicas acknowledged what it wrote.
async fn acknowledged<T: FromRedisValue>(
    transport: &mut Transport,
    script: &Script,
    call: &ScriptCall,
    terms: Terms,
) -> Result<T, Unavailable> {
    let keys: Vec<&str> = call.keys().collect();
    let mut pipeline = redis::pipe();
    pipeline
        .cmd("EVALSHA")
        .arg(script.get_hash())
        .arg(keys.len())
        .arg(&keys);
    for arg in call.args() {
        pipeline.arg(arg);
    }
    pipeline
        .cmd("WAIT")
        .arg(terms.replicas)
        .arg(terms.wait_millis());
    let (reply, acknowledged): (T, u32) = match pipeline.query_async(transport).await {
        Err(err) if no_script(&err) => {
            script
                .load_async(transport)
                .await
                .map_err(|err| Unavailable::from(&err))?;
            pipeline
                .query_async(transport)
                .await
                .map_err(|err| Unavailable::from(&err))?
        }
        answered => answered.map_err(|err| Unavailable::from(&err))?,
    };
    replicated(acknowledged, terms.replicas, terms.wait_millis())?;
    Ok(reply)
}

/// A reply of four numbers followed by the live limits' text (a `limits` or `restore` call),
/// as [`Protocol::limits_read`](crate::Protocol::limits_read) takes it: `None` where the
/// script answered `false` (no live limits stored), or a reply without the text (a
/// conflict).
pub(crate) fn live_reply(reply: Vec<Value>) -> Result<(Vec<i64>, Option<String>), Unavailable> {
    let malformed = || {
        Unavailable::new(
            UnavailableKind::Reply,
            "the read of the live limits got an answer the script never gives",
        )
    };
    let mut numbers = Vec::with_capacity(4);
    // `None` until the text's place is reached; then the text, if any.
    let mut text: Option<Option<String>> = None;
    for value in reply {
        match value {
            Value::Int(number) if text.is_none() => numbers.push(number),
            Value::BulkString(bytes) if text.is_none() => {
                text = Some(Some(String::from_utf8(bytes).map_err(|_| malformed())?));
            }
            Value::Nil if text.is_none() => text = Some(None),
            _ => return Err(malformed()),
        }
    }
    Ok((numbers, text.flatten()))
}

fn no_script(err: &RedisError) -> bool {
    err.kind() == ErrorKind::Server(ServerErrorKind::NoScript)
}

/// No reply within `timeout`.
pub(crate) fn timed_out(timeout: Duration) -> Unavailable {
    Unavailable::new(
        UnavailableKind::Timeout,
        format!("no reply within {timeout:?}"),
    )
}
