//! What the simulator writes down while a scenario runs: the trace the oracle reads.

/// Which of the limiter's entry points a simulated caller uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// `call_async(op)`: awaits the virtual clock's sleep, then runs the operation.
    CallAsync,
    /// `acquire_async()`: awaits a permit; no operation.
    AcquireAsync,
    /// `try_acquire()`: never waits.
    TryAcquire,
    /// `call_interruptible(&interrupt, op)` on a coroutine of its own, sleeping through the
    /// virtual clock's blocking sleep, which suspends the coroutine until its timer fires.
    CallBlocking,
    /// `drain()`: the window in effect counts as full until it ends; never waits, takes no
    /// permit.
    Drain,
}

impl CallKind {
    /// Whether this kind runs an operation when permitted.
    pub fn runs_operation(self) -> bool {
        matches!(self, CallKind::CallAsync | CallKind::CallBlocking)
    }

    /// Whether this kind may wait for a later window.
    pub fn may_wait(self) -> bool {
        !matches!(self, CallKind::TryAcquire | CallKind::Drain)
    }

    /// Whether this kind may ask for more or fewer than one permit (`try_acquire_n`,
    /// `acquire_n_async`).
    pub fn may_weigh(self) -> bool {
        matches!(self, CallKind::TryAcquire | CallKind::AcquireAsync)
    }
}

/// What a simulated operation does when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// Returns `Ok`.
    Succeeds,
    /// Returns an error of its own.
    Fails,
    /// Panics (with [`SimulatedPanic`](crate::SimulatedPanic)).
    Panics,
}

/// What a simulated operation returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpOutput {
    /// The operation succeeded.
    Succeeded,
    /// The operation failed with an error of its own.
    Failed,
}

/// How a simulated call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A permit was granted. `remaining` is known for the acquire entry points (it is in the
    /// `Permit`); `op` is the operation's own result for the call entry points.
    Permitted {
        /// `Permit::remaining`, where the entry point returns a permit.
        remaining: Option<u32>,
        /// The operation's output, where the entry point runs one.
        op: Option<OpOutput>,
    },
    /// The call failed with `RateLimiterError::Rejected`.
    Rejected {
        /// The error's `retry_after`, in nanoseconds (`u128` holds `Duration::MAX`).
        retry_after: u128,
        /// Whether the error's name, period and max wait are the limiter's.
        fields_match: bool,
        /// The error's limit: the one its decision used, which the oracle judges.
        limit: u32,
    },
    /// The call failed with `RateLimiterError::TooMany`: it asked for more permits than the
    /// limit.
    TooMany {
        /// Whether the error's name and requested permits are the limiter's and the call's.
        fields_match: bool,
        /// The error's limit: the one the call was refused under, which the oracle judges.
        limit: u32,
    },
    /// A drain returned.
    Drained {
        /// Its time to the next window, in nanoseconds (`u128` holds `Duration::MAX`).
        retry_after: u128,
    },
    /// The call failed with `RateLimiterError::Interrupted`.
    Interrupted,
    /// The simulator dropped the call's future while it waited.
    Cancelled,
    /// The call panicked; `simulated` says whether it was the operation's own panic.
    Panicked {
        /// Whether the payload was [`SimulatedPanic`](crate::SimulatedPanic).
        simulated: bool,
    },
    /// The scenario ended (its event budget ran out) before the call did.
    Unfinished,
}

impl Outcome {
    /// The name used in traces: `permitted`, `rejected`, `too_many`, `drained`,
    /// `interrupted`, `cancelled`, `panicked` or `unfinished`.
    pub fn name(self) -> &'static str {
        CallOutcome::from(self).name()
    }
}

/// One line of a scenario's trace, in the order things happened. Instants (`at`) are the
/// clock's readings in nanoseconds; `t` is virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Record {
    /// A call began.
    Start {
        /// The caller.
        caller: u32,
        /// The reading when the call began.
        at: u64,
        /// The entry point used.
        kind: CallKind,
        /// The call's own wait budget in nanoseconds: the limiter's `max_wait`, or zero for
        /// `try_acquire`.
        max_wait: u128,
        /// What the operation will do, if it runs.
        op: OpKind,
        /// The key the call is for (0 for every call to the plain limiter, which has one
        /// window for all).
        key: u64,
        /// The permits it asks for (1 but for weighted attempts; 0 for a drain).
        weight: u32,
    },
    /// The limiter emitted `Permitted` to its listeners.
    Permitted {
        /// The caller whose turn it was when the event was emitted, if it was anyone's.
        caller: Option<u32>,
        /// The event's instant.
        at: u64,
        /// The event's `remaining`.
        remaining: u32,
    },
    /// The limiter emitted `Rejected` to its listeners.
    Rejected {
        /// The caller whose turn it was when the event was emitted, if it was anyone's.
        caller: Option<u32>,
        /// The event's instant.
        at: u64,
        /// The event's `retry_after` in nanoseconds.
        retry_after: u128,
    },
    /// Right after a keyed limiter's `Permitted` or `Rejected` event: the key the event was
    /// for, and how many keys the limiter held then (its `len()`).
    Held {
        /// The caller whose turn it was when the event was emitted, if it was anyone's.
        caller: Option<u32>,
        /// The key the event was for, as the listener was told.
        key: u64,
        /// The keys the limiter held after the attempt that emitted the event.
        len: u64,
    },
    /// The scenario changed the limit (`set_limit`), between two events of the run.
    LimitSet {
        /// The reading then.
        at: u64,
        /// The limit asked for.
        limit: u32,
        /// What the limiter says it can count up to (`limit_ceiling`).
        ceiling: u32,
        /// Whether the limiter took it.
        accepted: bool,
    },
    /// A caller peeked (`peek()`, `peek(&key)`) at the start of its call, before its attempt:
    /// what the peek answered. A peek emits no event and changes no count.
    Peeked {
        /// The peeking caller.
        caller: u32,
        /// The reading the peek made.
        at: u64,
        /// `Peek::remaining`.
        remaining: u32,
        /// `Peek::limit`.
        limit: u32,
        /// `Peek::resets_in`, in nanoseconds (`u128` holds `Duration::MAX`).
        resets_in: u128,
    },
    /// The scenario changed one key's own limit (`set_key_limit`, or `clear_key_limit` for
    /// `None`), between two events of the run.
    KeyLimitSet {
        /// The reading then.
        at: u64,
        /// The key whose limit changed.
        key: u64,
        /// The limit asked for; `None` took the key's own limit away.
        limit: Option<u32>,
        /// What the limiter says it can count up to (`limit_ceiling`).
        ceiling: u32,
        /// Whether the limiter took it.
        accepted: bool,
    },
    /// A drain returned (it emits no event: the simulator records what it returned).
    Drained {
        /// The draining caller.
        caller: u32,
        /// The reading when it drained.
        at: u64,
        /// The time it returned to the next window, in nanoseconds.
        retry_after: u128,
    },
    /// A caller began a sleep on the clock.
    Sleep {
        /// The sleeping caller.
        caller: u32,
        /// The reading when the sleep began.
        at: u64,
        /// The reading the sleep aims at: `at` plus the requested duration, in `u128`.
        until: u128,
    },
    /// A caller's operation ran.
    OpRan {
        /// The caller whose turn it was when the operation ran, if it was anyone's.
        caller: Option<u32>,
        /// The reading when it ran.
        at: u64,
    },
    /// The simulator interrupted a caller.
    Interrupt {
        /// The interrupted caller.
        caller: u32,
        /// Whether the caller was sleeping at that moment.
        sleeping: bool,
    },
    /// A call ended.
    Finish {
        /// The caller.
        caller: u32,
        /// The reading when the call ended.
        at: u64,
        /// Virtual time when the call ended.
        t: u64,
        /// How it ended.
        outcome: Outcome,
    },
}

/// How a call ended, as a `call` line says: the name of its [`Outcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// Granted a permit.
    Permitted,
    /// Rejected.
    Rejected,
    /// Refused at once: it asked for more permits than the limit.
    TooMany,
    /// A drain, which returned.
    Drained,
    /// Interrupted while it waited.
    Interrupted,
    /// Cancelled (its future dropped) while it waited.
    Cancelled,
    /// A panic that was not the operation's own escaped it.
    Panicked,
    /// The run ended before the call did.
    Unfinished,
}

impl CallOutcome {
    /// The name a trace gives it: `permitted`, `rejected`, `too_many`, `drained`,
    /// `interrupted`, `cancelled`, `panicked` or `unfinished`.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::CallOutcome;
    ///
    /// assert_eq!(CallOutcome::Permitted.name(), "permitted");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            CallOutcome::Permitted => "permitted",
            CallOutcome::Rejected => "rejected",
            CallOutcome::TooMany => "too_many",
            CallOutcome::Drained => "drained",
            CallOutcome::Interrupted => "interrupted",
            CallOutcome::Cancelled => "cancelled",
            CallOutcome::Panicked => "panicked",
            CallOutcome::Unfinished => "unfinished",
        }
    }
}

impl From<Outcome> for CallOutcome {
    fn from(outcome: Outcome) -> CallOutcome {
        match outcome {
            Outcome::Permitted { .. } => CallOutcome::Permitted,
            Outcome::Rejected { .. } => CallOutcome::Rejected,
            Outcome::TooMany { .. } => CallOutcome::TooMany,
            Outcome::Drained { .. } => CallOutcome::Drained,
            Outcome::Interrupted => CallOutcome::Interrupted,
            Outcome::Cancelled => CallOutcome::Cancelled,
            Outcome::Panicked { .. } => CallOutcome::Panicked,
            Outcome::Unfinished => CallOutcome::Unfinished,
        }
    }
}
