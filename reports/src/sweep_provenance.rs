//! Which sweep wrote the simulator's summary and trace, and whether it was the same one.
//!
//! The simulator writes a `sweep` object into `summary.json` and a `{"type":"sweep",…}` line
//! at the top of `trace.jsonl`. A summary and a trace left by different runs (say, a
//! one-scenario run's summary beside a 10,000-scenario sweep's trace) would otherwise be shown
//! side by side as one sweep.

use fixed_window_sim::Provenance;

use crate::sim_trace::Trace;
use serde::Deserialize;
use serde_json::Value;

/// What a sweep's summary or trace says of the sweep that wrote it. Every field is optional,
/// so that files of an older simulator still read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct SweepProvenance {
    /// The sweep's seed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Scenarios in the whole sweep.
    #[serde(default)]
    pub scenarios: Option<u64>,
    /// The shard run, as `I/N`.
    #[serde(default)]
    pub shard: Option<String>,
    /// The limiter driven: `real`, or the name of a planted bug.
    #[serde(default)]
    pub limiter: Option<String>,
    /// A command that runs the same sweep.
    #[serde(default)]
    pub command: Option<String>,
    /// When the sweep started, in seconds since the Unix epoch.
    #[serde(default)]
    pub started: Option<u64>,
}

impl SweepProvenance {
    /// The provenance a summary's JSON object records: its `sweep` object, else the seed and
    /// scenario count at its top level (an older simulator's summary).
    pub fn of_summary(summary: &serde_json::Map<String, Value>) -> Option<SweepProvenance> {
        if let Some(sweep) = summary.get("sweep") {
            return serde_json::from_value(sweep.clone()).ok();
        }
        let seed = summary.get("seed").and_then(Value::as_u64);
        let scenarios = summary.get("scenarios").and_then(Value::as_u64);
        (seed.is_some() || scenarios.is_some()).then_some(SweepProvenance {
            seed,
            scenarios,
            ..SweepProvenance::default()
        })
    }

    /// The provenance a trace records on its first line, if that is a `sweep` line.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_reports::SweepProvenance;
    ///
    /// let trace = concat!(
    ///     r#"{"type":"sweep","seed":7,"scenarios":1,"shard":"0/1","limiter":"real","command":"cargo xtask simulate --seed 7 --scenarios 1","started":0}"#, "\n",
    ///     r#"{"type":"scenario","id":"s","limit":2,"period_ns":10}"#, "\n",
    /// );
    /// let provenance = SweepProvenance::of_trace(trace).unwrap();
    /// assert_eq!((provenance.seed, provenance.scenarios), (Some(7), Some(1)));
    /// assert_eq!(SweepProvenance::of_trace(r#"{"type":"scenario"}"#), None);
    /// ```
    pub fn of_trace(trace: &str) -> Option<SweepProvenance> {
        Trace::parse(trace).sweep.map(SweepProvenance::from)
    }
}

impl From<Provenance> for SweepProvenance {
    fn from(sweep: Provenance) -> SweepProvenance {
        SweepProvenance {
            seed: Some(sweep.seed),
            scenarios: Some(sweep.scenarios),
            shard: Some(sweep.shard),
            limiter: Some(sweep.limiter),
            command: Some(sweep.command),
            started: Some(sweep.started),
        }
    }
}

/// Whether a summary and a trace come from the same sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SameSweep {
    /// Same seed, scenario count, shard and limiter: the same sweep (the simulator is
    /// deterministic, so even two runs of it wrote the same figures).
    Same,
    /// They differ, in these ways (one sentence each).
    Different(Vec<String>),
    /// One of them does not say which sweep wrote it; why.
    Unknown(String),
}

/// Compares what the summary and the trace say of their sweeps.
///
/// # Examples
///
/// ```
/// use fixed_window_reports::{SameSweep, SweepProvenance, same_sweep};
///
/// let sweep = |seed, scenarios| SweepProvenance { seed: Some(seed), scenarios: Some(scenarios), ..Default::default() };
/// assert_eq!(same_sweep(Some(&sweep(7, 10)), Some(&sweep(7, 10))), SameSweep::Same);
/// assert!(matches!(same_sweep(Some(&sweep(7, 1)), Some(&sweep(7, 10))), SameSweep::Different(_)));
/// assert!(matches!(same_sweep(Some(&sweep(7, 1)), None), SameSweep::Unknown(_)));
/// ```
pub fn same_sweep(summary: Option<&SweepProvenance>, trace: Option<&SweepProvenance>) -> SameSweep {
    let (Some(summary), Some(trace)) = (summary, trace) else {
        let which = match (summary, trace) {
            (None, None) => "neither the summary nor the trace",
            (None, Some(_)) => "the summary",
            _ => "the trace",
        };
        return SameSweep::Unknown(format!(
            "{which} does not say which sweep wrote it (a replay's trace, or an older simulator's)"
        ));
    };
    let mut differences = Vec::new();
    let mut differ = |field: &str, a: Option<String>, b: Option<String>| {
        if let (Some(a), Some(b)) = (a, b)
            && a != b
        {
            differences.push(format!("{field} {a} in the summary, {b} in the trace"));
        }
    };
    let text = |n: Option<u64>| n.map(|n| n.to_string());
    differ("seed", text(summary.seed), text(trace.seed));
    differ("scenarios", text(summary.scenarios), text(trace.scenarios));
    differ("shard", summary.shard.clone(), trace.shard.clone());
    differ("limiter", summary.limiter.clone(), trace.limiter.clone());
    if !differences.is_empty() {
        return SameSweep::Different(differences);
    }
    if [summary, trace]
        .iter()
        .any(|p| p.seed.is_none() || p.scenarios.is_none())
    {
        return SameSweep::Unknown(
            "the seed or scenario count is missing from the summary or the trace".to_owned(),
        );
    }
    SameSweep::Same
}
