//! The simulator's `trace.jsonl`: scenarios and what happened in them, read with the
//! simulator's own line types ([`TraceLine`]) and leniently: a line that cannot be read is
//! counted, not fatal.

use core::num::NonZeroU128;

use fixed_window_sim::{CallOutcome, Provenance, TraceLine};
use fixed_window_spec::Grid;

/// One scenario of a trace: its configuration, the instants of its permits and its calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The scenario's id.
    pub id: String,
    /// Permits per window.
    pub limit: u32,
    /// The window length in nanoseconds.
    pub period_ns: u64,
    /// The start of window 0 in nanoseconds.
    pub origin_ns: u64,
    /// The scenario's configured maximum wait in nanoseconds.
    pub max_wait_ns: u64,
    /// The instant of every permit, in trace order.
    pub permits: Vec<u64>,
    /// Every completed call.
    pub calls: Vec<Call>,
}

/// A call as the simulator recorded it: when it started and ended, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// When the call started, in nanoseconds.
    pub start: u64,
    /// When it returned, in nanoseconds.
    pub end: u64,
    /// How it ended.
    pub outcome: CallOutcome,
    /// The call's maximum wait in nanoseconds.
    pub max_wait_ns: u64,
}

impl Call {
    /// How long the call took, in nanoseconds (zero if its clock went backwards).
    pub fn waited_ns(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// What a trace held, and how much of it could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Which sweep wrote the trace, from its first line, if it says.
    pub sweep: Option<Provenance>,
    /// The scenarios, in trace order.
    pub scenarios: Vec<Scenario>,
    /// Lines that were not JSON, or not a line of a type the simulator writes.
    pub malformed_lines: usize,
    /// Lines of types this report does not use or does not know, or events before any
    /// scenario.
    pub skipped_lines: usize,
}

impl Trace {
    /// Reads a trace, one [`TraceLine`] per line. Lines of unknown types are skipped; lines
    /// that cannot be read are counted, not fatal.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::Trace;
    ///
    /// let trace = Trace::parse(concat!(
    ///     r#"{"type":"scenario","id":"s","limit":2,"period_ns":10,"origin_ns":0,"max_wait_ns":5,"clock":"ordinary","callers":1}"#, "\n",
    ///     r#"{"type":"permitted","at":3,"caller":0,"remaining":1}"#, "\n",
    ///     r#"{"type":"tick"}"#, "\n",
    ///     "not json\n",
    /// ));
    /// assert_eq!(trace.scenarios[0].permits, vec![3]);
    /// assert_eq!((trace.skipped_lines, trace.malformed_lines), (1, 1));
    /// ```
    pub fn parse(text: &str) -> Trace {
        let mut trace = Trace::default();
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let Ok(line) = serde_json::from_str::<TraceLine>(line) else {
                trace.malformed_lines += 1;
                continue;
            };
            match (line, trace.scenarios.last_mut()) {
                (
                    TraceLine::Scenario {
                        id,
                        limit,
                        period_ns,
                        origin_ns,
                        max_wait_ns,
                        ..
                    },
                    _,
                ) => trace.scenarios.push(Scenario {
                    id,
                    limit,
                    period_ns,
                    origin_ns,
                    max_wait_ns,
                    permits: Vec::new(),
                    calls: Vec::new(),
                }),
                (TraceLine::Permitted { at, .. }, Some(scenario)) => scenario.permits.push(at),
                (
                    TraceLine::Call {
                        start,
                        end,
                        outcome,
                        max_wait_ns,
                        ..
                    },
                    Some(scenario),
                ) => scenario.calls.push(Call {
                    start,
                    end,
                    outcome,
                    max_wait_ns,
                }),
                (TraceLine::Sweep(sweep), _) if trace.sweep.is_none() => trace.sweep = Some(sweep),
                _ => trace.skipped_lines += 1,
            }
        }
        trace
    }

    /// The scenario with the most permits, the one whose windows show the most.
    pub fn busiest(&self) -> Option<&Scenario> {
        self.scenarios
            .iter()
            .filter(|s| !s.permits.is_empty() && s.period_ns > 0)
            .max_by_key(|s| s.permits.len())
    }

    /// Every call of every scenario that could wait (a non-zero maximum wait).
    pub fn waiting_calls(&self) -> impl Iterator<Item = &Call> {
        self.scenarios
            .iter()
            .flat_map(|s| &s.calls)
            .filter(|call| call.max_wait_ns > 0)
    }
}

impl Scenario {
    /// Permits in each window from the first permit's window to the last one's, as
    /// (window index since the origin, permits). Permits before the origin count in window 0.
    pub fn permits_per_window(&self) -> Vec<(u64, u32)> {
        let grid = self.grid();
        let mut counts: std::collections::BTreeMap<u64, u32> = std::collections::BTreeMap::new();
        for &at in &self.permits {
            *counts.entry(window_index(&grid, at)).or_default() += 1;
        }
        counts.into_iter().collect()
    }

    /// The scenario's windows, as the spec defines them (a zero period read as one
    /// nanosecond, so a malformed trace still draws).
    pub fn grid(&self) -> Grid {
        let period = NonZeroU128::new(u128::from(self.period_ns)).unwrap_or(NonZeroU128::MIN);
        Grid::new(u128::from(self.origin_ns), period)
    }
}

/// The index of the window holding `at`; it never exceeds `at`, so it fits a `u64`.
pub fn window_index(grid: &Grid, at: u64) -> u64 {
    u64::try_from(grid.index_of(u128::from(at))).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use fixed_window_sim::{
        CallOutcome, Outcome, Record, Scenario as Drawn, ScenarioId, Sweep, Target, run,
        write_trace,
    };

    use super::Trace;

    /// Scenarios written by the simulator, one trace after another, read back by the report:
    /// each scenario's configuration, permits and calls are the ones the run recorded.
    #[test]
    fn a_trace_the_simulator_writes_reads_back_as_it_ran() {
        let sweep = Sweep {
            seed: 3,
            scenarios: 40,
            shard: (0, 1),
            threads: 1,
            target: Target::Real,
            check_determinism: false,
        };
        let provenance =
            sweep.provenance("cargo xtask simulate --seed 3 --scenarios 40", "real", 9);
        let mut text = provenance
            .trace_line()
            .expect("a provenance serialises")
            .into_bytes();
        text.push(b'\n');
        let mut runs = Vec::new();
        for seed in 0..40 {
            let scenario = Drawn::generate(&ScenarioId::seed(seed));
            let trace = run(&scenario, Target::Real).expect("drawn configurations are valid");
            write_trace(&mut text, &scenario, &trace).expect("writing to memory");
            runs.push((scenario, trace));
        }
        let read = Trace::parse(&String::from_utf8(text).expect("JSON is UTF-8"));
        assert_eq!(read.malformed_lines, 0);
        assert_eq!(read.sweep, Some(provenance));
        assert_eq!(read.scenarios.len(), runs.len());
        let mut other_lines = 0;
        for ((scenario, trace), got) in runs.iter().zip(&read.scenarios) {
            let config = &scenario.config;
            assert_eq!(got.id, scenario.id.to_string());
            assert_eq!(got.limit, config.limit);
            // Nanoseconds past `u64::MAX` are written as `u64::MAX`.
            let nanos = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
            assert_eq!(got.period_ns, nanos(config.period));
            assert_eq!(got.origin_ns, scenario.origin());
            assert_eq!(got.max_wait_ns, nanos(config.max_wait));
            let permits: Vec<u64> = trace
                .records
                .iter()
                .filter_map(|record| match *record {
                    Record::Permitted { at, .. } => Some(at),
                    _ => None,
                })
                .collect();
            assert_eq!(got.permits, permits, "{}", scenario.id);
            let mut starts = vec![0; scenario.callers.len()];
            let mut calls = got.calls.iter();
            for record in &trace.records {
                match *record {
                    Record::Start { caller, at, .. } => starts[caller as usize] = at,
                    Record::Finish {
                        caller,
                        at,
                        outcome,
                        ..
                    } => {
                        let call = calls.next().expect("a call line per finished call");
                        assert_eq!(call.start, starts[caller as usize]);
                        assert_eq!(call.end, at);
                        let expected = match outcome {
                            Outcome::Panicked { simulated: true } => CallOutcome::Permitted,
                            other => CallOutcome::from(other),
                        };
                        assert_eq!(call.outcome, expected);
                    }
                    Record::Rejected { .. }
                    | Record::Sleep { .. }
                    | Record::OpRan { .. }
                    | Record::Interrupt { .. }
                    | Record::Drained { .. }
                    | Record::Held { .. }
                    | Record::LimitSet { .. }
                    | Record::Peeked { .. }
                    | Record::KeyLimitSet { .. } => other_lines += 1,
                    Record::Permitted { .. } => {}
                }
            }
            assert!(calls.next().is_none(), "{}", scenario.id);
        }
        assert_eq!(read.skipped_lines, other_lines);
        assert!(read.waiting_calls().count() > 0);
    }
}
