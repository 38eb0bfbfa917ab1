//! A run written as JSON Lines: one line for the scenario, one per event, one per call.

use std::io::{self, Write};

use serde::Serialize;

use crate::clock_model::ClockKind;
use crate::record::{CallKind, Outcome, Record};
use crate::scenario::{Scenario, period_nanos};
use crate::simulation::Run;

fn saturate(n: u128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Writes `run` of `scenario` to `out` as JSON Lines.
///
/// The first line describes the scenario:
/// `{"type":"scenario","id":…,"limit":…,"period_ns":…,"origin_ns":…,"max_wait_ns":…,…}`.
/// Then, in the order they happened, `permitted` (`at`, `caller`, `remaining`), `rejected`
/// (`at`, `caller`, `retry_after_ns`), `sleep` (`at`, `caller`, `until_ns`), `op`, `interrupt`
/// and, when a call ends, `call` (`caller`, `start`, `end`, `outcome`, `max_wait_ns`, `kind`).
/// Nanosecond figures past `u64::MAX` (such as `Duration::MAX`) are written as `u64::MAX`.
///
/// # Errors
///
/// Any error writing to `out`.
///
/// # Examples
///
/// ```
/// use fixed_window_sim::{Scenario, ScenarioId, Target, run, write_trace};
///
/// let scenario = Scenario::generate(&ScenarioId::seed(5));
/// let mut out = Vec::new();
/// write_trace(&mut out, &scenario, &run(&scenario, Target::Real)?)?;
/// let first = String::from_utf8(out)?.lines().next().unwrap().to_owned();
/// assert!(first.starts_with(r#"{"type":"scenario""#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_trace(out: &mut impl Write, scenario: &Scenario, run: &Run) -> io::Result<()> {
    let config = &scenario.config;
    let header = Line::Scenario {
        id: scenario.id.to_string(),
        limit: config.limit,
        period_ns: period_nanos(config.period),
        origin_ns: scenario.origin(),
        max_wait_ns: saturate(config.max_wait.as_nanos()),
        clock: scenario.clock.kind(),
        callers: scenario.callers.len(),
    };
    write_line(out, &header)?;
    let mut starts = vec![(0_u64, 0_u128, None); scenario.callers.len()];
    for record in &run.records {
        let line = match *record {
            Record::Start {
                caller,
                at,
                kind,
                max_wait,
                ..
            } => {
                if let Some(start) = starts.get_mut(caller as usize) {
                    *start = (at, max_wait, Some(kind));
                }
                continue;
            }
            Record::Permitted {
                caller,
                at,
                remaining,
            } => Line::Permitted {
                at,
                caller,
                remaining,
            },
            Record::Rejected {
                caller,
                at,
                retry_after,
            } => Line::Rejected {
                at,
                caller,
                retry_after_ns: saturate(retry_after),
            },
            Record::Sleep { caller, at, until } => Line::Sleep {
                at,
                caller,
                until_ns: saturate(until),
            },
            Record::OpRan { caller, at } => Line::Op { at, caller },
            Record::Interrupt { caller, sleeping } => Line::Interrupt { caller, sleeping },
            Record::Finish {
                caller,
                at,
                outcome,
                ..
            } => {
                let (start, max_wait, kind) = starts
                    .get(caller as usize)
                    .copied()
                    .unwrap_or((at, 0, None));
                // The operation's own panic comes after a granted permit.
                let (outcome, op_panicked) = match outcome {
                    Outcome::Panicked { simulated: true } => ("permitted", true),
                    other => (other.name(), false),
                };
                Line::Call {
                    caller,
                    start,
                    end: at,
                    outcome,
                    max_wait_ns: saturate(max_wait),
                    kind,
                    op_panicked,
                }
            }
        };
        write_line(out, &line)?;
    }
    Ok(())
}

/// One line of the trace; `type` comes first, then the fields in this order.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Scenario {
        id: String,
        limit: u32,
        period_ns: u64,
        origin_ns: u64,
        max_wait_ns: u64,
        clock: ClockKind,
        callers: usize,
    },
    Permitted {
        at: u64,
        caller: u32,
        remaining: u32,
    },
    Rejected {
        at: u64,
        caller: u32,
        retry_after_ns: u64,
    },
    Sleep {
        at: u64,
        caller: u32,
        until_ns: u64,
    },
    Op {
        at: u64,
        caller: u32,
    },
    Interrupt {
        caller: u32,
        sleeping: bool,
    },
    Call {
        caller: u32,
        start: u64,
        end: u64,
        outcome: &'static str,
        max_wait_ns: u64,
        kind: Option<CallKind>,
        op_panicked: bool,
    },
}

fn write_line(out: &mut impl Write, line: &Line) -> io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")
}
