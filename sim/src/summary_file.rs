//! A sweep's `summary.json`: the plain and keyed limiters' counts, and the head every
//! limiter's summary opens with, which says which shard of which sweep it is, so that
//! `merge` can put the shards of one sweep back together.
//!
//! The head's fields, under names `merge` and the documentation rely on:
//! `limiter` (`plain`, `keyed` or `shared`), `planted` (a planted bug's name, or null),
//! `seed`, `sweep_scenarios` (scenarios in the whole sweep), `shard` (`{"index", "count"}`),
//! `check_determinism`; then `scenarios` (run by this shard), `calls`, `checks` (the
//! oracle's checks per rule), `coverage` (scenarios that exercised each feature),
//! `violations` (scenarios breaking each rule) and `failures`
//! (each with its `index`, `scenario`, `violations_found`, its first `violations` and a
//! `replay` line), beside the limiter's own counters.

use std::fs;
use std::path::Path;

use fixed_window_sim::{Failure, Invariant, Provenance, Summary, Sweep};
use serde_json::{Map, Value, json};

/// Which shard of which sweep a summary is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head<'a> {
    /// `plain`, `keyed` or `shared`.
    pub(crate) limiter: &'static str,
    /// The planted bug driven, if any.
    pub(crate) planted: Option<&'a str>,
    pub(crate) seed: u64,
    /// Scenarios in the whole sweep.
    pub(crate) sweep_scenarios: u64,
    /// This shard and the number of shards.
    pub(crate) shard: (u64, u64),
    pub(crate) check_determinism: bool,
}

impl Head<'_> {
    /// The head's fields, to open a summary's object with.
    pub(crate) fn object(&self) -> Map<String, Value> {
        let mut object = Map::new();
        object.insert("limiter".to_owned(), json!(self.limiter));
        object.insert("planted".to_owned(), json!(self.planted));
        object.insert("seed".to_owned(), json!(self.seed));
        object.insert("sweep_scenarios".to_owned(), json!(self.sweep_scenarios));
        object.insert(
            "shard".to_owned(),
            json!({ "index": self.shard.0, "count": self.shard.1 }),
        );
        object.insert(
            "check_determinism".to_owned(),
            json!(self.check_determinism),
        );
        object
    }
}

/// Violations a summary lists per failing scenario: the replay shows the rest, and a sweep
/// of a planted bug fails thousands of scenarios with dozens each.
const VIOLATIONS_LISTED: usize = 4;

/// One failing scenario as a summary lists it: its first few violations, how many it had, and
/// `replay`, which reruns it.
pub(crate) fn failure(index: u64, scenario: &str, violations: &[String], replay: &str) -> Value {
    json!({
        "index": index,
        "scenario": scenario,
        "violations_found": violations.len(),
        "violations": &violations[..violations.len().min(VIOLATIONS_LISTED)],
        "replay": replay,
    })
}

/// Writes `object` as `dir/summary.json`, creating `dir`.
///
/// # Errors
///
/// What could not be created or written.
pub(crate) fn write(dir: &Path, object: Map<String, Value>) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let path = dir.join("summary.json");
    fs::write(&path, format!("{:#}\n", Value::Object(object)))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// The plain or keyed limiter's sweep, run as `command`, as its summary says it.
pub(crate) fn plain(
    config: &Sweep,
    summary: &Summary,
    command: &str,
    wall: f64,
    provenance: &Provenance,
) -> Map<String, Value> {
    let target = config.target;
    let planted = (!matches!(
        target,
        fixed_window_sim::Target::Real | fixed_window_sim::Target::Keyed
    ))
    .then(|| target.name());
    let mut object = Head {
        limiter: if target.is_keyed() { "keyed" } else { "plain" },
        planted,
        seed: summary.seed,
        sweep_scenarios: config.scenarios,
        shard: config.shard,
        check_determinism: config.check_determinism,
    }
    .object();
    let failures: Vec<Value> = summary
        .failures
        .iter()
        .map(|one| plain_failure(one, command))
        .collect();
    let fields = json!({
        "scenarios": summary.scenarios,
        "calls": summary.calls,
        "permits": summary.permits,
        "rejections": summary.rejections,
        "waits": summary.waits,
        "interrupts": summary.interrupts,
        "events": summary.events,
        "checks": summary.checks.named(&Invariant::ALL),
        "coverage": summary.coverage.counts(),
        "violations": summary.violations,
        "failures": failures,
        // As a string: u128 does not fit every JSON reader's numbers.
        "simulated_ns": summary.simulated_ns.to_string(),
        "wall_seconds": wall,
        "calls_per_second": crate::calls_per_second(summary, wall),
        "sweep": provenance,
    });
    if let Value::Object(fields) = fields {
        object.extend(fields);
    }
    if let Some(memory) = &summary.memory {
        object.insert(
            "keys".to_owned(),
            json!({
                "drawn": summary.keys,
                "most_in_a_scenario": summary.most_keys,
                "populations": summary.populations,
                "held_checked": memory.checked,
                "most_held": memory.most_held,
                "bound_then": memory.bound_then,
                "largest_bound": memory.most_bound,
                "held_at_bound": memory.at_bound,
            }),
        );
    }
    object
}

fn plain_failure(one: &Failure, command: &str) -> Value {
    let mut violations: Vec<String> = one.violations.iter().map(ToString::to_string).collect();
    if one.nondeterministic {
        violations.push(format!(
            "{}: trace differs between runs",
            fixed_window_sim::DETERMINISM
        ));
    }
    failure(
        one.index,
        &one.id.to_string(),
        &violations,
        &format!("{command} --replay {}", one.shrunk),
    )
}
