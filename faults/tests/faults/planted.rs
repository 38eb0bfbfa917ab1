//! Planted bugs of a shared limiter that a real server can show, each a variant of the script's
//! text or of the client's step, kept here in the tests (never in the library): the fault tests
//! must catch every one.

use core::time::Duration;

use fixed_window::{Clock, SystemClock};
use fixed_window_redis::{
    Config, EXPIRY_MARGIN_MILLIS, Protocol, SCRIPT, Unavailable, UnavailableKind,
};
use fixed_window_sim::shared::SharedPlantedBug;
use redis::Script;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::clock::server_now;
use crate::subject::Observed;

/// One deliberate bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlantedBug {
    /// The counter is written without expiry, and the expiry sent as a second command after
    /// the reply (the classic INCR, then EXPIRE): a caller that dies between the two leaves a
    /// counter that never expires.
    TwoCommands,
    /// A lost reply is retried with a second increment.
    RetryLostReply,
    /// The script reads the time the client sends (its own clock, skewed per replica) instead of
    /// the server's `TIME`.
    ClientClock,
    /// Each process stores and aligns to its own origin instead of adopting the shared one.
    OwnOrigin,
    /// The counter carries no window: it expires `period` after the window's first hit, so a
    /// window starts at its first hit and permits carry over the grid's boundaries.
    FirstHitExpiry,
    /// The simulator's [`SharedPlantedBug::BoundaryOffByOne`]: the instant a window starts still
    /// counts against the previous one.
    BoundaryOffByOne,
    /// The simulator's [`SharedPlantedBug::MemoryPastEnd`]: a full window remembered half a period
    /// past its end, rejecting locally meanwhile.
    MemoryPastEnd,
    /// A counter of a later window (the server's clock stepped back) ignored: the reading's own
    /// window starts afresh instead of counting against it.
    LaterWindowIgnored,
}

impl PlantedBug {
    /// Every planted bug.
    pub const ALL: [PlantedBug; 8] = [
        PlantedBug::TwoCommands,
        PlantedBug::RetryLostReply,
        PlantedBug::ClientClock,
        PlantedBug::OwnOrigin,
        PlantedBug::FirstHitExpiry,
        PlantedBug::BoundaryOffByOne,
        PlantedBug::MemoryPastEnd,
        PlantedBug::LaterWindowIgnored,
    ];

    /// The script this bug runs: the production text with one change, or the production text.
    pub fn script(self) -> String {
        match self {
            PlantedBug::TwoCommands => replaced(
                SCRIPT,
                "redis.call('SET', key, string.format('%x:%x', start, used) .. own_mark .. tail, 'PX', ttl)",
                "redis.call('SET', key, string.format('%x:%x', start, used) .. own_mark .. tail)",
            ),
            PlantedBug::ClientClock => replaced(
                SCRIPT,
                "local time = redis.call('TIME')\n  now = time[1] * 1000000 + time[2]",
                // The client's time comes where a fixed origin would, which it is not.
                "now = tonumber(ARGV[6])\n  ARGV[6] = nil",
            ),
            PlantedBug::FirstHitExpiry => {
                replaced(SCRIPT, COUNTING, &format!("do{FIRST_HIT}end\n{COUNTING}"))
            }
            PlantedBug::BoundaryOffByOne => SharedPlantedBug::BoundaryOffByOne.script().to_owned(),
            PlantedBug::MemoryPastEnd => SharedPlantedBug::MemoryPastEnd.script().to_owned(),
            PlantedBug::LaterWindowIgnored => replaced(
                SCRIPT,
                "if now < start + period then",
                "if start <= now and now < start + period then",
            ),
            PlantedBug::RetryLostReply | PlantedBug::OwnOrigin => SCRIPT.to_owned(),
        }
    }
}

/// Where the script starts counting, after the configuration and the origin.
const COUNTING: &str = "local reply, i = { 0, 0, 0, 0 }, first\n";

/// The naive window: a bare count that expires `period` after its first hit (of the first
/// attempt: the planted client sends one per call).
const FIRST_HIT: &str = "
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if used >= limit then
  return { 0, math.max(redis.call('PTTL', KEYS[2]), 1) * 1000, now, 0 }
end
used = used + 1
if used == 1 then
  redis.call('SET', KEYS[2], used, 'PX', math.ceil(period / 1000))
else
  redis.call('SET', KEYS[2], used, 'KEEPTTL')
end
return { 1, limit - used, now, 0 }
";

fn replaced(script: &str, from: &str, to: &str) -> String {
    assert!(script.contains(from), "the script no longer holds {from:?}");
    script.replace(from, to)
}

/// A client with a planted bug: the production [`Protocol`] reads its replies, but the calls it
/// makes are its own.
pub struct PlantedClient {
    bug: PlantedBug,
    protocol: Protocol,
    manager: ConnectionManager,
    script: Script,
    /// This replica's configuration key (its own under [`PlantedBug::OwnOrigin`]).
    config_key: String,
    /// This replica's clock's offset from the server's, in microseconds (under
    /// [`PlantedBug::ClientClock`]).
    skew: u64,
    origin: u64,
    /// Under [`PlantedBug::MemoryPastEnd`]: keys remembered full, until these local instants.
    remembered: Mutex<HashMap<String, fixed_window::Instant>>,
}

impl PlantedClient {
    /// Connects replica `replica` with `bug` through `client` and registers its configuration.
    pub async fn connect(
        bug: PlantedBug,
        config: Config,
        client: redis::Client,
        replica: usize,
    ) -> Result<PlantedClient, Box<dyn std::error::Error + Send + Sync>> {
        // As the production transport: every call is bounded by the configured timeout, so
        // redis-rs's own response timeout (500 ms by default) is off.
        let manager_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(config.timeout()))
            .set_response_timeout(None)
            .set_number_of_retries(0);
        let manager = ConnectionManager::new_with_config(client, manager_config).await?;
        let period = u64::try_from(config.period().as_micros())?;
        let config_key = match bug {
            PlantedBug::OwnOrigin => format!("{}:origin-of-{replica}", config.config_key()),
            _ => config.config_key().to_owned(),
        };
        let mut planted = PlantedClient {
            bug,
            protocol: Protocol::new(config.with_local_memory(0)),
            manager,
            script: Script::new(&bug.script()),
            config_key,
            skew: offset(replica, period),
            origin: 0,
            remembered: Mutex::new(HashMap::new()),
        };
        let reply = planted.run(None).await;
        planted.origin = planted
            .protocol
            .registered(reply.as_deref().map_err(Clone::clone))?;
        Ok(planted)
    }

    /// The origin this replica registered or adopted.
    pub fn origin(&self) -> u64 {
        self.origin
    }

    /// One attempt on `key`; `crash` makes the caller die right after the script's reply.
    pub async fn attempt(&self, key: &str, crash: bool) -> Observed {
        let config = self.protocol.config();
        let counter = config.counter_key(key);
        let sent = SystemClock.now();
        if self.bug == PlantedBug::MemoryPastEnd {
            let remembered = self.remembered();
            if remembered.get(key).is_some_and(|&until| sent < until) {
                return Observed::Rejected {
                    retry_after: micros(remembered[key].saturating_duration_since(sent)),
                };
            }
        }
        let mut reply = self.run(Some(&counter)).await;
        if self.bug == PlantedBug::RetryLostReply
            && reply.as_ref().is_err_and(Unavailable::may_have_counted)
        {
            reply = self.run(Some(&counter)).await;
        }
        let received = SystemClock.now();
        if crash {
            return Observed::Crashed;
        }
        if let (PlantedBug::MemoryPastEnd, Ok(&[0, retry_after, _, _])) =
            (self.bug, reply.as_deref())
        {
            let late = u64::try_from(retry_after).unwrap_or(0) + micros(config.period()) / 2;
            self.remembered().insert(
                key.to_owned(),
                received.saturating_add(Duration::from_micros(late)),
            );
        }
        if let (PlantedBug::TwoCommands, Ok(&[1, _, now, window_start])) =
            (self.bug, reply.as_deref())
        {
            let period = i64::try_from(config.period().as_micros()).unwrap_or(i64::MAX);
            let ttl = (window_start + period - now + 999) / 1000
                + i64::try_from(EXPIRY_MARGIN_MILLIS).unwrap_or(0);
            let mut manager = self.manager.clone();
            let expire = redis::cmd("PEXPIRE").arg(&counter).arg(ttl).to_owned();
            let _ = tokio::time::timeout(config.timeout(), expire.query_async::<i64>(&mut manager))
                .await;
        }
        let decision = self.protocol.finish(
            key,
            sent,
            received,
            sent,
            reply.as_deref().map_err(Clone::clone),
        );
        Observed::from_decision(&decision)
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, HashMap<String, fixed_window::Instant>> {
        self.remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the bug's script on `counter`, or registers with `None`.
    async fn run(&self, counter: Option<&str>) -> Result<Vec<i64>, Unavailable> {
        let config = self.protocol.config();
        let mode = if counter.is_some() {
            "acquire"
        } else {
            "register"
        };
        let mut invocation = self.script.prepare_invoke();
        invocation.key(&self.config_key);
        if let Some(counter) = counter {
            invocation.key(counter);
        }
        invocation
            .arg(config.period().as_micros().to_string())
            .arg(config.limit())
            .arg(EXPIRY_MARGIN_MILLIS)
            .arg(mode)
            .arg(usize::from(counter.is_some()));
        if let Some(time_key) = config.time_key() {
            invocation.key(time_key);
        }
        if self.bug == PlantedBug::ClientClock {
            invocation.arg(server_now() + self.skew);
        }
        let mut manager = self.manager.clone();
        match tokio::time::timeout(
            config.timeout(),
            invocation.invoke_async::<Vec<i64>>(&mut manager),
        )
        .await
        {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(err)) => Err(Unavailable::from(&err)),
            Err(_) => Err(Unavailable::new(
                UnavailableKind::Timeout,
                "no reply in time",
            )),
        }
    }
}

/// How far apart replicas start, or run their clocks: 2/7 of a period per replica, so that no
/// two of up to seven replicas fall on one grid.
pub fn offset(replica: usize, period: u64) -> u64 {
    replica as u64 * period * 2 / 7
}

/// Whole microseconds of `d`.
pub fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
