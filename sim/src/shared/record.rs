//! What a shared-limiter run writes down: the trace the [oracle](crate::shared::check) reads
//! and `--trace` writes as JSON Lines.
//!
//! Every record carries `t`, the virtual time (nanoseconds) it happened at. Local instants
//! (`local`, `until`, `deadline`) are readings of the process's own clock in nanoseconds;
//! server times (`server_us`) are the server's clock in microseconds, the timeline of the
//! windows.

use serde::Serialize;

use crate::shared::faults::Refusal;

/// What a request asks of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// The process registers (stores or checks the configuration, fixing the origin).
    Register,
    /// An attempt on a caller's key.
    Acquire,
    /// `SCRIPT LOAD` after `NOSCRIPT`.
    Load,
    /// A planted client's second command (sets a counter's expiry).
    Expire,
    /// A process changes the shared limit (`set_limit`).
    Limit,
    /// A process reads the configuration again in the background, as a registration does
    /// ([`LIMIT_REFRESH`](fixed_window_redis::LIMIT_REFRESH)), adopting a newer limit.
    Refresh,
    /// A caller's peek (`peek`): the script's read-only mode, which counts and writes nothing.
    Peek,
    /// A process hands back the unspent rest of its share of a key (`hand_back`).
    HandBack,
}

/// A script reply as the trace keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ReplyDigest {
    /// An array of four integers, as the script returns.
    Four {
        /// The elements.
        values: [i64; 4],
    },
    /// An array of two integers, as the script returns to a hand-back: `{ 5, taken off }`.
    Two {
        /// The elements.
        values: [i64; 2],
    },
    /// An error reply; `noscript` for `NOSCRIPT`.
    Error {
        /// Whether it was `NOSCRIPT`.
        noscript: bool,
    },
    /// Anything else (a loaded script's SHA, an integer, …).
    Other,
}

/// Why a request or its reply never came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// The request was lost on its way: the server never saw it.
    Request,
    /// The server ran it; its reply was lost.
    Reply,
    /// The connection was reset while it was in flight.
    Reset,
    /// The server was down (restarting): the connection was refused.
    Down,
    /// The client process crashed: any reply has nobody to go to.
    Crash,
    /// The server refused this client (no such user, or no permission for the command), or
    /// the client answered the refusal it keeps for its connection without sending: nothing
    /// ran.
    Denied,
}

/// What the limiter decided in one attempt, as [`Decision`](fixed_window_redis::Decision)
/// says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "decision")]
pub enum DecisionDigest {
    /// A counted permit.
    Permitted {
        /// `remaining`.
        remaining: u32,
    },
    /// Sleep until this local instant, then attempt again.
    Wait {
        /// The local instant.
        until: u128,
    },
    /// Rejected.
    Rejected {
        /// `retry_after`, in nanoseconds.
        retry_after: u128,
        /// Decided from the local memory of full windows.
        local: bool,
    },
    /// The server could not decide; the fail-open policy granted a permit.
    FailedOpen {
        /// Whether the attempt may have counted.
        may_have_counted: bool,
    },
    /// The server could not decide; fail closed.
    Unavailable {
        /// Whether the attempt may have counted.
        may_have_counted: bool,
    },
    /// The server holds another configuration.
    Conflict,
    /// The limit was changed through the server since the attempt's process learnt it: the
    /// process adopts it and makes the attempt again under it (at most three times).
    LimitChanged {
        /// The limit now in effect.
        limit: u32,
    },
    /// More permits than the limit in effect lets a window hold: refused, nothing sent.
    TooMany {
        /// The limit in effect.
        limit: u32,
    },
}

/// How a call ended, as its result says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum SharedOutcome {
    /// A permit: counted (`remaining`) or granted by the fail-open policy.
    Permitted {
        /// The permit's `remaining`; `None` for a fail-open permit.
        remaining: Option<u32>,
    },
    /// `Limited(Rejected)`.
    Rejected {
        /// Its `retry_after`, in nanoseconds.
        retry_after: u128,
        /// Whether its name, limit, period and `max_wait` are the limiter's.
        fields_match: bool,
    },
    /// `Unavailable`.
    Unavailable,
    /// `Conflict`: the server holds another configuration.
    Conflict,
    /// `Limited(TooMany)`: more permits asked at once than the limit.
    TooMany,
    /// A drain that ended with the window full (its `Ok`).
    Drained,
    /// `InvalidKey` or an error kind the oracle does not know.
    OtherError,
    /// The caller's process crashed during the call.
    Crashed,
    /// The run ended (its event budget ran out) before the call did.
    Unfinished,
}

/// How a process's `set_limit` ended, as its result says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum LimitOutcome {
    /// `Ok`: the limit the process has in force afterwards.
    Set {
        /// Its limit afterwards.
        limit: u32,
    },
    /// `Config`: a limit of 0, refused before anything was sent.
    Refused,
    /// `Conflict`: the server holds another period.
    Conflict,
    /// `Unavailable`: no answer; the limit may or may not have changed.
    Unavailable,
    /// The process crashed before it ended (or before it had a limiter to call).
    Crashed,
}

/// The event listeners got with a call's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum EventDigest {
    /// None.
    None,
    /// `Permitted { remaining }`.
    Permitted {
        /// `remaining`.
        remaining: u32,
    },
    /// `Rejected { retry_after }`.
    Rejected {
        /// In nanoseconds.
        retry_after: u128,
    },
    /// `Unavailable { failed_open }`.
    Unavailable {
        /// Whether a permit was granted anyway.
        failed_open: bool,
    },
}

/// A fault the run injected.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "fault")]
pub enum FaultRecord {
    /// A process's connection was reset.
    Reset {
        /// The process.
        process: u16,
    },
    /// The server stopped executing requests until `until` (virtual time).
    Pause {
        /// When it resumes.
        until: u64,
    },
    /// The server restarted without persistence and is down until `until`.
    Restart {
        /// When it accepts connections again.
        until: u64,
    },
    /// A replica lacking the latest writes took over; the writes it lacks, newest first:
    /// the request that made each and the key written.
    Failover {
        /// The lag drawn (the writes undone may be fewer: the log holds the latest 16).
        lag: u8,
        /// Whether the replica had the scripts.
        keeps_scripts: bool,
        /// The writes undone.
        undone: Vec<(u32, Box<str>)>,
    },
    /// `SCRIPT FLUSH`.
    Flush,
    /// The server's clock stepped by `delta_ns`.
    ClockStep {
        /// Forward if positive.
        delta_ns: i64,
    },
    /// A client process crashed; it comes back at `until` with nothing remembered.
    Crash {
        /// The process.
        process: u16,
        /// When it restarts.
        until: u64,
    },
    /// A cluster's slots `first..=last` began to migrate from primary `from` to primary `to`
    /// (marked `MIGRATING` on the one, `IMPORTING` on the other).
    Migrating {
        /// The first slot.
        first: u16,
        /// The last slot.
        last: u16,
        /// The primary that owns them.
        from: u8,
        /// The primary that takes them.
        to: u8,
    },
    /// Keys of the slots migrating moved to primary `to` (`MIGRATE`, each key at once).
    KeysMigrated {
        /// The primary that holds them now.
        to: u8,
        /// The keys.
        keys: Vec<Box<str>>,
    },
    /// A cluster's slots `first..=last` moved to primary `to`: the keys listed (those left)
    /// moved, then the slots' owner changed.
    Migrated {
        /// The first slot.
        first: u16,
        /// The last slot.
        last: u16,
        /// The primary that owns them now.
        to: u8,
        /// The keys that moved with them.
        keys: Vec<Box<str>>,
    },
    /// A cluster's primary `node` failed: refused until `until`, when its replica, lacking
    /// the writes undone (newest first, as for [`FaultRecord::Failover`]), took over the
    /// slots listed.
    ShardFailover {
        /// The primary.
        node: u8,
        /// The lag drawn.
        lag: u8,
        /// Whether the replica had the scripts.
        keeps_scripts: bool,
        /// When the replica took over (virtual time).
        until: u64,
        /// The slot ranges it owned.
        slots: Vec<(u16, u16)>,
        /// The writes undone.
        undone: Vec<(u32, Box<str>)>,
    },
    /// A cluster's primary `node` stalled: it reads nothing until `until`, then runs what
    /// reached it meanwhile.
    ShardStalled {
        /// The primary.
        node: u8,
        /// When it continues (virtual time).
        until: u64,
    },
    /// The server's (every primary's) access control refuses the limiter's user until
    /// `until` (virtual time); a user deleted has its connections closed. A restart that comes
    /// back without the user is a [`FaultRecord::Restart`] and this.
    AccessRefused {
        /// What it refuses.
        refusal: Refusal,
        /// When it takes the user again.
        until: u64,
    },
}

impl FaultRecord {
    /// The fault's name in summaries.
    pub fn name(&self) -> &'static str {
        match self {
            FaultRecord::Reset { .. } => "connection_reset",
            FaultRecord::Pause { .. } => "server_paused",
            FaultRecord::Restart { .. } => "server_restarted",
            FaultRecord::Failover { .. } => "failover",
            FaultRecord::Flush => "script_flush",
            FaultRecord::ClockStep { delta_ns } if *delta_ns >= 0 => "clock_step_forward",
            FaultRecord::ClockStep { .. } => "clock_step_back",
            FaultRecord::Crash { .. } => "client_crash",
            FaultRecord::Migrating { .. } => "slots_migrating",
            FaultRecord::KeysMigrated { .. } => "keys_migrated",
            FaultRecord::Migrated { .. } => "slots_migrated",
            FaultRecord::ShardFailover { .. } => "shard_failover",
            FaultRecord::ShardStalled { .. } => "shard_stalled",
            FaultRecord::AccessRefused {
                refusal: Refusal::NoUser,
                ..
            } => "user_refused",
            FaultRecord::AccessRefused {
                refusal: Refusal::PermissionRevoked,
                ..
            } => "permission_revoked",
            FaultRecord::AccessRefused {
                refusal: Refusal::PasswordRotated,
                ..
            } => "password_rotated",
            FaultRecord::AccessRefused {
                refusal: Refusal::AuthRequired,
                ..
            } => "auth_required",
            FaultRecord::AccessRefused {
                refusal: Refusal::HandshakeRefused,
                ..
            } => "handshake_refused",
        }
    }
}

/// The answer of a cluster's primary that a client follows ([`SharedRecord::Redirected`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedirectKind {
    /// `MOVED`: the slot lives elsewhere.
    Moved,
    /// `ASK`: the slot is migrating and the call's keys are not on its owner.
    Ask,
    /// `TRYAGAIN`: the call's keys are split between the two primaries of a migration.
    TryAgain,
}

/// One thing that happened in a shared-limiter run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum SharedRecord {
    /// A process registered: the origin the server gave it.
    Registered {
        /// Virtual time.
        t: u64,
        /// The process.
        process: u16,
        /// The shared origin it adopted, server microseconds.
        origin_us: u64,
    },
    /// A process's registration was refused: the server holds another configuration (its
    /// connect fails with `Conflict`; it tries again later, as a deployment restarts it).
    Conflicted {
        /// Virtual time.
        t: u64,
        /// The process.
        process: u16,
    },
    /// A process's registration failed `Unavailable` (no reply within the timeout, the
    /// connection refused or reset): until one succeeds, it answers each call by its fail
    /// policy, and tries again later, as a deployment restarts a process whose connect failed.
    RegistrationFailed {
        /// Virtual time.
        t: u64,
        /// The process.
        process: u16,
    },
    /// A call began.
    Start {
        /// Virtual time.
        t: u64,
        /// The caller.
        caller: u32,
        /// Its process's reading.
        local: u64,
        /// The call's deadline on that clock.
        deadline: u64,
    },
    /// A request went out.
    Sent {
        /// Virtual time.
        t: u64,
        /// Its id.
        request: u32,
        /// The caller it is for (`None`: its process's registration).
        caller: Option<u32>,
        /// The process.
        process: u16,
        /// What it asks.
        purpose: Purpose,
        /// The limit the call carries: the one its process has in force, or for a change of
        /// the limit the one asked (0 for a `SCRIPT LOAD`).
        limit: u32,
        /// The version of the limit its process knows (0: the configured limit).
        version: u32,
        /// The change of the limit it is for (an index into the scenario's), if it is for one.
        #[serde(skip_serializing_if = "Option::is_none")]
        change: Option<u32>,
        /// Whether it sends again a call already sent (after `MOVED`, `ASK`, `TRYAGAIN` or
        /// `NOSCRIPT`): the attempts it carries left their queue when the call first went,
        /// and a caller it names may have given up on them and queued another attempt since.
        #[serde(skip_serializing_if = "core::ops::Not::not")]
        again: bool,
    },
    /// The server executed a request.
    Executed {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
        /// The server's clock then, in microseconds.
        server_us: u64,
        /// Whether a script ran (not `NOSCRIPT`, not a load).
        ran_script: bool,
        /// Its reply.
        reply: ReplyDigest,
    },
    /// The script used something the simulated server does not model, and failed.
    Refused {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
        /// What it used.
        what: Box<str>,
    },
    /// The server found a key expired.
    Expired {
        /// Virtual time.
        t: u64,
        /// The key.
        key: Box<str>,
        /// The last server millisecond it lived in.
        expires_at_ms: u64,
    },
    /// The `WAIT` that followed a request's script call answered (in the scenarios whose
    /// processes wait for replicas): its reply goes back now.
    Acknowledged {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
        /// The replicas that acknowledged the connection's writes in time.
        replicas: u32,
    },
    /// A request or its reply was lost.
    Lost {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
        /// How.
        loss: Loss,
    },
    /// A request reached a paused server, which holds it until it resumes.
    Held {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
    },
    /// A reply came back after its attempt had ended (timed out): dropped.
    Late {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
    },
    /// A caller's attempt waits for a script call: it goes in the next one of its lane.
    Queued {
        /// Virtual time.
        t: u64,
        /// The caller.
        caller: u32,
    },
    /// A script call carrying callers' attempts ended on its process's connection (answered,
    /// failed or timed out), freeing its lane: on a cluster, the hash slot of its keys.
    CallEnded {
        /// Virtual time.
        t: u64,
        /// The process.
        process: u16,
        /// The slot of the call's keys on a cluster; `None` on one node.
        #[serde(skip_serializing_if = "Option::is_none")]
        slot: Option<u16>,
    },
    /// An attempt's round trip got no usable reply within the timeout.
    TimedOut {
        /// Virtual time.
        t: u64,
        /// The caller (`None`: a registration).
        caller: Option<u32>,
    },
    /// An attempt decided.
    Decided {
        /// Virtual time.
        t: u64,
        /// The caller.
        caller: u32,
        /// The process's reading when the attempt began (`now`, also `sent`).
        local: u64,
        /// The reading when it decided (`received` for a round trip).
        at: u64,
        /// The request whose reply decided it; `None` if decided locally.
        request: Option<u32>,
        /// The decision.
        decision: DecisionDigest,
    },
    /// An attempt the server could not decide ([`DecisionDigest::Unavailable`], decided just
    /// before) decided again by its process's local share, under
    /// [`FailPolicy::Local`](fixed_window_redis::FailPolicy::Local): a permit only the process
    /// counted ([`DecisionDigest::FailedOpen`]), a wait for the next window of its own grid,
    /// a rejection by it, or still [`DecisionDigest::Unavailable`] (a drain, or more than the
    /// share at once). Distinct from a decision of the local memory of full windows.
    Shared {
        /// Virtual time.
        t: u64,
        /// The caller.
        caller: u32,
        /// The process's reading it was decided at, which places it in a window of the
        /// process's own grid.
        at: u64,
        /// The local share's decision.
        decision: DecisionDigest,
        /// The version of the limit the process held when it decided (with the live limits
        /// it read together with it): which of the keys' live limits were in force in it.
        version: u32,
    },
    /// A caller began a sleep.
    Sleep {
        /// Virtual time.
        t: u64,
        /// The caller.
        caller: u32,
        /// The reading when it began.
        local: u64,
        /// The reading it sleeps until.
        until: u64,
    },
    /// A call ended.
    Finish {
        /// Virtual time.
        t: u64,
        /// The caller.
        caller: u32,
        /// The process's reading.
        local: u64,
        /// Its result.
        outcome: SharedOutcome,
        /// The event its listeners got.
        event: EventDigest,
    },
    /// A process's `set_limit` ended.
    LimitSet {
        /// Virtual time.
        t: u64,
        /// The change, an index into the scenario's
        /// [`limit_changes`](crate::shared::SharedScenario::limit_changes).
        change: u32,
        /// The process.
        process: u16,
        /// The limit asked.
        limit: u32,
        /// Its result.
        outcome: LimitOutcome,
    },
    /// A `limits` call's script run answered the live limits' text (the fifth element of its
    /// reply, which the reply's digest leaves out).
    LiveLimitsRead {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
        /// The text, as stored: `limit len:key` one after the other; `None` if none is
        /// stored.
        text: Option<Box<str>>,
    },
    /// A process's `set_key_limit` (or `clear_key_limit`) ended.
    KeyLimitSet {
        /// Virtual time.
        t: u64,
        /// The change, an index into the scenario's
        /// [`key_live`](crate::shared::SharedScenario::key_live).
        change: u32,
        /// The process.
        process: u16,
        /// The key, an index into the scenario's keys.
        key: u16,
        /// The limit asked, `None` to remove the key's live limit.
        limit: Option<u32>,
        /// Its result.
        outcome: LimitOutcome,
    },
    /// A process's cluster connection followed a redirection: `MOVED` (it read the slot
    /// table again and sends the call of `request` again, to primary `to`), `ASK` (it sends
    /// `ASKING` and the call to primary `to`, its map unchanged) or `TRYAGAIN` (it sends the
    /// call again to `to`, the primary that answered, after redis-rs's wait).
    Redirected {
        /// Virtual time.
        t: u64,
        /// The request answered so.
        request: u32,
        /// The primary it goes to now.
        to: u8,
        /// The answer followed.
        kind: RedirectKind,
    },
    /// A process took the unspent rest of its share of a key out of its hands and sent it
    /// back (`hand_back`): what the call of `request` carries.
    HandBack {
        /// Virtual time.
        t: u64,
        /// The request that carries it.
        request: u32,
        /// The process.
        process: u16,
        /// The key, an index into the scenario's.
        key: u16,
        /// The start of the window the share was leased in (server microseconds), as the
        /// process sends it.
        window_start: u64,
        /// The permits handed back.
        permits: u32,
        /// Whether it sends again a call already sent (after `MOVED`, `ASK`, `TRYAGAIN` or
        /// `NOSCRIPT`): the same permits, taken out of the process's hands once.
        #[serde(skip_serializing_if = "core::ops::Not::not")]
        again: bool,
    },
    /// A process's hand-back call of `request` ended: the permits the server took off, as
    /// the process read its reply, or `None` if it ended without one (`Unavailable`, or the
    /// process crashed).
    HandedBack {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
        /// The permits taken off.
        taken: Option<u32>,
    },
    /// A fault.
    Fault {
        /// Virtual time.
        t: u64,
        /// Which.
        fault: FaultRecord,
    },
    /// A caller peeked before its call (`peek`): what the peek answered, from the server's
    /// reply to `request` or, with no request, from its process's memory of full windows.
    Peeked {
        /// Virtual time.
        t: u64,
        /// The caller.
        caller: u32,
        /// The request whose reply answered it (an id of its batch's script call); `None`:
        /// answered locally, the window remembered full.
        request: Option<u32>,
        /// `Peek::remaining`.
        remaining: u32,
        /// `Peek::limit`.
        limit: u32,
        /// `Peek::resets_in`, in nanoseconds.
        resets_in: u128,
    },
    /// A caller's peek failed (`Unavailable`, `Conflict`, or the limit kept changing under
    /// it); its call goes on all the same.
    PeekFailed {
        /// Virtual time.
        t: u64,
        /// The caller.
        caller: u32,
        /// Whether it failed `Conflict` (else `Unavailable`, the limit having kept changing
        /// included).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        conflict: bool,
    },
    /// The server ran a peek's script call (`request`, its first id): the writes it made to
    /// the keyspace, which must be none.
    PeekRan {
        /// Virtual time.
        t: u64,
        /// The request.
        request: u32,
        /// The keys it wrote (`SET`s).
        writes: u64,
    },
    /// The keyspace when the run ended: each live key and the last millisecond it lives in.
    Keyspace {
        /// Virtual time.
        t: u64,
        /// The server's clock then.
        server_us: u64,
        /// Live keys.
        keys: Vec<(Box<str>, Option<u64>)>,
    },
}
