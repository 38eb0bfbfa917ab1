//! The trace format: a run written as JSON Lines, one [`TraceLine`] a line. The simulator
//! writes it ([`write_trace`]); the report reads it with the same types, so that a field
//! renamed here is renamed for both.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::clock_model::ClockKind;
use crate::keyed::Population;
use crate::record::{CallKind, CallOutcome, Outcome, Record};
use crate::scenario::{Scenario, period_nanos};
use crate::simulation::Run;
use crate::sweep::Provenance;

/// One line of a trace: `{"type":"…",…}`, `type` first, then the fields in the order below.
///
/// Nanosecond figures past `u64::MAX` (such as `Duration::MAX`) are written as `u64::MAX`.
/// Instants (`at`, `start`, `end`) are the clock's readings in nanoseconds.
///
/// # Examples
///
/// A line reads back as it was written.
///
/// ```
/// use fixed_window_sim::TraceLine;
///
/// let text = r#"{"type":"permitted","at":3,"caller":1,"remaining":0}"#;
/// let line: TraceLine = serde_json::from_str(text)?;
/// assert_eq!(line, TraceLine::Permitted { at: 3, caller: Some(1), remaining: 0, key: None });
/// assert_eq!(serde_json::to_string(&line)?, text);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TraceLine {
    /// The first line of a sweep's trace file: which sweep wrote it.
    Sweep(Provenance),
    /// The first line of a scenario: its configuration.
    Scenario {
        /// The scenario's id, as `--replay` takes it.
        id: String,
        /// Permits per window.
        limit: u32,
        /// The window length.
        period_ns: u64,
        /// The start of window 0: the clock's reading when the limiter was made.
        origin_ns: u64,
        /// The limiter's `max_wait`.
        max_wait_ns: u64,
        /// The shape of the clock's readings.
        clock: ClockKind,
        /// How many callers the scenario has.
        callers: usize,
        /// For a keyed limiter, how the callers were drawn over keys: `hot`, `few` or `many`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        population: Option<String>,
        /// For a keyed limiter, how many keys the callers were drawn over.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keys: Option<u64>,
    },
    /// The limiter emitted `Permitted` to its listeners.
    Permitted {
        /// The event's instant.
        at: u64,
        /// The caller being run when it was emitted, if one was.
        caller: Option<u32>,
        /// The event's `remaining`.
        remaining: u32,
        /// For a keyed limiter, the key of the call it was emitted in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<u64>,
    },
    /// The limiter emitted `Rejected` to its listeners.
    Rejected {
        /// The event's instant.
        at: u64,
        /// The caller being run when it was emitted, if one was.
        caller: Option<u32>,
        /// The event's `retry_after`.
        retry_after_ns: u64,
        /// For a keyed limiter, the key of the call it was emitted in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<u64>,
    },
    /// Right after a keyed limiter's event: the key its listeners were told, and the keys the
    /// limiter held then.
    Held {
        /// The caller being run when the event was emitted, if one was.
        caller: Option<u32>,
        /// The key the event was for.
        key: u64,
        /// The keys held (the limiter's `len()`).
        len: u64,
    },
    /// A caller peeked at the window in effect, before its attempt.
    Peeked {
        /// The reading the peek made.
        at: u64,
        /// The peeking caller.
        caller: u32,
        /// The permits it said are left.
        remaining: u32,
        /// The limit it named.
        limit: u32,
        /// The time it said the window ends in.
        resets_in_ns: u64,
    },
    /// A caller drained the window in effect.
    Drained {
        /// The reading when it drained.
        at: u64,
        /// The draining caller.
        caller: u32,
        /// The time the drain returned to the next window.
        retry_after_ns: u64,
    },
    /// The scenario changed the limit.
    LimitSet {
        /// The reading then.
        at: u64,
        /// The limit asked for.
        limit: u32,
        /// Whether the limiter took it.
        accepted: bool,
    },
    /// The scenario changed one key's own limit (`None`: took it away).
    KeyLimitSet {
        /// The reading then.
        at: u64,
        /// The key whose limit changed.
        key: u64,
        /// The limit asked for.
        limit: Option<u32>,
        /// Whether the limiter took it.
        accepted: bool,
    },
    /// A caller began a sleep on the clock.
    Sleep {
        /// The reading when the sleep began.
        at: u64,
        /// The sleeping caller.
        caller: u32,
        /// The reading the sleep aims at.
        until_ns: u64,
    },
    /// A caller's operation ran.
    Op {
        /// The reading when it ran.
        at: u64,
        /// The caller being run when it ran, if one was.
        caller: Option<u32>,
    },
    /// The simulator interrupted a caller.
    Interrupt {
        /// The interrupted caller.
        caller: u32,
        /// Whether it was sleeping at that moment.
        sleeping: bool,
    },
    /// A call ended.
    Call {
        /// The caller.
        caller: u32,
        /// The reading when the call began.
        start: u64,
        /// The reading when it ended.
        end: u64,
        /// How it ended; an operation's own panic counts as `permitted`, with `op_panicked`.
        outcome: CallOutcome,
        /// The call's own wait budget: the limiter's `max_wait`, or zero for `try_acquire`.
        max_wait_ns: u64,
        /// The entry point used (`None` for a call whose start the trace lacks).
        kind: Option<CallKind>,
        /// Whether the call was permitted and its operation then panicked.
        op_panicked: bool,
        /// For a keyed limiter, the key the call was for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<u64>,
        /// The permits the call asked for, when not one (a weighted attempt; 0 for a drain).
        #[serde(default = "one", skip_serializing_if = "is_one")]
        weight: u32,
    },
    /// A line of a type this version does not know, from a newer writer: readers skip it.
    /// It is never written.
    #[serde(other, skip_serializing)]
    Unknown,
}

impl Provenance {
    /// The trace's first line: `{"type":"sweep",…}` with every field.
    ///
    /// # Errors
    ///
    /// None in practice (strings and integers always serialise); serde's error otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_sim::{Sweep, Target};
    ///
    /// let sweep = Sweep { seed: 7, scenarios: 1, shard: (0, 1), threads: 2, target: Target::Real, check_determinism: false };
    /// let line = sweep.provenance("cargo xtask simulate", "real", 0).trace_line()?;
    /// assert!(line.starts_with(r#"{"type":"sweep","seed":7,"scenarios":1,"#));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn trace_line(&self) -> serde_json::Result<String> {
        serde_json::to_string(&TraceLine::Sweep(self.clone()))
    }
}

/// A call's weight when its line gives none.
fn one() -> u32 {
    1
}

/// Whether a call's weight is the one its line leaves out.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_one(weight: &u32) -> bool {
    *weight == 1
}

fn saturate(n: u128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Writes `run` of `scenario` to `out` as JSON Lines: a [`TraceLine::Scenario`], then one
/// line per record in the order things happened, a call's start folded into the
/// [`TraceLine::Call`] that ends it. For a keyed limiter, calls and events carry their call's
/// key, and a [`TraceLine::Held`] follows each event; the plain limiter's lines have no key.
///
/// # Errors
///
/// Any error writing to `out`.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::{Scenario, ScenarioId, Target, TraceLine, run, write_trace};
///
/// let scenario = Scenario::generate(&ScenarioId::seed(5));
/// let mut out = Vec::new();
/// write_trace(&mut out, &scenario, &run(&scenario, Target::Real)?)?;
/// let first = String::from_utf8(out)?.lines().next().unwrap().to_owned();
/// assert!(matches!(
///     serde_json::from_str(&first)?,
///     TraceLine::Scenario { id, .. } if id == scenario.id.to_string()
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[expect(
    clippy::too_many_lines,
    reason = "one arm per kind of record, each a line of the trace"
)]
pub fn write_trace(out: &mut impl Write, scenario: &Scenario, run: &Run) -> io::Result<()> {
    let keyed = scenario.keys.is_some();
    write_line(out, &header(scenario))?;
    let mut starts = vec![(0_u64, 0_u128, None, 0_u64, 1_u32); scenario.callers.len()];
    // The key of the call `caller` is in, for a keyed limiter's lines.
    let key_of = |starts: &[(u64, u128, Option<CallKind>, u64, u32)], caller: Option<u32>| {
        keyed
            .then(|| caller.and_then(|caller| starts.get(caller as usize)))
            .flatten()
            .map(|start| start.3)
    };
    for record in &run.records {
        let line = match *record {
            Record::Start {
                caller,
                at,
                kind,
                max_wait,
                key,
                weight,
                ..
            } => {
                if let Some(start) = starts.get_mut(caller as usize) {
                    *start = (at, max_wait, Some(kind), key, weight);
                }
                continue;
            }
            Record::Permitted {
                caller,
                at,
                remaining,
            } => TraceLine::Permitted {
                at,
                caller,
                remaining,
                key: key_of(&starts, caller),
            },
            Record::Rejected {
                caller,
                at,
                retry_after,
            } => TraceLine::Rejected {
                at,
                caller,
                retry_after_ns: saturate(retry_after),
                key: key_of(&starts, caller),
            },
            Record::Held { caller, key, len } => TraceLine::Held { caller, key, len },
            Record::Peeked { .. } => peeked_line(record),
            Record::Drained {
                caller,
                at,
                retry_after,
            } => TraceLine::Drained {
                at,
                caller,
                retry_after_ns: saturate(retry_after),
            },
            Record::LimitSet {
                at,
                limit,
                accepted,
                ..
            } => TraceLine::LimitSet {
                at,
                limit,
                accepted,
            },
            Record::KeyLimitSet {
                at,
                key,
                limit,
                accepted,
                ..
            } => TraceLine::KeyLimitSet {
                at,
                key,
                limit,
                accepted,
            },
            Record::Sleep { caller, at, until } => TraceLine::Sleep {
                at,
                caller,
                until_ns: saturate(until),
            },
            Record::OpRan { caller, at } => TraceLine::Op { at, caller },
            Record::Interrupt { caller, sleeping } => TraceLine::Interrupt { caller, sleeping },
            Record::Finish {
                caller,
                at,
                outcome,
                ..
            } => {
                let key = key_of(&starts, Some(caller));
                let started = starts
                    .get(caller as usize)
                    .copied()
                    .unwrap_or((at, 0, None, 0, 1));
                call_line(caller, started, at, outcome, key)
            }
        };
        write_line(out, &line)?;
    }
    Ok(())
}

/// A peek's line.
fn peeked_line(record: &Record) -> TraceLine {
    match *record {
        Record::Peeked {
            caller,
            at,
            remaining,
            limit,
            resets_in,
        } => TraceLine::Peeked {
            at,
            caller,
            remaining,
            limit,
            resets_in_ns: saturate(resets_in),
        },
        _ => TraceLine::Unknown,
    }
}

/// The trace's first line: what the scenario is.
fn header(scenario: &Scenario) -> TraceLine {
    let config = &scenario.config;
    TraceLine::Scenario {
        id: scenario.id.to_string(),
        limit: config.limit,
        period_ns: period_nanos(config.period),
        origin_ns: scenario.origin(),
        max_wait_ns: saturate(config.max_wait.as_nanos()),
        clock: scenario.clock.kind(),
        callers: scenario.callers.len(),
        population: scenario.keys.map(|keys| keys.name().to_owned()),
        keys: scenario.keys.map(Population::keys),
    }
}

/// The line of a call of `caller` that began as `started` (its reading, wait budget, kind,
/// key and weight) and ended at `at` with `outcome`; `key` for a keyed limiter's.
fn call_line(
    caller: u32,
    started: (u64, u128, Option<CallKind>, u64, u32),
    at: u64,
    outcome: Outcome,
    key: Option<u64>,
) -> TraceLine {
    let (start, max_wait, kind, _, weight) = started;
    // The operation's own panic comes after a granted permit.
    let (outcome, op_panicked) = match outcome {
        Outcome::Panicked { simulated: true } => (CallOutcome::Permitted, true),
        other => (CallOutcome::from(other), false),
    };
    TraceLine::Call {
        caller,
        start,
        end: at,
        outcome,
        max_wait_ns: saturate(max_wait),
        kind,
        op_panicked,
        key,
        weight,
    }
}

fn write_line(out: &mut impl Write, line: &TraceLine) -> io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")
}
