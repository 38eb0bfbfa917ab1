//! A sweep's `summary.json`: the head every limiter's summary opens with, which says which
//! shard of which sweep it is, so that `merge` can put the shards of one sweep back together,
//! and the counts every family keeps; each family's [`Console`](crate::console::Console)
//! adds its own.
//!
//! The head's fields, under names `merge` and the documentation rely on:
//! `limiter` (`plain`, `keyed` or `shared`), `planted` (a planted bug's name, or null),
//! `seed`, `sweep_scenarios` (scenarios in the whole sweep), `shard` (`{"index", "count"}`),
//! `check_determinism`, and `sweep`, the sweep's [`Provenance`] (the same object for every
//! limiter, and the same fields as the first line of its trace); then `scenarios` (run by this shard), `calls`, `checks` (the
//! oracle's checks per rule), `coverage` (scenarios that exercised each feature),
//! `violations` (scenarios breaking each rule) and `failures`
//! (each with its `index`, `scenario`, `violations_found`, its first `violations` and a
//! `replay` line), beside the limiter's own counters.

use std::fs;
use std::path::Path;

use fixed_window_sim::{Family, Provenance, Summary, Sweep};
use serde_json::{Map, Value, json};

use crate::console::per_second;

/// Which shard of which sweep a summary is, and which run of it.
#[derive(Debug, Clone, Copy)]
struct Head<'a> {
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
    /// The command, limiter and start of the run that wrote the summary.
    pub(crate) sweep: &'a Provenance,
}

impl Head<'_> {
    /// The head's fields, to open a summary's object with.
    fn object(&self) -> Map<String, Value> {
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
        object.insert("sweep".to_owned(), json!(self.sweep));
        object
    }
}

/// Violations a summary lists per failing scenario: the replay shows the rest, and a sweep
/// of a planted bug fails thousands of scenarios with dozens each.
const VIOLATIONS_LISTED: usize = 4;

/// One failing scenario as a summary lists it: its first few violations, how many it had, and
/// `replay`, which reruns it.
fn failure(index: u64, scenario: &str, violations: &[String], replay: &str) -> Value {
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

/// The fields every family's summary holds: the head (with `provenance`, the run's), the
/// counts every family keeps, the checks, coverage, violations and failures of `config`'s
/// sweep, whose failures replay with `command`, which took `wall` seconds. The family's own
/// fields go beside them.
pub(crate) fn object<F: Family>(
    config: &Sweep<F>,
    summary: &Summary<F>,
    provenance: &Provenance,
    command: &str,
    wall: f64,
) -> Map<String, Value> {
    let target = config.target;
    let mut object = Head {
        limiter: target.limiter(),
        planted: target.planted(),
        seed: summary.seed,
        sweep_scenarios: config.scenarios,
        shard: config.shard,
        check_determinism: config.check_determinism,
        sweep: provenance,
    }
    .object();
    let failures: Vec<Value> = summary
        .failures
        .iter()
        .map(|one| {
            failure(
                one.index,
                &one.id.to_string(),
                &one.broken(),
                &format!("{command} --replay {}", target.replay_id(one)),
            )
        })
        .collect();
    let fields = json!({
        "scenarios": summary.scenarios,
        "calls": summary.calls,
        "permits": summary.permits,
        "rejections": summary.rejections,
        "waits": summary.waits,
        "events": summary.events,
        "checks": summary.checks.named(F::RULES),
        "coverage": summary.coverage.counts(),
        "violations": summary.violations,
        "failures": failures,
        // As a string: u128 does not fit every JSON reader's numbers.
        "simulated_ns": summary.simulated_ns.to_string(),
        "wall_seconds": wall,
        "calls_per_second": per_second(summary.calls, wall),
    });
    if let Value::Object(fields) = fields {
        object.extend(fields);
    }
    object
}
