//! One script call over redis-rs: the call's keys and arguments to `EVALSHA`, bounded by the
//! timeout, and what a redis-rs error stands for.

use core::time::Duration;
use std::sync::Arc;

use redis::Script;

use crate::protocol::ScriptCall;
use crate::transport::Transport;
use crate::unavailable::{Unavailable, UnavailableKind};

/// Runs `call` as one `EVALSHA` of `script` (loading it first if the server answers
/// `NOSCRIPT`), the whole of it bounded by `timeout`.
pub(crate) async fn invoke(
    mut transport: Transport,
    script: Arc<Script>,
    call: &ScriptCall,
    timeout: Duration,
) -> Result<Vec<i64>, Unavailable> {
    let mut invocation = script.prepare_invoke();
    for key in call.keys() {
        invocation.key(key);
    }
    for arg in call.args() {
        invocation.arg(arg);
    }
    // The whole call, a reload after NOSCRIPT and a wait for a reconnection included, is
    // bounded: a caller never waits on the server longer than the timeout.
    match tokio::time::timeout(timeout, invocation.invoke_async::<Vec<i64>>(&mut transport)).await {
        Ok(reply) => reply.map_err(|err| Unavailable::from(&err)),
        Err(_) => Err(timed_out(timeout)),
    }
}

/// No reply within `timeout`.
pub(crate) fn timed_out(timeout: Duration) -> Unavailable {
    Unavailable::new(
        UnavailableKind::Timeout,
        format!("no reply within {timeout:?}"),
    )
}
