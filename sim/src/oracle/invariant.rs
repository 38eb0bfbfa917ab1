//! The rules the oracles check, and what a broken one is reported as.

use core::fmt;

/// A rule of the specification the oracle checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Invariant {
    /// At most `limit` permits in every window.
    WindowLimit,
    /// A new window starts with all its permits and no more: nothing carries over.
    CarryOver,
    /// Waits and `retry_after` end exactly on window boundaries from origin and period.
    Alignment,
    /// A call is rejected only when its window is full and the next one opens after its
    /// deadline (or its clock did not move across a sleep); it never waits while a permit is
    /// free.
    FalseRejection,
    /// No wait is planned past the deadline; a call whose next window opens after its
    /// deadline is rejected without sleeping; on a clock that never jumps forward, every
    /// call ends by its deadline.
    Deadline,
    /// The operation runs exactly once, right after its permit, and never without one; its
    /// own result and panic come back unchanged.
    Operation,
    /// Events match outcomes: one `Permitted` or `Rejected` per decided call, exact
    /// `remaining` and `retry_after`, error fields as configured.
    Events,
    /// An interrupted wait fails with `Interrupted`, takes no permit and emits no event.
    Interrupt,
    /// No panic escapes the limiter (the operation's own panic excepted).
    Panic,
    /// Every call ends.
    Liveness,
    /// (Shared limiter) `Unavailable`, or a permit granted by the fail-open policy, only when
    /// a fault explains it (a request or reply lost or late, a reset, a server down; for a
    /// call answered by a process whose registration failed, a fault of that registration),
    /// and each only under its own policy; a process whose link is slower than its timeout
    /// answers every call so. Under `FailPolicy::Local { share }`, the permits a process
    /// grants without the server stay within `share` per key per window of its own grid.
    Unavailable,
    /// (Shared limiter) A call counts at most one permit on the server, whatever its
    /// retries.
    DoubleCount,
    /// (Shared limiter) Every counter lives through its window and expires by its end plus
    /// the margin: no counter expires early, none lives forever.
    Expiry,
    /// (Shared limiter) The script runs without error, on the commands the simulated server
    /// models.
    Script,
    /// (Shared limiter) A process configured with another limit or period than the one the
    /// server stores is refused: its registration and every attempt get the configuration
    /// error (the stored period, limit and origin), never a permit; a process configured as
    /// stored is never refused.
    Configuration,
    /// A keyed limiter holds no more keys than its documented reclamation leaves: the keys
    /// that took a permit and have not seen, since their last permit, 64 sweeping turns (the
    /// first 64 calls of each new window) for a window after theirs.
    Memory,
}

impl Invariant {
    /// Every invariant, in report order.
    pub const ALL: [Invariant; 11] = [
        Invariant::WindowLimit,
        Invariant::CarryOver,
        Invariant::Alignment,
        Invariant::FalseRejection,
        Invariant::Deadline,
        Invariant::Operation,
        Invariant::Events,
        Invariant::Interrupt,
        Invariant::Panic,
        Invariant::Liveness,
        Invariant::Memory,
    ];

    /// The invariants the shared limiter's oracle checks, in report order.
    pub const SHARED: [Invariant; 12] = [
        Invariant::WindowLimit,
        Invariant::CarryOver,
        Invariant::Alignment,
        Invariant::FalseRejection,
        Invariant::Deadline,
        Invariant::Events,
        Invariant::Unavailable,
        Invariant::DoubleCount,
        Invariant::Expiry,
        Invariant::Script,
        Invariant::Configuration,
        Invariant::Liveness,
    ];

    /// The invariant's name in reports and `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::WindowLimit => "window_limit",
            Invariant::CarryOver => "carry_over",
            Invariant::Alignment => "alignment",
            Invariant::FalseRejection => "false_rejection",
            Invariant::Deadline => "deadline",
            Invariant::Operation => "operation",
            Invariant::Events => "events",
            Invariant::Interrupt => "interrupt",
            Invariant::Panic => "panic",
            Invariant::Liveness => "liveness",
            Invariant::Unavailable => "unavailable",
            Invariant::DoubleCount => "double_count",
            Invariant::Expiry => "expiry",
            Invariant::Script => "script",
            Invariant::Configuration => "configuration",
            Invariant::Memory => "memory",
        }
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken rule, where it was broken, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub invariant: Invariant,
    /// The caller concerned, if the rule concerns one.
    pub caller: Option<u32>,
    /// The index of the trace record where it was found.
    pub record: usize,
    /// What was seen against what the model expected.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.caller {
            Some(caller) => write!(
                f,
                "{} (caller {caller}, record {}): {}",
                self.invariant, self.record, self.detail
            ),
            None => write!(
                f,
                "{} (record {}): {}",
                self.invariant, self.record, self.detail
            ),
        }
    }
}
