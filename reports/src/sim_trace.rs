//! The simulator's `trace.jsonl`: scenarios and what happened in them, read leniently.

use serde::Deserialize;

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
    /// `permitted`, `rejected`, `interrupted` or `cancelled`.
    pub outcome: String,
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
    /// The scenarios, in trace order.
    pub scenarios: Vec<Scenario>,
    /// Lines that were not JSON, or lacked a field their type needs.
    pub malformed_lines: usize,
    /// Lines of types this report does not use, or events before any scenario.
    pub skipped_lines: usize,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Scenario {
        #[serde(deserialize_with = "id_as_text")]
        id: String,
        limit: u32,
        period_ns: u64,
        #[serde(default)]
        origin_ns: u64,
        #[serde(default)]
        max_wait_ns: u64,
    },
    Permitted {
        at: u64,
    },
    Call {
        start: u64,
        end: u64,
        outcome: String,
        #[serde(default)]
        max_wait_ns: u64,
    },
    #[serde(other)]
    Other,
}

fn id_as_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    })
}

impl Trace {
    /// Reads a trace, one JSON object per line. Lines of unknown types are skipped; lines
    /// that cannot be read are counted, not fatal.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::Trace;
    ///
    /// let trace = Trace::parse(concat!(
    ///     r#"{"type":"scenario","id":"s","limit":2,"period_ns":10,"origin_ns":0,"max_wait_ns":5}"#, "\n",
    ///     r#"{"type":"permitted","at":3,"caller":1,"remaining":1}"#, "\n",
    ///     r#"{"type":"tick"}"#, "\n",
    ///     "not json\n",
    /// ));
    /// assert_eq!(trace.scenarios[0].permits, vec![3]);
    /// assert_eq!((trace.skipped_lines, trace.malformed_lines), (1, 1));
    /// ```
    pub fn parse(text: &str) -> Trace {
        let mut trace = Trace::default();
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let Ok(line) = serde_json::from_str::<Line>(line) else {
                trace.malformed_lines += 1;
                continue;
            };
            match (line, trace.scenarios.last_mut()) {
                (
                    Line::Scenario {
                        id,
                        limit,
                        period_ns,
                        origin_ns,
                        max_wait_ns,
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
                (Line::Permitted { at }, Some(scenario)) => scenario.permits.push(at),
                (
                    Line::Call {
                        start,
                        end,
                        outcome,
                        max_wait_ns,
                    },
                    Some(scenario),
                ) => scenario.calls.push(Call {
                    start,
                    end,
                    outcome,
                    max_wait_ns,
                }),
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
        let mut counts: std::collections::BTreeMap<u64, u32> = std::collections::BTreeMap::new();
        for &at in &self.permits {
            let index = at.saturating_sub(self.origin_ns) / self.period_ns.max(1);
            *counts.entry(index).or_default() += 1;
        }
        counts.into_iter().collect()
    }
}
