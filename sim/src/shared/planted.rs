//! Planted bugs: the shared limiter with one classic distributed-rate-limiter mistake each,
//! for the oracle to catch. Each is the production script with a few lines changed, or the
//! production client step with one behaviour added; everything else is the real code.

use core::fmt;
use core::str::FromStr;
use std::sync::LazyLock;

use fixed_window_redis::SCRIPT;

/// One planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SharedPlantedBug {
    /// Count and expiry as two commands (INCR, then EXPIRE): the counter is written without
    /// an expiry, and a second round trip sets it. A client that dies (or a request lost)
    /// between the two leaves a counter that never expires.
    TwoCommands,
    /// The client's clock instead of the server's: each process sends its own reading, so
    /// skewed processes disagree on the windows.
    ClientClock,
    /// Each process aligns windows to its own origin (its registration's server time)
    /// instead of the stored one.
    OwnOrigin,
    /// A lost reply retried: the attempt is sent again, so a script that ran counts twice.
    RetryLostReply,
    /// The counter's window starts at its first hit and expires a period later, instead of
    /// on the shared grid: counts carry over across windows.
    FirstHitExpiry,
    /// The script's window boundary off by one: the instant a window starts still counts
    /// against the previous one.
    BoundaryOffByOne,
    /// The local memory of a full window kept half a period past the window's end: local
    /// rejections run late.
    MemoryPastEnd,
    /// A refused configuration ignored: a process configured apart adopts the stored origin
    /// as if it had registered, and reads each refusal of an attempt as an outage (which the
    /// fail-open policy turns into a permit).
    ConflictIgnored,
    /// A process that has no limiter (its registration failed) lets every call through,
    /// uncounted, whatever its fail policy, as a service that serves traffic while its limiter
    /// connects.
    OpenBeforeRegistration,
    /// A weighted attempt counts one permit, whatever it takes.
    WeightCountedAsOne,
    /// A drain leaves one permit in the window.
    DrainLeavesOne,
    /// A fixed origin ignored: the first process stores its own time as the origin, as if
    /// none were configured.
    FixedOriginIgnored,
    /// A change of the limit taken for the start of a window: each counter is stamped with
    /// the version of the limit it was counted under, and an attempt under a newer version
    /// takes a counter of an older one for a window past, counting afresh. The current
    /// window's count is lost at every change, so it grants its new limit on top of it.
    LimitChangeAppliedToPastWindow,
    /// The version check skipped: the script decides an attempt of a process still holding
    /// an older limit under that limit instead of telling it the new one, whether the newer
    /// version is the stored configuration's or, on a cluster, a counter's. A process with the
    /// old settings counts by them, silently (over the limit, if the change lowered it).
    OldLimitAfterChange,
    /// On a cluster, a call run on a primary that does not own its slot: the primaries serve
    /// whatever they are sent, and a process whose map is stale (it has not reconnected since
    /// a slot migrated) reads and writes the key's counter on the old primary, while the
    /// others count on the new one.
    WrongSlot,
    /// On a cluster, `MOVED` taken for an outage: the call is not sent again where the slot
    /// lives now, and its attempts end by the fail policy.
    RedirectNotFollowed,
    /// On a cluster, a coalesced batch that mixes attempts of different slots in one call:
    /// the primary refuses it (`CROSSSLOT`), and its attempts end by the fail policy.
    BatchCrossingSlots,
    /// On a cluster, `ASK` taken for an outage: while a slot migrates, a call whose keys
    /// have moved (or are new) is not sent to the primary importing them, and its attempts
    /// end by the fail policy. Only a migration in steps shows it: a slot that changes its
    /// owner at once answers `MOVED`.
    AskNotFollowed,
    /// With processes waiting for replicas, the answer of `WAIT` ignored: the client sends it
    /// after each script call, and grants the script's permit however few replicas
    /// acknowledged the count, so a failover to the replica forgets permits it granted.
    WaitIgnored,
    /// One script call in flight per process, not per lane: each batch's calls to every
    /// primary go together and the next batch waits for all of them, so the slowest primary
    /// (stalled, failing, or waiting for a stalled replica) sets the pace of every key, and
    /// an attempt on a healthy primary waits behind calls to another.
    OneCallInFlight,
    /// The local memory of full windows kept across a change of the limit: a process that
    /// learns a new limit (a raise, which may give a full window room) goes on rejecting,
    /// without asking the server, the keys it remembered full under the old one, until each
    /// window's remembered end.
    MemoryKeptAfterChange,
    /// With processes waiting for replicas, the count of `WAIT` compared off by one (`>` for
    /// `>=`): a call whose `WAIT` counted exactly the replicas asked for ends `Unreplicated`,
    /// by the fail policy, with nothing wrong.
    WaitCountOffByOne,
    /// Under `FailPolicy::Local`, the share ignored: an attempt the server could not decide
    /// gets a permit without the local limiter, as under the fail-open policy, however many
    /// the process has granted in its window.
    ShareIgnored,
    /// A connection the server refused kept for good: no new connection is made after a
    /// refusal (as redis-rs's connection manager, which reconnects after I/O errors only),
    /// so once the limiter's user was missing, every call is refused (`Denied`) although the
    /// user is back.
    NeverRecovers,
    /// Under a lease, the deadline a period late: a share is spent until it is used up, up to
    /// a period past its window's end.
    SharePastDeadline,
    /// Under a lease, the deadline measured from the reply's arrival instead of the send: the
    /// window's time left is counted from an instant after the server's reading, so the
    /// share is spent past the window's end by up to the reply's delay.
    DeadlineFromReply,
    /// Under a lease, the share not counted on the server: the script counts the caller's
    /// permits only and grants the whole share.
    ShareNotCounted,
    /// Under a lease, a share kept across a change of the limit: the client goes on spending,
    /// before its deadline, a share leased under the old limit after it learnt the new one.
    ShareKeptAfterChange,
    /// A limiter made with `start` whose registration was refused takes the refusal for a
    /// registration still to come: it answers every call by its fail policy
    /// (`Unavailable(NotRegistered)`, or an uncounted permit when it fails open) instead of
    /// `Conflict`.
    StartedRefusedByPolicy,
    /// A peek that counts: the script's read-only mode takes a permit as an attempt does
    /// (and writes the counter), answering what is left after it. Every peek uses up a permit
    /// nobody was granted.
    PeekCounts,
    /// Each process's limiter configured without its clock's resolution
    /// ([`Config::with_clock_resolution`](fixed_window_redis::Config::with_clock_resolution)),
    /// as the limiter decided before it took one: on a clock that ticks coarsely, a reading
    /// up to a tick behind rejects locally, spends a leased share and sends a caller back up
    /// to a tick past the window's end. Only a coarse clock shows it.
    ResolutionIgnored,
    /// A new client (`set_client`, a rotated password) used only once the back-off after the
    /// last refusal has passed, rather than by the next call at once: a process given the new
    /// password is still refused for up to `RENEWAL_MAX`.
    NewClientWaits,
    /// A connection answered `NOAUTH` kept for good, as a refused reconnection is kept: no new
    /// connection is made, so once the server required a password, every call is refused
    /// although the requirement was lifted.
    NoAuthKept,
    /// A failed TLS handshake kept for good: the connection layer never makes a new
    /// connection after its handshake failed, so once the server's certificate is trusted
    /// again every call still fails with the handshake's error.
    HandshakeFailureKept,
    /// Under a lease, a share's unspent rest handed back into any window: the script takes
    /// it off whatever window the counter holds, a later one's permits included.
    HandBackAnyWindow,
    /// Under a lease, a share's rest handed back and still spent: the client sends it back
    /// without taking it out of its hands, and goes on granting permits from it.
    SpendsHandedBack,
    /// A key's own limit ignored where the script decides: its attempts are decided by the
    /// limiter's limit (`ARGV[2]`) instead of the key's own (`ARGV[8]`), though the counter
    /// still records the key's. A key with a lower limit of its own is granted past it; one
    /// with a higher limit is refused with room left.
    KeyLimitIgnored,
    /// Every key's counter marked with the limit its attempts were decided by, the
    /// limiter's included: a key without a limit of its own no longer follows a change of the
    /// limiter's limit within a window counted before it, and its attempts there are refused
    /// as the key's conflict.
    EveryKeyMarked,
    /// On a cluster, a counter of an older version of the limiter's limit, written under
    /// another limit for its key than an attempt of the newer version decides it by, answered
    /// the key's conflict instead of rewritten with the attempt's limits.
    KeyConflictAcrossVersions,
    /// A peek told of a newer limit fails (`Unavailable`) at once instead of adopting it
    /// and peeking again under it: every peek that meets a change fails, though the server
    /// answered.
    PeekGivesUp,
    /// Where keys' limits change live, a process registers (and reads the configuration
    /// again) without reading the live limits, so it adopts a newer version from a reply
    /// alone, without the live limits that go with it: it decides a key by another limit than
    /// the other processes of its version.
    LiveLimitsUnread,
    /// On a cluster, a counter of an older version of the limit, in its current window,
    /// counted by an attempt of a newer version with the count only: it keeps its old
    /// settings and version (and its key's old limit). A process still on the older version
    /// (one that has not learnt a live change of a key's limit, or of the limiter's) goes on
    /// counting it by its old limit after a process of the newer version has touched it,
    /// instead of being told the change.
    OldSettingsKeptOnCluster,
    /// Under `FailPolicy::Local`, a key's local share is kept from the configuration the
    /// process was built with after a live change of the key's limit: a key lowered live
    /// still takes its old share while the server is away, one raised is refused with room.
    LocalShareBuilt,
    /// Where keys' limits change live, a peek told of a newer version is made again without
    /// reading the live limits first: its process, which adopts a version only with them,
    /// peeks again under the old one until it gives up.
    PeekLimitsUnread,
    /// A live change of a key's limit stores the limiter's limit its call carries instead of
    /// keeping the one stored: a change of the limiter's limit that its process had not learnt
    /// is undone.
    KeyLimitStoresCarried,
    /// A peek reads its key's window by the limiter's limit, not the key's own limit in force
    /// (live or configured).
    PeekIgnoresKeyLimit,
    /// A peek refused for its key's limit names the limit it proposed, not the one the
    /// key's window is counted by.
    PeekConflictNamesProposed,
}

impl SharedPlantedBug {
    /// Every planted bug.
    pub const ALL: [SharedPlantedBug; 47] = [
        SharedPlantedBug::TwoCommands,
        SharedPlantedBug::ClientClock,
        SharedPlantedBug::OwnOrigin,
        SharedPlantedBug::RetryLostReply,
        SharedPlantedBug::FirstHitExpiry,
        SharedPlantedBug::BoundaryOffByOne,
        SharedPlantedBug::MemoryPastEnd,
        SharedPlantedBug::ConflictIgnored,
        SharedPlantedBug::OpenBeforeRegistration,
        SharedPlantedBug::WeightCountedAsOne,
        SharedPlantedBug::DrainLeavesOne,
        SharedPlantedBug::FixedOriginIgnored,
        SharedPlantedBug::LimitChangeAppliedToPastWindow,
        SharedPlantedBug::OldLimitAfterChange,
        SharedPlantedBug::WrongSlot,
        SharedPlantedBug::RedirectNotFollowed,
        SharedPlantedBug::BatchCrossingSlots,
        SharedPlantedBug::AskNotFollowed,
        SharedPlantedBug::WaitIgnored,
        SharedPlantedBug::OneCallInFlight,
        SharedPlantedBug::MemoryKeptAfterChange,
        SharedPlantedBug::WaitCountOffByOne,
        SharedPlantedBug::ShareIgnored,
        SharedPlantedBug::NeverRecovers,
        SharedPlantedBug::SharePastDeadline,
        SharedPlantedBug::DeadlineFromReply,
        SharedPlantedBug::ShareNotCounted,
        SharedPlantedBug::ShareKeptAfterChange,
        SharedPlantedBug::StartedRefusedByPolicy,
        SharedPlantedBug::PeekCounts,
        SharedPlantedBug::ResolutionIgnored,
        SharedPlantedBug::NewClientWaits,
        SharedPlantedBug::NoAuthKept,
        SharedPlantedBug::HandBackAnyWindow,
        SharedPlantedBug::SpendsHandedBack,
        SharedPlantedBug::KeyLimitIgnored,
        SharedPlantedBug::HandshakeFailureKept,
        SharedPlantedBug::EveryKeyMarked,
        SharedPlantedBug::KeyConflictAcrossVersions,
        SharedPlantedBug::PeekGivesUp,
        SharedPlantedBug::LiveLimitsUnread,
        SharedPlantedBug::OldSettingsKeptOnCluster,
        SharedPlantedBug::LocalShareBuilt,
        SharedPlantedBug::PeekLimitsUnread,
        SharedPlantedBug::KeyLimitStoresCarried,
        SharedPlantedBug::PeekIgnoresKeyLimit,
        SharedPlantedBug::PeekConflictNamesProposed,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SharedPlantedBug::TwoCommands => "two-commands",
            SharedPlantedBug::ClientClock => "client-clock",
            SharedPlantedBug::OwnOrigin => "own-origin",
            SharedPlantedBug::RetryLostReply => "retry-lost-reply",
            SharedPlantedBug::FirstHitExpiry => "first-hit-expiry",
            SharedPlantedBug::BoundaryOffByOne => "boundary-off-by-one",
            SharedPlantedBug::MemoryPastEnd => "memory-past-end",
            SharedPlantedBug::ConflictIgnored => "conflict-ignored",
            SharedPlantedBug::OpenBeforeRegistration => "open-before-registration",
            SharedPlantedBug::WeightCountedAsOne => "weight-counted-as-one",
            SharedPlantedBug::DrainLeavesOne => "drain-leaves-one",
            SharedPlantedBug::FixedOriginIgnored => "fixed-origin-ignored",
            SharedPlantedBug::LimitChangeAppliedToPastWindow => {
                "limit-change-applied-to-past-window"
            }
            SharedPlantedBug::OldLimitAfterChange => "old-limit-after-change",
            SharedPlantedBug::WrongSlot => "wrong-slot",
            SharedPlantedBug::RedirectNotFollowed => "redirect-not-followed",
            SharedPlantedBug::BatchCrossingSlots => "batch-crossing-slots",
            SharedPlantedBug::AskNotFollowed => "ask-not-followed",
            SharedPlantedBug::WaitIgnored => "wait-ignored",
            SharedPlantedBug::OneCallInFlight => "one-call-in-flight",
            SharedPlantedBug::MemoryKeptAfterChange => "memory-kept-after-change",
            SharedPlantedBug::WaitCountOffByOne => "wait-count-off-by-one",
            SharedPlantedBug::ShareIgnored => "share-ignored",
            SharedPlantedBug::NeverRecovers => "never-recovers",
            SharedPlantedBug::SharePastDeadline => "share-past-deadline",
            SharedPlantedBug::DeadlineFromReply => "deadline-from-reply",
            SharedPlantedBug::ShareNotCounted => "share-not-counted",
            SharedPlantedBug::ShareKeptAfterChange => "share-kept-after-change",
            SharedPlantedBug::StartedRefusedByPolicy => "started-refused-by-policy",
            SharedPlantedBug::PeekCounts => "peek-counts",
            SharedPlantedBug::ResolutionIgnored => "resolution-ignored",
            SharedPlantedBug::NewClientWaits => "new-client-waits",
            SharedPlantedBug::NoAuthKept => "noauth-kept",
            SharedPlantedBug::HandshakeFailureKept => "handshake-failure-kept",
            SharedPlantedBug::HandBackAnyWindow => "hand-back-any-window",
            SharedPlantedBug::SpendsHandedBack => "spends-handed-back",
            SharedPlantedBug::KeyLimitIgnored => "key-limit-ignored",
            SharedPlantedBug::EveryKeyMarked => "every-key-marked",
            SharedPlantedBug::KeyConflictAcrossVersions => "key-conflict-across-versions",
            SharedPlantedBug::PeekGivesUp => "peek-gives-up",
            SharedPlantedBug::LiveLimitsUnread => "live-limits-unread",
            SharedPlantedBug::OldSettingsKeptOnCluster => "old-settings-kept-on-cluster",
            SharedPlantedBug::LocalShareBuilt => "local-share-built",
            SharedPlantedBug::PeekLimitsUnread => "peek-limits-unread",
            SharedPlantedBug::KeyLimitStoresCarried => "key-limit-stores-carried",
            SharedPlantedBug::PeekIgnoresKeyLimit => "peek-ignores-key-limit",
            SharedPlantedBug::PeekConflictNamesProposed => "peek-conflict-names-proposed",
        }
    }

    /// The script its clients load: the production one or a variant.
    pub fn script(self) -> &'static str {
        match self {
            SharedPlantedBug::TwoCommands => &TWO_COMMANDS,
            SharedPlantedBug::ClientClock => &CLIENT_CLOCK,
            SharedPlantedBug::OwnOrigin => &OWN_ORIGIN,
            SharedPlantedBug::FirstHitExpiry => &FIRST_HIT_EXPIRY,
            SharedPlantedBug::BoundaryOffByOne => &BOUNDARY_OFF_BY_ONE,
            SharedPlantedBug::WeightCountedAsOne => &WEIGHT_COUNTED_AS_ONE,
            SharedPlantedBug::DrainLeavesOne => &DRAIN_LEAVES_ONE,
            SharedPlantedBug::FixedOriginIgnored => &FIXED_ORIGIN_IGNORED,
            SharedPlantedBug::LimitChangeAppliedToPastWindow => &LIMIT_CHANGE_PAST_WINDOW,
            SharedPlantedBug::OldLimitAfterChange => &OLD_LIMIT_AFTER_CHANGE,
            SharedPlantedBug::ShareNotCounted => &SHARE_NOT_COUNTED,
            SharedPlantedBug::PeekCounts => &PEEK_COUNTS,
            SharedPlantedBug::HandBackAnyWindow => &HAND_BACK_ANY_WINDOW,
            SharedPlantedBug::KeyLimitIgnored => &KEY_LIMIT_IGNORED,
            SharedPlantedBug::EveryKeyMarked => &EVERY_KEY_MARKED,
            SharedPlantedBug::KeyConflictAcrossVersions => &KEY_CONFLICT_ACROSS_VERSIONS,
            SharedPlantedBug::OldSettingsKeptOnCluster => &OLD_SETTINGS_KEPT_ON_CLUSTER,
            SharedPlantedBug::KeyLimitStoresCarried => &KEY_LIMIT_STORES_CARRIED,
            SharedPlantedBug::PeekIgnoresKeyLimit => &PEEK_IGNORES_KEY_LIMIT,
            SharedPlantedBug::PeekConflictNamesProposed => &PEEK_CONFLICT_NAMES_PROPOSED,
            SharedPlantedBug::RetryLostReply
            | SharedPlantedBug::PeekGivesUp
            | SharedPlantedBug::LiveLimitsUnread
            | SharedPlantedBug::LocalShareBuilt
            | SharedPlantedBug::PeekLimitsUnread
            | SharedPlantedBug::MemoryPastEnd
            | SharedPlantedBug::ConflictIgnored
            | SharedPlantedBug::OpenBeforeRegistration
            | SharedPlantedBug::WrongSlot
            | SharedPlantedBug::RedirectNotFollowed
            | SharedPlantedBug::BatchCrossingSlots
            | SharedPlantedBug::AskNotFollowed
            | SharedPlantedBug::WaitIgnored
            | SharedPlantedBug::OneCallInFlight
            | SharedPlantedBug::MemoryKeptAfterChange
            | SharedPlantedBug::WaitCountOffByOne
            | SharedPlantedBug::ShareIgnored
            | SharedPlantedBug::NeverRecovers
            | SharedPlantedBug::SharePastDeadline
            | SharedPlantedBug::DeadlineFromReply
            | SharedPlantedBug::ShareKeptAfterChange
            | SharedPlantedBug::StartedRefusedByPolicy
            | SharedPlantedBug::ResolutionIgnored
            | SharedPlantedBug::NewClientWaits
            | SharedPlantedBug::NoAuthKept
            | SharedPlantedBug::HandshakeFailureKept
            | SharedPlantedBug::SpendsHandedBack => SCRIPT,
        }
    }
}

/// The script a planted client runs as its second command, with the count's keys and
/// arguments and the expiry in milliseconds last: sets the counter's (`KEYS[2]`) expiry by
/// writing its value again with `PX`, as EXPIRE would.
pub(crate) const EXPIRE_SCRIPT: &str = "\
local value = redis.call('GET', KEYS[2])
if value then
  redis.call('SET', KEYS[2], value, 'PX', ARGV[#ARGV])
end
return 1
";

/// `SCRIPT` with each `(from, to)` replaced.
///
/// # Panics
///
/// If the production script no longer contains `from`: the planted bug would silently be
/// the production script.
fn variant(replacements: &[(&str, &str)]) -> &'static str {
    let mut text = SCRIPT.to_owned();
    for (from, to) in replacements {
        assert!(
            text.contains(from),
            "the production script no longer contains {from:?}"
        );
        text = text.replace(from, to);
    }
    Box::leak(text.into_boxed_str())
}

static TWO_COMMANDS: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "redis.call('SET', key, string.format('%x:%x', start, used) .. own_mark .. tail, 'PX', ttl)",
        "redis.call('SET', key, string.format('%x:%x', start, used) .. own_mark .. tail)",
    )])
});

/// The start of the script, where a planted client's extra argument (the last, after any
/// origin and weights) is taken off `ARGV` before the real script reads it.
const FIRST_LINE: &str = "local period = tonumber(ARGV[1])";

static CLIENT_CLOCK: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[
        (
            FIRST_LINE,
            "local planted = table.remove(ARGV)\nlocal period = tonumber(ARGV[1])",
        ),
        (
            "local time = redis.call('TIME')\n  now = time[1] * 1000000 + time[2]",
            "now = tonumber(planted)",
        ),
    ])
});

static OWN_ORIGIN: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[
        (
            FIRST_LINE,
            "local own = ARGV[4] ~= 'register' and table.remove(ARGV) or nil\nlocal period = tonumber(ARGV[1])",
        ),
        (
            "  origin = o\n  if v < known then",
            "  origin = tonumber(own or o)\n  if v < known then",
        ),
        (
            "origin = origin or tonumber(string.match(stored, '^(%d+):%d+:%d+'))",
            "origin = origin or tonumber(own or string.match(stored, '^(%d+):%d+:%d+'))",
        ),
    ])
});

static FIRST_HIT_EXPIRY: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[
        (
            "    start = origin\n    if now > origin then\n      start = origin + math.floor((now - origin) / period) * period\n    end",
            "    start = now",
        ),
        (
            "local ttl = math.ceil((start + period - now) / 1000) + margin",
            "local ttl = math.max(1, math.ceil(period / 1000))",
        ),
    ])
});

static BOUNDARY_OFF_BY_ONE: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[
        (
            "if now < start + period then",
            "if now <= start + period then",
        ),
        (
            "math.floor((now - origin) / period)",
            "math.floor((now - origin - 1) / period)",
        ),
    ])
});

static WEIGHT_COUNTED_AS_ONE: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "      used = used + weight\n",
        "      used = used + math.min(weight, 1)\n",
    )])
});

static DRAIN_LEAVES_ONE: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "weight = math.max(key_limit - used, 0)\n",
        "weight = math.max(key_limit - used - 1, 0)\n",
    )])
});

static FIXED_ORIGIN_IGNORED: LazyLock<&'static str> =
    LazyLock::new(|| variant(&[("  origin = origin or now\n", "  origin = now\n")]));

/// The test that sends an attempt down the script's hot path.
const HOT_PATH: &str = "if (mode == 'acquire' or leasing) and ARGV[5] == '1' and #KEYS == 2 and (ARGV[7] or '') == '' then";

static LIMIT_CHANGE_PAST_WINDOW: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[
        (
            "local tail = ''\n",
            "local tail = ''\nlocal stamp = (not count and known > 0) and ('|' .. ARGV[8]) or ''\n",
        ),
        // Every attempt takes the full path, where the stamp is read: the bug is there.
        (HOT_PATH, "if false then"),
        (
            "    state = redis.call('GET', key)\n  end\n",
            "    state = redis.call('GET', key)\n  end
  if state then
    local bar = string.find(state, '|', 1, true)
    if (bar and string.sub(state, bar) or '') ~= stamp then
      state = nil
    elseif bar then
      state = string.sub(state, 1, bar - 1)
    end
  end\n",
        ),
        (
            "string.format('%x:%x', start, used) .. own_mark .. tail, 'PX', ttl)",
            "string.format('%x:%x', start, used) .. own_mark .. tail .. stamp, 'PX', ttl)",
        ),
        (
            "string.format('%s%x', prefix, used) .. own_mark .. tail, 'KEEPTTL')",
            "string.format('%s%x', prefix, used) .. own_mark .. tail .. stamp, 'KEEPTTL')",
        ),
    ])
});

static OLD_LIMIT_AFTER_CHANGE: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[
        (
            "  if v > known then
    -- The limit was changed since this process learnt it: it adopts the stored one and
    -- tries again.
    return { 3, l, v, o }
  end\n",
            "",
        ),
        // On a cluster, where the counter records the version: a counter of a newer one is
        // taken for one of an older, and rewritten with the process's limit.
        (
            "      if v > known then
        -- Written under a newer limit: this key's attempts are told it, and nothing is
        -- written.
        newer = { 3, l, v, o }
      else",
            "      do",
        ),
    ])
});

static HAND_BACK_ANY_WINDOW: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "if not colon or tonumber(string.sub(held, 1, colon - 1), 16) ~= leased_in then",
        "if not colon then",
    )])
});

static SHARE_NOT_COUNTED: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "          weight = math.max(math.min(math.floor((key_limit - used) / lease_divisor), lease_max), weight)\n        end\n",
        "          local counted = weight\n          weight = math.max(math.min(math.floor((key_limit - used) / lease_divisor), lease_max), weight)\n          used = used + counted - weight\n        end\n",
    )])
});

static KEY_LIMIT_IGNORED: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "if weight > 0 and used + weight > key_limit then",
        "if weight > 0 and used + weight > limit then",
    )])
});

static EVERY_KEY_MARKED: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "local key_limit = own_limit or limit\n",
        "local key_limit = own_limit or limit\nown_mark = '=' .. string.format('%.0f', key_limit)\n",
    )])
});

static KEY_CONFLICT_ACROSS_VERSIONS: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "      if counter_version == known and not live then\n",
        "      if counter_version <= known and not live then\n",
    )])
});

static OLD_SETTINGS_KEPT_ON_CLUSTER: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[
        (
            "  local start, used, prefix, stale, newer, written = nil, 0, false, false, nil, nil\n",
            "  local start, used, prefix, stale, newer, written = nil, 0, false, false, nil, nil\n  local kept = nil\n",
        ),
        // What follows the count (the key's own limit, the settings, the version) kept.
        (
            "        -- Written under an older limit: rewritten with this call's, its count kept.\n        stale = true\n",
            "        stale = true\n        kept = string.sub(state, used_end + 1)\n",
        ),
        // Written back with them, in the current window.
        (
            "string.format('%s%x', prefix, used) .. own_mark .. tail, 'KEEPTTL')",
            "string.format('%s%x', prefix, used) .. (kept or own_mark .. tail), 'KEEPTTL')",
        ),
    ])
});

static KEY_LIMIT_STORES_CARRIED: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "    -- The limiter's limit is kept: the stored one.\n    limit = l\n",
        "",
    )])
});

static PEEK_IGNORES_KEY_LIMIT: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "local key_limit = own_limit or limit\n",
        "local key_limit = own_limit or limit\nif peek then\n  key_limit = limit\nend\n",
    )])
});

static PEEK_CONFLICT_NAMES_PROPOSED: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[(
        "        newer = { -2, period, was, origin or parsed_origin() or 0 }",
        "        newer = { -2, period, peek and key_limit or was, origin or parsed_origin() or 0 }",
    )])
});

static PEEK_COUNTS: LazyLock<&'static str> = LazyLock::new(|| {
    variant(&[
        // A peek's attempt takes one permit, as an attempt of one does.
        ("      if peek then\n        weight = 0\n      end\n", ""),
        // And its count is written.
        (
            "if newer or peek or (used == read and not stale) then",
            "if newer or (used == read and not stale) then",
        ),
    ])
});

impl SharedPlantedBug {
    /// Whether its client keeps a memory of full windows of its own, apart from the
    /// protocol's, and rejects from it first.
    pub(crate) fn remembers_apart(self) -> bool {
        matches!(
            self,
            SharedPlantedBug::MemoryPastEnd | SharedPlantedBug::MemoryKeptAfterChange
        )
    }
}

impl fmt::Display for SharedPlantedBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no planted bug's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSharedPlantedBug(String);

impl fmt::Display for UnknownSharedPlantedBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = SharedPlantedBug::ALL.iter().map(|p| p.name()).collect();
        write!(
            f,
            "no planted bug is called `{}`; the shared limiter's are: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownSharedPlantedBug {}

impl FromStr for SharedPlantedBug {
    type Err = UnknownSharedPlantedBug;

    fn from_str(s: &str) -> Result<SharedPlantedBug, UnknownSharedPlantedBug> {
        SharedPlantedBug::ALL
            .into_iter()
            .find(|planted| planted.name() == s)
            .ok_or_else(|| UnknownSharedPlantedBug(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_differs_from_the_production_script() {
        for planted in SharedPlantedBug::ALL {
            let script = planted.script();
            let client_only = matches!(
                planted,
                SharedPlantedBug::RetryLostReply
                    | SharedPlantedBug::MemoryPastEnd
                    | SharedPlantedBug::ConflictIgnored
                    | SharedPlantedBug::OpenBeforeRegistration
                    | SharedPlantedBug::WrongSlot
                    | SharedPlantedBug::RedirectNotFollowed
                    | SharedPlantedBug::BatchCrossingSlots
                    | SharedPlantedBug::AskNotFollowed
                    | SharedPlantedBug::WaitIgnored
                    | SharedPlantedBug::OneCallInFlight
                    | SharedPlantedBug::MemoryKeptAfterChange
                    | SharedPlantedBug::WaitCountOffByOne
                    | SharedPlantedBug::ShareIgnored
                    | SharedPlantedBug::NeverRecovers
                    | SharedPlantedBug::SharePastDeadline
                    | SharedPlantedBug::DeadlineFromReply
                    | SharedPlantedBug::ShareKeptAfterChange
                    | SharedPlantedBug::StartedRefusedByPolicy
                    | SharedPlantedBug::ResolutionIgnored
                    | SharedPlantedBug::NewClientWaits
                    | SharedPlantedBug::NoAuthKept
                    | SharedPlantedBug::HandshakeFailureKept
                    | SharedPlantedBug::SpendsHandedBack
                    | SharedPlantedBug::PeekGivesUp
                    | SharedPlantedBug::LiveLimitsUnread
                    | SharedPlantedBug::LocalShareBuilt
                    | SharedPlantedBug::PeekLimitsUnread
            );
            assert_eq!(script == SCRIPT, client_only, "{planted}");
            assert_eq!(planted.name().parse::<SharedPlantedBug>(), Ok(planted));
        }
        assert!("nope".parse::<SharedPlantedBug>().is_err());
    }
}
